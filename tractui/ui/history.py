"""A session's history as the messages the view draws, newest first on demand.

Drawing a long reply (Markdown blocks, highlighted code, captured lines)
costs milliseconds per screenful; a resumed session of a hundred long
replies drawn at once kept the app busy for half a minute. So the chain is
cut into entries (a user turn, a reply, a summary) and only the newest are
drawn; older ones are drawn a batch at a time as the user scrolls up to
them (``tractui/ui/app.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.widget import Widget
from textual.widgets import Static

from tractui.core.events import OUTPUT_LIMIT, StreamError, cut_at_output_limit
from tractui.ui.sanitize import sanitize
from tractui.ui.streaming.renderer import error_line
from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.message import AssistantMessage, StatusLine, UserMessage, interrupted_line
from tractui.ui.widgets.summary import SummaryMarker
from tractui.ui.widgets.thinking import RedactedMarker, ThinkingView
from tractui.ui.widgets.tool_call import ToolCallView, as_status, tool_label

if TYPE_CHECKING:
    from tractui.store.history import Commit

BATCH_CHARS = 12_000  # text drawn per batch: about three screens of a wide terminal
NEWEST_COMMITS = 16  # commits read first for the newest message; four times more while too few


@dataclass
class Entry:
    """One message of the view, and the commits it shows."""

    kind: Literal["user", "reply", "summary", "cleared"]
    commits: list[Commit]
    dim: bool  # replaced by a compaction summary: shown dimmed
    replaced: int = 0  # for a summary: how many turns it stands in for

    @property
    def size(self) -> int:
        """Characters it draws: what drawing it costs."""
        return sum(len(block_text) for commit in self.commits for block_text in _texts(commit))


def entries(chain: list[Commit]) -> list[Entry]:
    """The chain as the view shows it, oldest first: reasoning and assistant
    commits of one turn make one reply, with the tool results and the replies
    that followed its tool calls; each summary marker right after the turns it
    stands in for, where the model reads the summary."""
    from tractui.store.compile import compacted_ids, is_clearing  # the store's chain rules

    compacted = compacted_ids(chain)
    shown: list[Entry] = []
    reply: Entry | None = None
    for commit in chain:
        if commit.kind == "user":
            reply = None
            shown.append(Entry("user", [commit], commit.id in compacted))
        elif commit.kind in ("reasoning", "assistant"):
            if reply is None:
                reply = Entry("reply", [], commit.id in compacted)
                shown.append(reply)
            reply.commits.append(commit)
            if commit.kind == "assistant" and not commit.content.tool_calls:
                reply = None
        elif commit.kind == "tool":
            if reply is None:  # results whose call is not shown (an imported or trimmed history)
                reply = Entry("reply", [], commit.id in compacted)
                shown.append(reply)
            reply.commits.append(commit)
        elif commit.kind == "summary":
            reply = None
            if is_clearing(commit):
                shown.append(Entry("cleared", [commit], False))
            else:
                marker = Entry("summary", [commit], False, _replaced_turns(chain, commit))
                shown.insert(_after_range(shown, commit), marker)
    return shown


def _after_range(shown: list[Entry], summary: Commit) -> int:
    """Where ``summary``'s marker goes in ``shown``: after the entry holding the last commit it
    stands in for; at the end (where the summary commit sits) when that is not among them."""
    from tractui.store.compile import replaced_range

    span = replaced_range(summary)
    if span is not None:
        for index in range(len(shown) - 1, -1, -1):
            if any(commit.id == span[1] for commit in shown[index].commits):
                return index + 1
    return len(shown)


def newest(pending: list[Entry], budget: int = BATCH_CHARS) -> int:
    """Where the newest batch of ``pending`` starts: entries from the end up to
    ``budget`` characters, at least one, and never a reply without its question."""
    start, size = len(pending), 0
    while start > 0 and (size < budget or start == len(pending)):
        start -= 1
        size += pending[start].size
    if start > 0 and pending[start].kind == "reply" and pending[start - 1].kind == "user":
        start -= 1
    return start


def newest_of(chain: Callable[[int], list[Commit]], budget: int) -> tuple[list[Entry], list[Entry] | None]:
    """The newest batch of entries (as ``newest`` picks it) read from the end of the chain
    alone, and the entries before it when the chain was read whole (``None`` otherwise).

    ``chain(n)`` gives the chain's last ``n`` commits. An end is enough when the batch starts
    after its first entry (which may be cut: a reply whose first commits are further up) and
    holds only messages and replies: a summary's turn count needs the commits it stands in
    for, and a commit is dimmed only by a summary after it, which would be in the batch.
    """
    count = NEWEST_COMMITS
    while True:
        end = chain(count)
        pending = entries(end)
        start = newest(pending, budget)
        if len(end) < count:  # the whole chain
            return pending[start:], pending[:start]
        if start > 0 and all(entry.kind in ("user", "reply") for entry in pending[start:]):
            return pending[start:], None
        count *= 4


def widget_for(
    entry: Entry,
    count_tokens: Callable[[str], int],
    clock: Callable[[], float],
    *,
    folded: bool = False,
    public: bool = False,
) -> Widget:
    """The widget that draws ``entry``, built whole so that it mounts in one go;
    its thinking ``folded`` when the user folded all thinking, its answers drawn with
    public Textual only when ``public`` (``ui.markdown``)."""
    if entry.kind == "user":
        return UserMessage(sanitize(entry.commits[0].content.text)).set_class(entry.dim, "-compacted")
    if entry.kind == "summary":
        return SummaryMarker(sanitize(entry.commits[0].content.text), entry.replaced)
    if entry.kind == "cleared":  # old tool results cleared from what is sent: they are still shown above
        return Static(f"✂ {sanitize(entry.commits[0].content.text)}", markup=False, classes="note cleared")
    parts: list[Widget] = []
    statuses: list[StatusLine] = []
    for commit in entry.commits:
        if commit.kind == "tool":
            _answer_calls(commit, parts)
            continue
        parts.extend(_parts(commit, count_tokens, clock, folded, public))
        if commit.kind == "assistant":
            statuses.extend(_statuses(commit, parts))
    _unanswered(parts)
    reply = AssistantMessage(count_tokens, clock, parts=parts, statuses=statuses, public_markdown=public)
    return reply.set_class(entry.dim, "-compacted")


def _parts(
    commit: Commit, count_tokens: Callable[[str], int], clock: Callable[[], float], folded: bool, public: bool
) -> list[Widget]:
    from tractui.core.content import TextBlock, ThinkingBlock, ToolCallBlock

    parts: list[Widget] = []
    for block in commit.content.blocks:
        if isinstance(block, ThinkingBlock):
            if block.is_hidden:
                parts.append(RedactedMarker())
            elif not block.thought and block.signature:  # display "omitted": signed, nothing to show
                parts.append(RedactedMarker(RedactedMarker.OMITTED))
            elif block.thought:  # elapsed < 0: the time it took is not recorded
                view = ThinkingView(count_tokens, clock, text=sanitize(block.thought), elapsed=-1.0)
                if folded:
                    view.toggle_fold()
                parts.append(view)
        elif isinstance(block, TextBlock):
            parts.append(AnswerView(sanitize(block.text), public=public))
        elif isinstance(block, ToolCallBlock):
            parts.append(ToolCallView(sanitize(block.name), arguments=sanitize(block.arguments), call_id=block.id))
    return parts


def _answer_calls(commit: Commit, parts: list[Widget]) -> None:
    """Show a tool commit's results on the calls drawn above (or on their own, when not drawn)."""
    from tractui.core.content import ToolResultBlock

    meta = commit.content.metadata
    status = meta.get("status")
    server, tool = str(meta.get("server", "")), str(meta.get("tool", ""))
    took = meta.get("duration")
    for block in commit.content.blocks:
        if not isinstance(block, ToolResultBlock):
            continue
        view = next((p for p in parts if isinstance(p, ToolCallView) and p.call_id == block.tool_call_id), None)
        if view is None:
            view = ToolCallView(sanitize(str(meta.get("name", "")) or "tool"), call_id=block.tool_call_id)
            parts.append(view)
        view.status = as_status(status, "error" if block.is_error else "done")
        if server and tool:
            view.label = sanitize(tool_label(server, tool))
        view.result = sanitize(block.content)
        view.took = float(took) if isinstance(took, (int, float)) and not isinstance(took, bool) else 0.0


