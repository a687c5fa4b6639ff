"""Fold a stream of events into the neutral ``Content`` of one assistant reply.

Used by the conversation loop (to commit and to flush partial replies), by
print mode and by the provider tests (a recording replays to its blocks).
Appends are amortised: text pieces are kept in lists and joined on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tractui.core.content import (
    Content,
    SourceField,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from tractui.core.events import (
    Done,
    ReclassifyAsThinking,
    RedactedThinking,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    UsageEvent,
)


@dataclass
class _Part:
    kind: str  # "thinking" | "text" | "redacted" | "tool"
    pieces: list[str] = field(default_factory=list)
    source_field: SourceField = "reasoning_content"
    signature: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    closed: bool = False
    tool_index: int = -1
    tool_id: str = ""
    tool_name: str = ""


class MessageAssembler:
    """Accumulates one reply; ``content()`` may be called at any time (partial flushes)."""

    def __init__(self) -> None:
        self._parts: list[_Part] = []
        self._tools: dict[int, _Part] = {}
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.error: StreamError | None = None
        self.malformed_lines = 0
        self.response_model: str | None = None
        self.reply_metadata: dict[str, Any] = {}
        self.version = 0  # bumps on every change, so flushers can skip no-ops

    # -- feeding -----------------------------------------------------------
    def feed(self, event: StreamEvent) -> None:
        self.version += 1
        if isinstance(event, TextDelta):
            self._append("text", event.text, "reasoning_content")
        elif isinstance(event, ThinkingDelta):
            self._append("thinking", event.text, event.source_field)
        elif isinstance(event, ThinkingEnd):
            last = self._last("thinking")
            if last is not None:
                last.closed = True
                if event.unterminated:
                    last.metadata["unterminated"] = True
        elif isinstance(event, ReclassifyAsThinking):
            self._reclassify(event.source_field)
        elif isinstance(event, ThinkingSignature):
            self._sign(event)
        elif isinstance(event, RedactedThinking):
            self._parts.append(
                _Part(
                    "redacted",
                    source_field=event.source_field,
                    metadata={"data": event.data, **event.metadata},
                    closed=True,
                )
            )
        elif isinstance(event, ToolCallDelta):
            self._tool(event)
        elif isinstance(event, UsageEvent):
            self.usage = event.usage
        elif isinstance(event, Done):
            self.finish_reason = event.finish_reason
            self.malformed_lines = event.malformed_lines
            self.response_model = event.response_model
            self.reply_metadata = dict(event.reply_metadata)
        elif isinstance(event, StreamError):
            self.error = event
        else:
            self.version -= 1

    def _last(self, kind: str) -> _Part | None:
        for part in reversed(self._parts):
            if part.kind == kind:
                return part
        return None

    def _append(self, kind: str, text: str, source: SourceField) -> None:
        if not text:
            return
        tail = self._parts[-1] if self._parts else None
        if (
            tail is not None
            and tail.kind == kind
            and not tail.closed
            and (kind == "text" or tail.source_field == source)
        ):
            tail.pieces.append(text)
        else:
            self._parts.append(_Part(kind, [text], source_field=source))

    def _reclassify(self, source: SourceField) -> None:
        moved = [p for p in self._parts if p.kind in ("text", "thinking")]
        text = "".join("".join(p.pieces) for p in moved)
        rest = [p for p in self._parts if p.kind not in ("text", "thinking")]
        self._parts = [_Part("thinking", [text] if text else [], source_field=source), *rest]

    def _sign(self, event: ThinkingSignature) -> None:
        if event.metadata.get("target") == "tool_call" and self._tools:
            tool = self._tools[max(self._tools)]
            tool.metadata["thought_signature"] = event.signature
            return
        last = self._parts[-1] if self._parts else None
        if last is not None and last.kind == "thinking" and not (last.closed and last.signature):
            if event.signature is not None:
                last.signature = (last.signature or "") + event.signature
            last.metadata.update({k: v for k, v in event.metadata.items() if k != "target"})
            return
        # a signature with no visible thought (hidden reasoning, Gemini signed text)
        self._parts.append(
            _Part(
                "thinking",
                source_field=event.metadata.get("source_field", "thought"),
                signature=event.signature,
                metadata={k: v for k, v in event.metadata.items() if k not in ("target", "source_field")},
                closed=True,
            )
        )

    def _tool(self, event: ToolCallDelta) -> None:
        part = self._tools.get(event.index)
        if part is None:
            part = _Part("tool", tool_index=event.index)
            self._tools[event.index] = part
            self._parts.append(part)
        if event.id:
            part.tool_id = event.id
        if event.name:
            part.tool_name += event.name if not part.tool_name else ""
        if event.arguments:
            part.pieces.append(event.arguments)
        part.metadata.update(event.metadata)

    # -- reading -----------------------------------------------------------
    @property
    def text(self) -> str:
        return "".join("".join(p.pieces) for p in self._parts if p.kind == "text")

    @property
    def reasoning(self) -> str:
        return "".join("".join(p.pieces) for p in self._parts if p.kind == "thinking")

    def content(self, metadata: dict[str, Any] | None = None) -> Content:
        blocks: list[Any] = []
        for part in self._parts:
            if part.kind == "text":
                blocks.append(TextBlock(text="".join(part.pieces)))
            elif part.kind == "thinking":
                blocks.append(
                    ThinkingBlock(
                        thought="".join(part.pieces),
                        source_field=part.source_field,
                        signature=part.signature,
                        provider_metadata=dict(part.metadata),
                    )
                )
            elif part.kind == "redacted":
                blocks.append(
                    ThinkingBlock(
                        thought="",
                        is_hidden=True,
                        source_field=part.source_field,
                        provider_metadata=dict(part.metadata),
                    )
                )
            else:
                blocks.append(
                    ToolCallBlock(
                        id=part.tool_id or f"call_{part.tool_index}",
                        name=part.tool_name,
                        arguments="".join(part.pieces),
                        provider_metadata=dict(part.metadata),
                    )
                )
        return Content(speaker="ai", blocks=blocks, metadata={**(metadata or {}), **self.reply_metadata})
