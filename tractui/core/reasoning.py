"""Reasoning on the way out: which thinking is sent back, and in what shape.

Storage keeps every ``ThinkingBlock``; these functions decide per settings
what a request carries. None of them mutates its input: changed messages are
new objects, unchanged ones are passed through as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from tractui.core.content import Content, ThinkingBlock
from tractui.core.settings import EFFORTS, Settings
from tractui.core.tokens import TokenCounter

StripPolicy = Literal["all", "allButLast", "none"]

THOUGHT = "thought"
"""``Content.metadata`` flag on a message whose thinking the policy left out: a server that thinks
refuses a tool-call message without its reasoning field, so the builder still sends the field."""


def extract_thinking_blocks(content: Content) -> list[ThinkingBlock]:
    """The thinking blocks of one message, in order (the stored objects)."""
    return [b for b in content.blocks if isinstance(b, ThinkingBlock)]


def remove_thinking(content: Content) -> Content:
    """A new message without thinking; the message itself when it has none.

    The remaining blocks are shared, not copied: nothing downstream mutates
    blocks, and deep copies dominated the cost of compiling a long history.
    """
    if not any(isinstance(b, ThinkingBlock) for b in content.blocks):
        return content
    blocks = [b for b in content.blocks if not isinstance(b, ThinkingBlock)]
    return content.model_copy(update={"blocks": blocks, "metadata": {**content.metadata, THOUGHT: True}})


def last_turn_range(contents: Sequence[Content], end: int | None = None) -> range:
    """Indices of the last assistant turn in ``contents[:end]``: the last ``ai``
    message and the ``ai``/``tool`` messages before it back to the human message
    that started the turn (a tool loop is one turn). Empty when there is no ``ai``.
    """
    stop = len(contents) if end is None else end
    last_ai = next((i for i in range(stop - 1, -1, -1) if contents[i].speaker == "ai"), -1)
    if last_ai < 0:
        return range(0)
    start = last_ai
    while start > 0 and contents[start - 1].speaker in ("ai", "tool"):
        start -= 1
    return range(start, last_ai + 1)


def open_loop_start(role: Callable[[int], str], count: int) -> int:
    """Where a tool loop in progress begins among ``count`` messages, given each one's role
    (``human``, ``tool``, ``""`` or another): the first message after the last human one, once tool
    results follow it; ``count`` when no loop is open. Messages typed right after a tool result
    no reply answered (the user stopped the loop) go on that loop: Anthropic puts them in the
    result's own user message, so to it the loop is still the turn in progress, whose thinking
    must come back with its calls. A role ``""`` stands for a message that is never sent (a failed
    reply with nothing in it), so it does not end the loop for the store when the provider never
    sees it. Reads back from the end only."""
    end = typed = count
    while typed and role(typed - 1) in ("human", ""):
        typed -= 1
    if typed and role(typed - 1) == "tool" and any(role(i) == "human" for i in range(typed, count)):
        end = typed
    start = next((i + 1 for i in range(end - 1, -1, -1) if role(i) == "human"), 0)
    return start if any(role(i) == "tool" for i in range(start, end)) else count


def filter_thinking_for_context(contents: Sequence[Content], policy: StripPolicy) -> list[Content]:
    """Strip thinking per ``reasoning.stripFromContext``.

    ``all``: from every assistant turn; ``allButLast``: from all but the last
    assistant turn; ``none``: keep everything.
    """
    if policy == "none":
        return list(contents)
    if policy == "all":
        return [remove_thinking(c) for c in contents]
    if policy == "allButLast":
        keep = last_turn_range(contents)
        return [c if i in keep else remove_thinking(c) for i, c in enumerate(contents)]
    raise ValueError(f"unknown stripFromContext policy '{policy}': expected all, allButLast or none")


def thinking_policy(settings: Settings) -> StripPolicy:
    """The one policy that decides what is sent: ``includeInContext`` off means strip all."""
    if not settings.view.reasoning_include_in_context:
        return "all"
    return settings.view.reasoning_strip_from_context


def apply_reasoning_policy(contents: Sequence[Content], settings: Settings) -> list[Content]:
    """The history with thinking removed as the settings say (what the provider gets)."""
    return filter_thinking_for_context(contents, thinking_policy(settings))


def thinking_to_reasoning_field(content: Content) -> str | None:
    """Visible thought text for a ``reasoning_content``-style field; None when there is none.

    Separate blocks are joined with a blank line; hidden thinking is never text.
    """
    texts = [b.thought for b in content.blocks if isinstance(b, ThinkingBlock) and not b.is_hidden and b.thought]
    return "\n\n".join(texts) if texts else None


def map_effort(requested: str | None, accepted: tuple[str, ...] | None) -> str | None:
    """The effort to send: ``requested`` when the server takes it (or no list says otherwise),
    else the nearest it takes, upward first (``medium`` goes as ``high`` on a server taking
    low/high/max, as Kimi K3 runs it). A server that maps every name itself (DeepSeek) lists
    them all: its own table then decides, not this rule."""
    if requested is None or not accepted or requested in accepted:
        return requested
    order = EFFORTS.index(requested)
    above = [e for e in accepted if EFFORTS.index(e) > order]
    return above[0] if above else accepted[-1]


def lowest_effort(accepted: tuple[str, ...] | None) -> str:
    """The least reasoning a model that cannot turn it off takes: the first of its efforts that is
    not ``none``, or ``low`` when no list says."""
    return next((e for e in accepted or () if e != "none"), "low")


def estimate_thinking_tokens(contents: Sequence[Content], counter: TokenCounter | None = None) -> int:
    """Visible thinking tokens in ``contents``, by the real tokenizer (hidden thinking counts 0)."""
    counter = counter or TokenCounter()
    return sum(counter.count_thinking(c) for c in contents)
