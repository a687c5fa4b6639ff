"""How earlier turns' thinking goes back to providers that sign it.

Anthropic, Gemini and the OpenAI Responses API hand out signatures or opaque
payloads with their thinking and verify them when the thinking comes back.
A signature is only valid for the provider and model that produced it
(Anthropic answers "Invalid signature in thinking block" otherwise), so the
rule, shared by the three request builders, is:

* ``reasoning.includeInContext`` false: no thinking is sent (the compile step
  already removed it).
* ``reasoning.format`` ``native``: thinking stamped with the same provider and
  model goes back natively, signature and all; any other thinking goes back
  as a plain ``<thinking>`` text block in its place; hidden (redacted or
  encrypted) thinking from elsewhere is dropped, as it cannot be read.
* ``reasoning.format`` ``field``: these APIs have no reasoning field, so all
  readable thinking goes back as ``<thinking>`` text and no signature is sent.

The current turn (everything after the last user message: a tool loop in
progress) is different: its thinking goes back whatever ``includeInContext``
and ``format`` say, natively when it is this provider's own, because the
providers reject or degrade a tool loop whose steps lost their thinking.

Never a request the provider will reject for a foreign signature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from tractui.core.content import Content, ThinkingBlock
from tractui.core.settings import Settings

Route = Literal["native", "text", "drop"]


def same_origin(content: Content, provider: str, model: str) -> bool:
    """True when ``content`` was produced by exactly this provider and model."""
    meta = content.metadata
    return meta.get("provider") == provider and meta.get("model") == model


def current_turn_start(messages: Sequence[Content]) -> int:
    """Where a tool loop in progress begins: the first message after the last user
    message, once tool results follow it; ``len(messages)`` when no loop is open."""
    start = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].speaker == "human":
            start = index + 1
            break
    return start if any(m.speaker == "tool" for m in messages[start:]) else len(messages)


def route_thinking(block: ThinkingBlock, native_ok: bool, settings: Settings, *, current_turn: bool = False) -> Route:
    """Where one thinking block goes: natively, as text, or nowhere."""
    if current_turn:
        if native_ok:
            return "native"
        return "drop" if block.is_hidden or not block.thought.strip() else "text"
    if not settings.view.reasoning_include_in_context:
        return "drop"
    if native_ok and settings.view.reasoning_format == "native":
        return "native"
    if block.is_hidden or not block.thought.strip():
        return "drop"
    return "text"


def thinking_as_text(block: ThinkingBlock) -> str:
    """A foreign thinking block as plain text the model can read."""
    return f"<thinking>\n{block.thought}\n</thinking>"
