"""How earlier turns' thinking goes back to providers that sign it.

Which thinking a request holds is the compile step's decision (``store/compile.py``:
``reasoning.includeInContext`` false strips it from earlier turns, a tool loop in
progress keeps its own); this module decides how the thinking present goes back.
Anthropic, Gemini and the OpenAI Responses API hand out signatures or opaque
payloads with their thinking and verify them when the thinking comes back.
A signature is only valid for the provider and model that produced it
(Anthropic answers "Invalid signature in thinking block" otherwise), so the
rule, shared by the three request builders, is:

* ``reasoning.format`` ``native``: thinking stamped with the same provider and
  model goes back natively, signature and all; any other thinking goes back
  as a plain ``<thinking>`` text block in its place; hidden (redacted or
  encrypted) thinking from elsewhere is dropped, as it cannot be read.
* ``reasoning.format`` ``field``: these APIs have no reasoning field, so all
  readable thinking goes back as ``<thinking>`` text and no signature is sent.

The current turn (everything after the last user message: a tool loop in
progress, which a message typed after a stopped call goes on) is different: its
thinking goes back whatever ``format`` says, natively when it is this provider's
own, because the providers reject or degrade a tool loop whose steps lost their thinking.

Never a request the provider will reject for a foreign signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from tractui.core.content import Content, ThinkingBlock
from tractui.core.reasoning import open_loop_start
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter

Route = Literal["native", "text", "drop"]


def same_origin(content: Content, provider: str, model: str) -> bool:
    """True when ``content`` was produced by exactly this provider and model."""
    meta = content.metadata
    return meta.get("provider") == provider and meta.get("model") == model


def current_turn_start(messages: Sequence[Content]) -> int:
    """Where a tool loop in progress begins (``open_loop_start``); ``len(messages)`` when none is open."""
    return open_loop_start(lambda i: messages[i].speaker, len(messages))


def route_thinking(block: ThinkingBlock, native_ok: bool, settings: Settings, *, current_turn: bool = False) -> Route:
    """Where one thinking block the request holds goes: natively, as text, or nowhere (hidden
    or blank thinking that cannot go as text)."""
    if current_turn:
        if native_ok:
            return "native"
        return "drop" if block.is_hidden or not block.thought.strip() else "text"
    if native_ok and settings.view.reasoning_format == "native":
        return "native"
    if block.is_hidden or not block.thought.strip():
        return "drop"
    return "text"


def thinking_as_text(block: ThinkingBlock) -> str:
    """A foreign thinking block as plain text the model can read."""
    return f"<thinking>\n{block.thought}\n</thinking>"


def routed_thinking_tokens(
    message: Content,
    native_ok: Callable[[ThinkingBlock], bool],
    settings: Settings,
    counter: TokenCounter,
    *,
    current_turn: bool,
    native_kept: bool,
    native_cost: int | None = None,
) -> int:
    """Tokens of ``message``'s thinking as a signing provider's request carries it, routed block by
    block as its builder routes them: thinking sent as text counts as the text it is, wrapper
    included; thinking sent natively counts in the turn in progress, and in earlier turns only when
    the server keeps it (``native_kept``: Gemini reads thought parts back; Anthropic and the
    Responses API drop earlier turns' thinking on their side). ``native_cost`` is what the
    natively sent thinking costs when that is not its shown text (the Responses API's encrypted
    reasoning costs what was billed for it)."""
    blocks = [b for b in message.blocks if isinstance(b, ThinkingBlock)]
    routes = [route_thinking(b, native_ok(b), settings, current_turn=current_turn) for b in blocks]
    counted = [
        b
        for b, route in zip(blocks, routes, strict=True)
        if (route == "native" and (current_turn or native_kept)) or route == "text"
    ]
    if not counted:
        return 0
    texts = sum(1 for route in routes if route == "text")
    wrapper = counter.count(thinking_as_text(ThinkingBlock(thought=""))) * texts
    if native_cost is not None and texts < len(counted):
        shown = sum(counter.count(b.thought) for b, r in zip(blocks, routes, strict=True) if r == "text")
        return native_cost + shown + wrapper
    if len(counted) == len(blocks):
        return counter.count_thinking(message) + wrapper  # the cached count of the whole message
    return sum(0 if b.is_hidden else counter.count(b.thought) for b in counted) + wrapper
