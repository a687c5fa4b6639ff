"""Turn stream events into widget updates, batched per frame.

``feed`` is called for every event and only queues (it must keep up with
thousands of deltas a second); ``flush`` applies everything queued since the
last frame in one go, merging consecutive deltas of the same kind. All model
text is sanitised here, before any widget sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from textual.widget import Widget

from tractui.core.events import (
    Done,
    Notice,
    ReclassifyAsThinking,
    RedactedThinking,
    RetryWait,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    ToolCallState,
    TurnEvent,
    UsageEvent,
)
from tractui.ui.format import duration
from tractui.ui.sanitize import StreamSanitizer, sanitize
from tractui.ui.widgets.message import AssistantMessage, interrupted_line
from tractui.ui.widgets.thinking import RedactedMarker
from tractui.ui.widgets.tool_call import ToolCallView, tool_label

_TEXT_OPS = ("thinking", "text")
STALL_AFTER = 5.0  # seconds without an event before the reply says it is waiting for the server


@dataclass(frozen=True, slots=True)
class _ToolPiece:
    key: tuple[int, int]  # (reply of the turn, index of the call in it)
    name: str | None
    arguments: str


def error_line(error: StreamError, *, live: bool = True) -> str:
    """One line for a failed reply; only a live one offers ``/retry`` (for a resumed
    one the hint could point at a reply that is no longer the last)."""
    # transient on the server's side or the way there, also when said mid-stream (not retried then)
    retryable = error.retryable or error.kind in ("cut", "stalled", "network", "overloaded", "rate_limit", "server")
    hint = " — /retry to try again" if live and retryable else ""
    status = f" ({error.status})" if error.status else ""
    return f"✗ {error.kind.replace('_', ' ')}{status}: {sanitize(error.message)}{hint}"


class ReplyRenderer:
    """Feeds one ``AssistantMessage`` from the events of one reply.

    ``tool_named`` gives the server and tool behind a call's provider name
    (``Conversation.tool_named``): a call is drawn under them from its first
    piece, as its round's states and a resume draw it."""

    def __init__(
        self,
        message: AssistantMessage,
        clock: Callable[[], float],
        *,
        tool_named: Callable[[str], tuple[str, str] | None],
    ) -> None:
        self.message = message
        self._clock = clock
        self._tool_named = tool_named
        self._ops: list[tuple[str, object]] = []
        self._thinking = StreamSanitizer()
        self._text = StreamSanitizer()
        self._retry_until: float | None = None
        self._retry: RetryWait | None = None
        self.done = False
        self._reply = 0  # which reply of the turn: a tool loop streams several into one message
        self._calls: dict[tuple[int, int], ToolCallView] = {}  # (reply, index) -> its view
        self._unanswered: list[ToolCallView] = []  # calls shown, in order, waiting for their first state
        self.backlog: dict[str, int] = {}  # characters queued since the last flush, per kind (text, thinking)
        self._last_event = clock()  # a server silent for STALL_AFTER seconds is said to be so
        self._tool_busy = False  # a call waits for consent or runs: the silence is not the server's
        self._stalled = False
        self.cancelled = False  # Esc, or the stream said it was cancelled
        self.failed = False  # the stream ended in an error (what the messages held meanwhile wait on)
        self._finishing = False  # its last flush has begun: a note queued now would not be drawn

    @property
    def pending(self) -> bool:
        return bool(self._ops)

    def feed(self, event: TurnEvent) -> None:
        ops = self._ops
        self._last_event = self._clock()
        if self._stalled:
            self._stalled = False
            ops.append(("unstalled", None))
        match event:  # the commonest first: this runs for every delta
            case TextDelta():
                self._queue_text("text", self._text.feed(event.text))
            case ThinkingDelta():
                self._queue_text("thinking", self._thinking.feed(event.text))
            case ThinkingEnd():
                ops.append(("end", None))
            case ReclassifyAsThinking():
                ops.append(("reclassify", None))
            case RedactedThinking():
                ops.append(("redacted", None))
            case ToolCallDelta():
                ops.append(("tool", _ToolPiece((self._reply, event.index), event.name, event.arguments)))
            case ToolCallState():
                self._tool_busy = event.status in ("waiting", "running")
                ops.append(("tool_state", event))
            case RetryWait():
                ops.append(("retry", event))
            case Notice():
                ops.append(("progress" if event.progress else "notice", f"ℹ {sanitize(event.message)}"))
            case StreamError():
                if event.kind == "cancelled":
                    self.cancelled = True
                    ops.append(("interrupted", None))
                else:
                    self.failed = True
                    ops.append(("error", error_line(event)))
            case Done():
                self.done = True
                self._reply += 1
            case ThinkingSignature():
                if event.metadata.get("source_field") == "thinking":  # a block with no visible thought
                    ops.append(("omitted", None))  # (Claude's display "omitted"): say it is there
            case UsageEvent():  # for the store and the gauge, nothing to draw
                pass
            case unhandled:
                assert_never(unhandled)

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

    def note(self, line: Widget) -> bool:
        """Draw ``line`` (a note of tractui's) in the reply, after the events fed before it
        (``AssistantMessage.note``); False once the reply is finishing, too late to draw it."""
        if self._finishing:
            return False
        self._ops.append(("note", line))
        return True

    def interrupted(self) -> None:
        """The user cancelled: what arrived stands, marked. Not while a call waits or runs: the
        reply had arrived whole, and its calls are drawn cancelled, as the history holds them
        (a resumed session draws no such line)."""
        self.cancelled = True
        if not self._tool_busy:
            self._ops.append(("interrupted", None))

    async def flush(self) -> None:
        ops, self._ops = self._ops, []
        self.backlog = {}
        message = self.message
        for kind, payload in ops:
            if self._retry is not None and kind in _TEXT_OPS:
                self._retry = None
                await message.clear_statuses("retry")
            if kind in _TEXT_OPS:
                await message.clear_statuses("progress")
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
            elif kind == "omitted":
                await message.redacted(RedactedMarker.OMITTED)
            elif kind == "tool":
                assert isinstance(payload, _ToolPiece)
                await self._tool_delta(payload)
            elif kind == "tool_state":
                assert isinstance(payload, ToolCallState)
                await self._tool_state(payload)
            elif kind == "retry":
                assert isinstance(payload, RetryWait)
                self._retry = payload
                self._retry_until = self._clock() + payload.seconds
                await self.tick()
            elif kind == "unstalled":
                await message.clear_statuses("stall")
            elif kind == "progress":
                await message.set_status(str(payload), "progress")
            elif kind == "notice":
                await message.clear_statuses("progress")
                await message.set_status(str(payload), "notice")
            elif kind == "error":
                message.end_thinking()
                await message.set_status(str(payload), "error")
            elif kind == "interrupted":
                message.end_thinking()
                await message.set_status(interrupted_line(message.parts), "interrupted")
            elif kind == "note":
                assert isinstance(payload, Widget)
                await message.note(payload)

    async def _tool_delta(self, piece: _ToolPiece) -> None:
        view = self._calls.get(piece.key)
        if view is None:
            named = self._tool_named(piece.name) if piece.name else None
            label = tool_label(*named) if named is not None else piece.name or "tool"
            view = self._calls[piece.key] = await self.message.tool_call(sanitize(label))
            self._unanswered.append(view)
        if piece.arguments:
            view.add_arguments(sanitize(piece.arguments))

    async def _tool_state(self, state: ToolCallState) -> None:
        """A call moved on: its view is the one with its id, else the oldest not yet moved
        (the loop runs the calls in the order they were made)."""
        view = next((v for v in self._calls.values() if v.call_id == state.call_id), None)
        if view is None:
            if self._unanswered:
                view = self._unanswered.pop(0)
            else:  # a call the stream never showed: show it now
                view = await self.message.tool_call(sanitize(state.tool or state.call_id))
            view.call_id = state.call_id
        # a call no tool answers (not offered) is named as the model named it, as a resume draws it
        label = tool_label(state.server, state.tool) if state.server and state.tool else state.tool
        view.update_state(state.status, label=sanitize(label), result=sanitize(state.result), took=state.duration)

    async def tick(self) -> None:
        """Refresh the live retry countdown, or say the server has gone quiet (called about once a second)."""
        wait = self._retry
        if wait is None or self._retry_until is None:
            await self._stall_line()
            return
        left = max(0.0, self._retry_until - self._clock())
        reason = sanitize(wait.reason) or "provider busy"
        text = f"⟳ {reason} — retrying in {duration(left + 0.999)} (attempt {wait.attempt}/{wait.max_attempts})"
        await self.message.set_status(text, "retry")

    async def _stall_line(self) -> None:
        quiet = self._clock() - self._last_event
        if self._tool_busy or quiet < STALL_AFTER:
            return
        self._stalled = True
        await self.message.set_status(f"⏳ waiting for the server · {duration(quiet)} · Esc cancels", "stall")

    async def finish(self) -> None:
        self._finishing = True
        self._text.flush()
        self._thinking.flush()
        await self.flush()
        if self._retry is not None:
            self._retry = None
        await self.message.clear_statuses("retry", "progress", "stall")
        await self.message.finish()
