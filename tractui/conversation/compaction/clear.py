"""Clearing old tool results: the cheapest compaction, tried before a summary.

A tool's result from well before the current turn is seldom needed word for
word again, and results are often the bulk of a tool-using conversation. The
model is sent a short marker in its place (``tractui.store.compile.CLEARED``)
and can call the tool again; the original stays in the store and on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tractui.core.content import Content, TextBlock, ToolResultBlock
from tractui.core.tokens import TokenCounter
from tractui.errors import StoreError
from tractui.store.compile import clearing_metadata, effective_commits
from tractui.store.history import HistoryStore

KEEP_TURNS = 3  # the newest turns (the current one included) keep their tool results
MIN_TOKENS = 100  # a smaller result is not worth replacing by a marker


@dataclass(frozen=True, slots=True)
class Cleared:
    commit_id: str
    results: int
    tokens: int

    @property
    def message(self) -> str:
        plural = "" if self.results == 1 else "s"
        return (
            f"cleared {self.results} old tool result{plural} ({self.tokens:,} tokens) from what is sent; "
            "they stay in the history"
        )


def clear_old_results(
    store: HistoryStore,
    session_id: str,
    counter: TokenCounter,
    *,
    head: str,
    provenance: dict[str, Any] | None = None,
) -> Cleared | None:
    """Write a commit clearing the tool results before the newest ``KEEP_TURNS`` turns; ``None``
    when there are none worth clearing, or the commit cannot be written (the history is left as
    it was, and the summary that comes next says what the store says)."""
    effective = effective_commits(store.chain(session_id, head=head))
    turns = [i for i, c in enumerate(effective) if c.kind == "user"]
    if len(turns) <= KEEP_TURNS:
        return None
    ids, tokens = [], 0
    for commit in effective[: turns[-KEEP_TURNS]]:
        if commit.kind != "tool" or commit.content.metadata.get("cleared"):
            continue
        size = sum(counter.count(b.content) for b in commit.content.blocks if isinstance(b, ToolResultBlock))
        if size >= MIN_TOKENS:
            ids.append(commit.id)
            tokens += size
    if not ids:
        return None
    cleared = Cleared("", len(ids), tokens)
    prov = provenance or {}
    try:
        commit = store.append(
            session_id,
            "summary",
            Content(speaker="system", blocks=[TextBlock(text=cleared.message)]),
            parent_id=head,
            metadata=clearing_metadata(ids, tokens),
            provider=prov.get("provider"),
            model=prov.get("model"),
            profile=prov.get("profile"),
        )
    except StoreError:
        return None
    return Cleared(commit.id, len(ids), tokens)