def _unanswered(parts: list[Widget]) -> None:
    """A call the history holds no result for (tractui was stopped during it) is drawn as what
    the model is sent for it (``compile.UNANSWERED``), not as a call still to come."""
    from tractui.store.compile import UNANSWERED

    for view in parts:
        if isinstance(view, ToolCallView) and view.status is None:
            view.status, view.result = "interrupted", UNANSWERED


def _statuses(commit: Commit, parts: list[Widget]) -> list[StatusLine]:
    """The lines under ``commit``, a reply whose ``parts`` so far are drawn."""
    if commit.status == "interrupted":
        return [StatusLine(interrupted_line(parts), "interrupted")]
    if commit.status == "error":
        stored = commit.metadata.get("error") or {}
        status = stored.get("status")
        kind, message = str(stored.get("kind", "error")), str(stored.get("message", ""))
        error = StreamError(kind, message, status if isinstance(status, int) and not isinstance(status, bool) else None)  # type: ignore[arg-type]
        return [StatusLine(error_line(error, live=False), "error")]
    if cut_at_output_limit(commit.metadata.get("finish_reason")):  # as it was told when it arrived
        return [StatusLine(f"ℹ {OUTPUT_LIMIT}", "notice")]
    return []


def _texts(commit: Commit) -> list[str]:
    from tractui.core.content import TextBlock, ThinkingBlock

    return [
        block.thought if isinstance(block, ThinkingBlock) else block.text
        for block in commit.content.blocks
        if isinstance(block, (TextBlock, ThinkingBlock))
    ]


def _replaced_turns(chain: list[Commit], summary: Commit) -> int:
    """How many turns (a message of yours and the reply to it) of ``chain`` the summary commit stands in
    for: the unit compaction's own notices use."""
    span = summary.metadata.get("replaces") or {}
    ids = [c.id for c in chain]
    if span.get("first") not in ids or span.get("last") not in ids:
        return 0
    covered = chain[ids.index(span["first"]) : ids.index(span["last"]) + 1]
    return sum(1 for c in covered if c.kind == "user")
