"""Stream events: what a provider's stream turns into, one neutral vocabulary.

Providers yield these; the tag extractor yields the first three; the
conversation loop and the UI consume them. Plain frozen dataclasses: they are
created thousands of times a second on the streaming hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from tractui.core.content import SourceField, Usage


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning text, streamed live."""

    text: str
    source_field: SourceField = "think_tags"


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the visible answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ReclassifyAsThinking:
    """Everything emitted as text so far in this message was really thinking.

    Emitted by the tag extractor when ``</think>`` arrives with no opening tag
    (the chat template put ``<think>`` in the prompt).
    """

    source_field: SourceField = "think_tags"


@dataclass(frozen=True, slots=True)
class ThinkingEnd:
    """The current thinking block is finished (a boundary between blocks).

    ``unterminated`` is set when a ``<think>`` block was still open at the end
    of the stream.
    """

    unterminated: bool = False


@dataclass(frozen=True, slots=True)
class ThinkingSignature:
    """Signature or opaque payload for the current thinking block.

    Anthropic ``signature_delta``, Gemini ``thoughtSignature``, Responses
    ``encrypted_content``; ``metadata`` carries provider specifics (item ids).
    """

    signature: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RedactedThinking:
    """Thinking the provider encrypted: kept opaque, never shown as text."""

    data: str
    source_field: SourceField = "thinking"
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call; ``index`` groups the pieces of one call."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Normalised usage (see ``Usage`` for the one meaning every provider maps to)."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class RetryWait:
    """The provider will retry after ``seconds`` (429, 5xx, overloaded)."""

    seconds: float
    attempt: int
    max_attempts: int
    reason: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should read once (e.g. temperature not sent while thinking).

    A ``progress`` notice is a step of work under way (a compaction's summary
    call): the next one replaces it, and it is gone once the work ends. ``spent``
    is what the work it reports cost (a compaction's summary calls), which the
    turn's usage includes.
    """

    message: str
    progress: bool = False
    spent: Usage | None = None


@dataclass(frozen=True, slots=True)
class StepLimit(Notice):
    """The tool loop stopped at ``tools.maxSteps`` (``rounds`` rounds of calls) before the model
    answered: a notice like any other to the app, which the user answers by sending a message;
    print mode, which cannot, tells it as the turn's failure."""

    rounds: int = 0


ErrorKind = Literal[
    "auth",
    "missing_key",
    "rate_limit",
    "overloaded",
    "server",
    "bad_request",
    "context_length",
    "not_found",
    "network",
    "stalled",
    "cut",
    "protocol",
    "cancelled",
    "storage",  # the history could not be written (disk full): the message was not sent
]


@dataclass(frozen=True, slots=True)
class StreamError:
    """The stream failed; what arrived before it stands."""

    kind: ErrorKind
    message: str
    status: int | None = None
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class Done:
    """The stream finished; ``malformed_lines`` counts skipped unparseable SSE lines."""

    finish_reason: str | None = None
    malformed_lines: int = 0
    response_model: str | None = None
    reply_metadata: dict[str, Any] = field(default_factory=dict)  # kept with the reply, echoed as the protocol asks


KEPT = "; what arrived is kept"
"""Ends the message of a ``StreamError`` that cut a reply: its partial text stands. A summary call
keeps nothing of a cut reply, so compaction takes it off."""

# said under a reply the provider cut at its output limit: it looks finished, and is not
OUTPUT_LIMIT = "the reply stopped at its output limit; what arrived is kept, and /set max-tokens N allows a longer one"
# each protocol's word for a reply cut at its output limit: chat's, Anthropic's, Gemini's, Responses'
OUTPUT_LIMIT_REASONS = frozenset({"length", "max_tokens", "MAX_TOKENS", "max_output_tokens"})


def cut_at_output_limit(finish_reason: str | None) -> bool:
    """Whether the provider ended the reply because it reached its output limit, not its end."""
    return finish_reason in OUTPUT_LIMIT_REASONS


ToolStatus = Literal[
    "waiting", "running", "done", "error", "denied", "cancelled", "not_run", "timeout", "unknown", "interrupted"
]


@dataclass(frozen=True, slots=True)
class ToolCallState:
    """A tool call of the reply moved on: waiting for consent, running, or finished.

    Not a provider event: the conversation's tool loop emits it between the
    replies of a turn. ``result`` is what the model receives (finished states).
    """

    call_id: str
    status: ToolStatus
    server: str = ""
    tool: str = ""
    result: str = ""
    duration: float = 0.0


StreamEvent: TypeAlias = (
    ThinkingDelta
    | TextDelta
    | ReclassifyAsThinking
    | ThinkingEnd
    | ThinkingSignature
    | RedactedThinking
    | ToolCallDelta
    | UsageEvent
    | RetryWait
    | Notice
    | StreamError
    | Done
)

ExtractorEvent: TypeAlias = ThinkingDelta | TextDelta | ReclassifyAsThinking | ThinkingEnd

# what a conversation turn streams: the provider's events, and its tool loop's
TurnEvent: TypeAlias = StreamEvent | ToolCallState
