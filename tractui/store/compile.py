"""Turn a commit chain into the messages sent to the model.

Storage keeps the reasoning commit apart from the answer it led to; the wire
wants one assistant message, so each reasoning commit is merged into the
assistant commit that follows. Summary commits stand in for the range they
replace; the reasoning policy is applied last, on the merged messages — except
that when it strips all thinking, the merge leaves thinking out as it goes.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tractui.core.content import Content, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.heap import gc_paused
from tractui.core.reasoning import (
    THOUGHT,
    StripPolicy,
    filter_thinking_for_context,
    open_loop_start,
    remove_thinking,
    thinking_policy,
)
from tractui.core.settings import Settings
from tractui.store.history import Commit

INTERRUPTED = "interrupted"  # Content.metadata flag on a reply that did not complete


def summary_metadata(first_id: str, last_id: str, **extra: Any) -> dict[str, Any]:
    """Metadata for a summary commit standing in for ``first_id``..``last_id`` (inclusive) of its chain."""
    return {"replaces": {"first": first_id, "last": last_id}, **extra}


CLEARED = "[this tool result was cleared from the context to make room; call the tool again if it is needed]"


def clearing_metadata(ids: Sequence[str], tokens: int) -> dict[str, Any]:
    """Metadata for a summary commit that clears the results of the tool commits ``ids`` from what is sent."""
    return {"clears": {"ids": list(ids), "tokens": tokens}}


def is_clearing(commit: Commit) -> bool:
    """A summary commit that clears old tool results rather than standing in for a range."""
    clears = commit.metadata.get("clears")
    return commit.kind == "summary" and isinstance(clears, dict) and isinstance(clears.get("ids"), list)


def _cleared_copy(commit: Commit) -> Commit:
    blocks = [
        ToolResultBlock(tool_call_id=b.tool_call_id, content=CLEARED, is_error=b.is_error)
        if isinstance(b, ToolResultBlock)
        else b
        for b in commit.content.blocks
    ]
    content = commit.content.model_copy(
        update={"blocks": blocks, "metadata": {**commit.content.metadata, "cleared": True}}
    )
    return dataclasses.replace(commit, content=content)


def replaced_range(commit: Commit) -> tuple[str, str] | None:
    """The first and last commit ids a summary commit stands in for (``None``: it names none)."""
    replaces = commit.metadata.get("replaces")
    if isinstance(replaces, dict) and isinstance(replaces.get("first"), str) and isinstance(replaces.get("last"), str):
        return replaces["first"], replaces["last"]
    return None


def _covering(commits: Sequence[Commit]) -> tuple[list[Commit | None], set[str]]:
    """For each position, the summary that replaces it (later summaries win); and the summaries in effect."""
    index = {c.id: i for i, c in enumerate(commits)}
    cover: list[Commit | None] = [None] * len(commits)
    placed: set[str] = set()
    for i, commit in enumerate(commits):
        if commit.kind != "summary" or (span := replaced_range(commit)) is None:
            continue
        a, b = index.get(span[0]), index.get(span[1])
        if a is None or b is None or not a <= b < i:
            continue  # a range not behind it in this chain: the summary cannot stand in for it
        placed.add(commit.id)
        for k in range(a, b + 1):
            cover[k] = commit
    return cover, placed


def compacted_ids(commits: Sequence[Commit]) -> set[str]:
    """Ids of commits a summary stands in for (shown as compacted; never deleted)."""
    cover, _ = _covering(commits)
    return {c.id for c, s in zip(commits, cover, strict=True) if s is not None}


def effective_commits(commits: Sequence[Commit]) -> list[Commit]:
    """The chain with summaries substituted for the ranges they replace, and the tool results
    a clearing commit names (behind it) replaced by a marker."""
    if not any(c.kind == "summary" for c in commits):
        return list(commits)
    cover, placed = _covering(commits)
    cleared: set[str] = set()
    seen: set[str] = set()
    for commit in commits:
        if is_clearing(commit):
            cleared.update(i for i in commit.metadata["clears"]["ids"] if i in seen)
        seen.add(commit.id)
    out: list[Commit] = []
    emitted: set[str] = set()
    for commit, summary in zip(commits, cover, strict=True):
        if summary is not None:
            if summary.id not in emitted:
                out.append(summary)
                emitted.add(summary.id)
        elif is_clearing(commit):
            continue  # not a message: its effect is on the results it names
        elif commit.id in cleared:
            out.append(_cleared_copy(commit))
        elif commit.id not in placed:
            out.append(commit)
    return out


def _reply(reasoning: list[Commit], answer: Commit | None, keep_thinking: bool) -> Content | None:
    """One reply's message: its reasoning commits merged into its answer, remembered on the answer
    (the store hands out the same commit objects until one changes, so a long history is merged once)."""
    if answer is None:
        return _merged_reply(reasoning, None, keep_thinking)
    found = answer.memo.get(keep_thinking)
    if found is not None and len(found[0]) == len(reasoning) and all(map(operator.is_, found[0], reasoning)):
        remembered: Content | None = found[1]
        return remembered
    merged = _merged_reply(reasoning, answer, keep_thinking)
    answer.memo[keep_thinking] = (tuple(reasoning), merged)
    return merged


def _answers_nothing(reply: Sequence[Commit]) -> bool:
    """A reply (its reasoning commits and answer) that is no message, whatever the policy: one with
    nothing in it (a failed reply), or one cut off (Esc, an error, a kill) before it said or called
    anything. It answered nothing, so a message typed after it follows what it would have answered
    (``_open_loop_start``: a tool loop goes on), and its unfinished thinking has no answer or
    signature to go back with. The merge leaves it out (``_merge``), for the request and for the
    gauge that counts it; it stays in the history and on screen."""
    if any(c.status != "complete" for c in reply):
        return all(isinstance(b, ThinkingBlock) for c in reply for b in c.content.blocks)
    return not any(c.content.blocks for c in reply)


def _merged_reply(reasoning: list[Commit], answer: Commit | None, keep_thinking: bool) -> Content | None:
    parts = [*reasoning, *([answer] if answer else [])]
    if keep_thinking:
        blocks = [b for c in parts for b in c.content.blocks]
    else:
        blocks = [b for c in parts for b in c.content.blocks if not isinstance(b, ThinkingBlock)]
    if not blocks:
        return None  # only thinking, stripped: nothing to send
    metadata: dict[str, Any] = {}
    for c in parts:
        metadata.update(c.content.metadata)
    if any(c.status != "complete" for c in parts):
        metadata[INTERRUPTED] = True
    if not keep_thinking and any(isinstance(b, ThinkingBlock) for c in parts for b in c.content.blocks):
        metadata[THOUGHT] = True
    if answer is not None and len(blocks) == len(answer.content.blocks) and metadata == answer.content.metadata:
        return answer.content  # nothing added or taken away: the stored message as it is
    return Content.model_construct(speaker="ai", blocks=blocks, metadata=metadata)  # blocks were validated when read


def merge_commits(commits: Sequence[Commit]) -> list[Content]:
    """Summaries substituted, each reasoning commit merged into the answer that follows, the replies
    that answered nothing left out; no policy applied."""
    with gc_paused():
        return _merge(effective_commits(commits), keep_thinking=True)


def _merge(commits: Sequence[Commit], *, keep_thinking: bool) -> list[Content]:
    """The merge of an effective chain, without the replies that answered nothing (``_answers_nothing``);
    with ``keep_thinking`` off, thinking is left out as it goes (policy ``all``) rather than merged into
    new messages only to be stripped from copies of them again."""
    messages: list[Content] = []
    pending: list[Commit] = []

    def add_reply(answer: Commit | None) -> None:
        if _answers_nothing([*pending, *([answer] if answer else [])]):
            return
        if (reply := _reply(pending, answer, keep_thinking)) is not None:
            messages.append(reply)

    for commit in commits:
        if commit.kind == "reasoning":
            pending.append(commit)
            continue
        if commit.kind == "assistant":
            add_reply(commit)
            pending = []
            continue
        if pending:  # thinking whose answer never arrived (killed mid-stream)
            add_reply(None)
            pending = []
        messages.append(commit.content if keep_thinking else remove_thinking(commit.content))
    if pending:
        add_reply(None)
    return messages


_REPLY = ("reasoning", "assistant")  # the kinds of a reply's commits


def _reply_at(commits: Sequence[Commit], i: int) -> Sequence[Commit]:
    """The reply a reasoning or assistant commit belongs to, as ``_merge`` groups them: the
    reasoning commits in a row and the assistant commit after them, if one follows."""
    first = last = i
    while first and commits[first - 1].kind == "reasoning":
        first -= 1
    while commits[last].kind == "reasoning" and last + 1 < len(commits) and commits[last + 1].kind in _REPLY:
        last += 1
    return commits[first : last + 1]


def answered_nothing(commits: Sequence[Commit], i: int) -> bool:
    """Whether the reply the reasoning or assistant commit ``commits[i]`` belongs to answered
    nothing (``_answers_nothing``): the merge leaves it out."""
    return _answers_nothing(_reply_at(commits, i))


def _open_loop_start(commits: Sequence[Commit]) -> int:
    """Where a tool loop in progress begins (``open_loop_start``), or the end of the chain when
    none is open: no loop to continue. A reply that answered nothing is no message (``_answers_nothing``):
    the providers and the gauge, which read the messages, never see it between a result and a typed message."""

    def role(i: int) -> str:
        commit = commits[i]
        if commit.kind in _REPLY and answered_nothing(commits, i):
            return ""
        return "human" if commit.kind == "user" else commit.kind

    return open_loop_start(role, len(commits))


def compile_history(commits: Sequence[Commit], settings: Settings) -> list[Content]:
    """The messages to send for a chain (root → head).

    The reasoning policy applies to earlier turns; a tool loop in progress
    (``open_loop_start``: after the last user message, once it has tool results, or
    the loop a message typed after a stopped call goes on)
    keeps its thinking, which the providers require back with their tool calls. Every tool call gets a
    result: one whose result was never recorded (a process killed mid-call, a
    call tractui did not run) is answered as an error, so no provider refuses
    the history for a dangling call.
    """
    with gc_paused():
        effective = effective_commits(commits)
        return _compiled(effective, thinking_policy(settings), _open_loop_start(effective))


def _compiled(effective: Sequence[Commit], policy: StripPolicy, start: int) -> list[Content]:
    """The messages for an effective chain whose tool loop in progress begins at ``start``."""
    if policy == "all":
        earlier = _merge(effective[:start], keep_thinking=False)
        messages = earlier + _merge(effective[start:], keep_thinking=True)
    else:
        merged = _merge(effective, keep_thinking=True)
        keep_from = len(_merge(effective[:start], keep_thinking=True))
        filtered = filter_thinking_for_context(merged, policy)
        messages = filtered[:keep_from] + merged[keep_from:]
    return answer_every_call([m for m in messages if m.blocks or m.speaker != "ai"])


Mode = Literal["all", "none", "stored"]  # a policy compiled part by part, or the merge alone


@dataclass(slots=True)
class _Kept:
    chain: list[Commit]
    effective: list[Commit]
    boundary: int  # the effective chain's last user commit as far as it is settled
    settled: list[Content]  # the messages of ``effective[:boundary]``


class Compiler:
    """``compile_history`` and ``merge_commits`` for a chain that grows: a long session costs
    its new turns, not its length.

    What comes before a chain's last user message (before the loop in progress,
    which a message typed after a stopped call goes on) stays as it is when the
    chain grows: that message ends any merge and answers any call left open
    before it, the tool loop in progress begins after it, and the policies ``all`` and
    ``none`` act on each message alone. So the messages up to there are kept,
    and a chain that extends the last one (the same commit objects first: the
    store hands out a new object for a commit that changed) with no new summary
    compiles only its end. ``allButLast`` reaches back to the last answered
    turn: compiled whole. ``tests/test_compile_kept.py`` holds it to
    ``compile_history``. Safe to share with a thread (``Conversation.prepare``)
    without a lock, which would hold the event loop while the thread compiles:
    each call makes a record of its own and puts it in place whole.
    """

    def __init__(self) -> None:
        self._kept: dict[Mode, _Kept] = {}

    def compiled(self, commits: Sequence[Commit], settings: Settings) -> list[Content]:
        """``compile_history(commits, settings)``."""
        policy = thinking_policy(settings)
        if policy == "allButLast":
            return compile_history(commits, settings)
        return self._run(commits, policy)

    def merged(self, commits: Sequence[Commit]) -> list[Content]:
        """``merge_commits(commits)``."""
        return self._run(commits, "stored")

    def _run(self, commits: Sequence[Commit], mode: Mode) -> list[Content]:
        with gc_paused():
            kept = self._kept.get(mode)
            n = len(kept.chain) if kept is not None else 0
            if (
                kept is not None
                and len(commits) >= n
                and all(map(operator.is_, commits, kept.chain))
                and not any(c.kind == "summary" for c in commits[n:])
            ):
                added = list(commits[n:])
                kept = _Kept(list(commits), kept.effective + added, kept.boundary, kept.settled)
            else:
                kept = _Kept(list(commits), effective_commits(commits), 0, [])
            effective = kept.effective
            # the part begins at the last user commit before the loop in progress, which a message
            # typed after a stopped call goes on (``open_loop_start``)
            stop = kept.boundary + _open_loop_start(effective[kept.boundary :])
            last_user = next(
                (i for i in range(stop - 1, kept.boundary, -1) if effective[i].kind == "user"), kept.boundary
            )
            if last_user > kept.boundary:
                settled = effective[kept.boundary : last_user]
                kept.settled = kept.settled + _part(settled, mode, len(settled))
                kept.boundary = last_user
            self._kept[mode] = kept
            # ``stop`` holds for the rest too (``open_loop_start`` reads back from the end no further
            # than the last user commit before the loop, where the rest begins at the latest)
            return kept.settled + _part(effective[kept.boundary :], mode, stop - kept.boundary)


def _part(effective: Sequence[Commit], mode: Mode, start: int) -> list[Content]:
    """The messages of a part of an effective chain that begins at a user commit (or the root),
    whose tool loop in progress begins at ``start`` (its length when none is: a settled part is
    followed by a user commit)."""
    if mode == "stored":
        return _merge(effective, keep_thinking=True)
    return _compiled(effective, mode, start)


UNANSWERED = "no result was recorded for this call (interrupted before it finished)"


def answer_every_call(messages: list[Content]) -> list[Content]:
    """``messages`` with an error result after each tool call that has none."""
    out: list[Content] = []
    open_calls: list[str] = []

    def close() -> None:
        if open_calls:
            results = [ToolResultBlock(tool_call_id=i, content=UNANSWERED, is_error=True) for i in open_calls]
            out.append(Content(speaker="tool", blocks=list(results)))
            open_calls.clear()

    for message in messages:
        if message.speaker == "tool":
            answered = {b.tool_call_id for b in message.blocks if isinstance(b, ToolResultBlock)}
            open_calls[:] = [i for i in open_calls if i not in answered]
            out.append(message)
            continue
        close()
        out.append(message)
        if message.speaker == "ai":
            open_calls.extend(b.id for b in message.blocks if isinstance(b, ToolCallBlock))
    close()
    return out
