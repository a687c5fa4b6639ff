"""Turn stream events into widget updates, batched per frame.

``feed`` is called for every event and only queues (it must keep up with
thousands of deltas a second); ``flush`` applies everything queued since the
last frame in one go, merging consecutive deltas of the same kind. All model
text is sanitised here, before any widget sees it.
"""

from __future__ import annotations

from collections.abc import Callable

from tractui.core.events import (
    Done,
    Notice,
    ReclassifyAsThinking,
    RedactedThinking,
    RetryWait,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolCallDelta,
)
from tractui.ui.format import duration
from tractui.ui.sanitize import StreamSanitizer, sanitize
from tractui.ui.widgets.message import INTERRUPTED, AssistantMessage

_TEXT_OPS = ("thinking", "text")


def error_line(error: StreamError, *, live: bool = True) -> str:
    """One line for a failed reply; only a live one offers ``/retry`` (for a resumed
    one the hint could point at a reply that is no longer the last)."""
    retryable = error.retryable or error.kind in ("cut", "stalled", "network")
    hint = " — /retry to try again" if live and retryable else ""
    status = f" ({error.status})" if error.status else ""
    return f"✗ {error.kind.replace('_', ' ')}{status}: {sanitize(error.message)}{hint}"


class ReplyRenderer:
    """Feeds one ``AssistantMessage`` from the events of one reply."""

    def __init__(self, message: AssistantMessage, clock: Callable[[], float]) -> None:
        self.message = message
        self._clock = clock
        self._ops: list[tuple[str, object]] = []
        self._thinking = StreamSanitizer()
        self._text = StreamSanitizer()
        self._retry_until: float | None = None
        self._retry: RetryWait | None = None
        self.done = False
        self.tool_names: dict[int, str] = {}
        self.backlog: dict[str, int] = {}  # characters queued since the last flush, per kind (text, thinking)

    @property
    def pending(self) -> bool:
        return bool(self._ops)

    def feed(self, event: StreamEvent) -> None:
        ops = self._ops
        if isinstance(event, TextDelta):
            self._queue_text("text", self._text.feed(event.text))
        elif isinstance(event, ThinkingDelta):
            self._queue_text("thinking", self._thinking.feed(event.text))
        elif isinstance(event, ThinkingEnd):
            ops.append(("end", None))
        elif isinstance(event, ReclassifyAsThinking):
            ops.append(("reclassify", None))
        elif isinstance(event, RedactedThinking):
            ops.append(("redacted", None))
        elif isinstance(event, ToolCallDelta):
            if event.name and event.index not in self.tool_names:
                self.tool_names[event.index] = event.name
                ops.append(("tool", sanitize(event.name)))
        elif isinstance(event, RetryWait):
            ops.append(("retry", event))
        elif isinstance(event, Notice):
            ops.append(("notice", f"ℹ {sanitize(event.message)}"))
        elif isinstance(event, StreamError):
            if event.kind == "cancelled":
                ops.append(("interrupted", None))
            else:
                ops.append(("error", error_line(event)))
        elif isinstance(event, Done):
            self.done = True

    def _queue_text(self, kind: str, text: str) -> None:
        if not text:
            return
        self.backlog[kind] = self.backlog.get(kind, 0) + len(text)
        ops = self._ops
        if ops and ops[-1][0] == kind:
            pieces = ops[-1][1]
            pieces.append(text)  # type: ignore[attr-defined]
        else:
            ops.append((kind, [text]))

    def interrupted(self) -> None:
        """The user cancelled: what arrived stands, marked."""
        self._ops.append(("interrupted", None))

    async def flush(self) -> None:
        ops, self._ops = self._ops, []
        self.backlog = {}
        message = self.message
        for kind, payload in ops:
            if self._retry is not None and kind in _TEXT_OPS:
                self._retry = None
                await message.clear_retry()
            if kind == "thinking":
                view = await message.thinking()
                await view.append("".join(payload))  # type: ignore[arg-type]
            elif kind == "text":
                answer = await message.answer()
                await answer.write("".join(payload))  # type: ignore[arg-type]
            elif kind == "end":
                message.end_thinking()
            elif kind == "reclassify":
                await message.reclassify_as_thinking()
            elif kind == "redacted":
                await message.redacted()
            elif kind == "tool":
                await message.tool_call(str(payload))
            elif kind == "retry":
                assert isinstance(payload, RetryWait)
                self._retry = payload
                self._retry_until = self._clock() + payload.seconds
                await self.tick()
            elif kind == "notice":
                await message.set_status(str(payload), "notice")
            elif kind == "error":
                message.end_thinking()
                await message.set_status(str(payload), "error")
            elif kind == "interrupted":
                message.end_thinking()
                await message.set_status(INTERRUPTED, "interrupted")

    async def tick(self) -> None:
        """Refresh the live retry countdown (called about once a second)."""
        wait = self._retry
        if wait is None or self._retry_until is None:
            return
        left = max(0.0, self._retry_until - self._clock())
        reason = sanitize(wait.reason) or "provider busy"
        text = f"⟳ {reason} — retrying in {duration(left + 0.999)} (attempt {wait.attempt}/{wait.max_attempts})"
        await self.message.set_status(text, "retry")

    async def finish(self) -> None:
        self._text.flush()
        self._thinking.flush()
        await self.flush()
        if self._retry is not None:
            self._retry = None
            await self.message.clear_retry()
        await self.message.finish()
