"""Pure decisions of compaction: where to cut, how to split, whether a result is worth it.

No I/O and no tokenizer here: callers pass token counts, so each rule is a
small function tested on numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

from tractui.core.content import Content, ToolResultBlock

MIN_SAVING = 0.05  # a summary must be at least 5% smaller than what it replaces
KEEP_SHARE_OF_THRESHOLD = 0.5  # verbatim turns may use at most this share of the threshold


def turn_starts(messages: Sequence[Content]) -> list[int]:
    """Indexes where a turn begins: a human message that is not a tool result.

    Cutting only there keeps tool calls with their results and a reply with
    its question.
    """
    return [
        i
        for i, m in enumerate(messages)
        if m.speaker == "human" and not any(isinstance(b, ToolResultBlock) for b in m.blocks)
    ]


def choose_split(
    turn_tokens: Sequence[int],
    *,
    keep_turns: int,
    keep_fraction: float | None,
    limit: int,
    keep_budget: int | None = None,
) -> int:
    """How many leading turns to summarise; the rest stay verbatim.

    Recent turns are kept by count (``keep_turns``) or, when ``keep_fraction``
    is set, by size (as many whole turns as fit in that fraction of ``limit``).
    ``keep_budget`` caps what is kept so the result can actually land under
    the threshold. The last turn (the one being sent) is always kept, and at
    least one turn is summarised when there are two or more.
    """
    n = len(turn_tokens)
    if n < 2:
        return 0
    suffix = _suffix_sums(turn_tokens)
    if keep_fraction is not None:
        budget = int(keep_fraction * limit)
        kept = 1
        while kept < n and suffix[n - kept - 1] <= budget:
            kept += 1
    else:
        kept = max(1, min(keep_turns, n))
    if keep_budget is not None:
        while kept > 1 and suffix[n - kept] > keep_budget:
            kept -= 1
    return n - min(kept, n - 1)


def _suffix_sums(tokens: Sequence[int]) -> list[int]:
    out = [0] * (len(tokens) + 1)
    for i in range(len(tokens) - 1, -1, -1):
        out[i] = out[i + 1] + tokens[i]
    return out


def split_parts(tokens: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Greedy ``[start, end)`` slices whose token sums stay within ``budget``.

    A single item larger than the budget gets a slice of its own (the caller
    shortens its text).
    """
    parts: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, n in enumerate(tokens):
        if i > start and total + n > budget:
            parts.append((start, i))
            start, total = i, 0
        total += n
    if start < len(tokens):
        parts.append((start, len(tokens)))
    return parts


def rejection(before: int, after: int) -> str | None:
    """Why a summary is refused, or ``None`` when it saves at least ``MIN_SAVING``."""
    if after > before * (1 - MIN_SAVING):
        change = (after - before) / before if before else 0.0
        return (
            f"compaction rejected: the summary ({after:,} tokens) is not at least {MIN_SAVING:.0%} smaller "
            f"than the {before:,} tokens it would replace ({change:+.0%}); history left as it was"
        )
    return None


def trim_oldest(messages: Sequence[Content], tokens: Sequence[int], target: int) -> int:
    """How many leading messages to drop (whole turns) so the rest fits ``target`` tokens.

    Used once after a provider's context-length error; the last turn always stays.
    """
    starts = turn_starts(messages)
    suffix = _suffix_sums(tokens)
    for start in starts[1:]:
        if suffix[start] <= target:
            return start
    return starts[-1] if len(starts) > 1 else 0
