"""The answer, rendered as Markdown while it streams.

Fragments go to Textual's streaming ``Markdown.append``: only the last block
is re-parsed on each append. The app batches fragments per frame and awaits
each append, so the display sets the pace: a fast stream waits in the socket,
never in a backlog that would be drawn long after the last token. A long
answer is cut into segments at block boundaries (a blank line outside a code
fence) and between the items of a long list. A closed segment, once laid out, is
replaced by the lines it drew, added to the ``FrozenSegment`` just before it
when there is one, so each frame lays out only the growing segment and one
widget for the rest, not hundreds of finished block widgets, and the blocks'
widgets are freed.

``public``: one Textual ``Markdown`` widget fed by ``Markdown.append`` and
nothing else (``/set ui.markdown public``): no segments, no capture, no
private Textual API, for a Textual upgrade that moved what the fast path uses.
"""

from __future__ import annotations

import re
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.app import App
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.widget import Widget

from tractui.ui.widgets.column import Column

if TYPE_CHECKING:
    from textual.widgets import Markdown

    from tractui.ui.widgets.answer_segment import AnswerSegment

FREEZE_TRIES = 40  # runs of the capture queue (0.05 s apart) a segment may wait to be laid out; then it stays live
SEGMENT_CHARS = 1000  # a segment closes at the first safe block boundary after this many characters
# a list is cut between items only once this much of it is in the segment: a short one waits for a paragraph
LIST_CHARS = 500
LONG_LINE = 8000  # a paragraph on one line this long is cut between two words (see line_cut)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
_MAYBE_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)]?)(?:[ \t][-*_ \t]*)?")  # an item's first line, not known yet
# a top-level list item's first line, up to a character no rule (``- - -``, ``***``) has
_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+[-*_ \t]*[^-*_ \t\n]", re.MULTILINE)


class CaptureQueue:
    """Segments waiting to be drawn from their lines, captured a few at a time.

    Capturing costs a few milliseconds a segment; with many waiting (a
    resumed session, a new width) all at once would freeze the screen. One
    queue per app, as its event loop is one: each run takes at most ``share``
    of a ``window`` and the next run comes a window later, so waiting
    segments cost nothing until their turn. The segments of one answer are
    captured in the order they were queued (one not laid out yet holds back
    the later ones, for a while), so that each joins the frozen lines just
    before it; one captured out of turn starts a frozen widget of its own.
    The queue holds its app and segments weakly and runs on the app's
    timers: a segment removed while waiting (``/clear``) is dropped, and
    cannot stop the runs for the others.
    """

    def __init__(self, app: App[object], window: float = 0.05, share: float = 0.3) -> None:
        self.window, self.allowed = window, window * share
        self._app = weakref.ref(app)
        self._waiting: deque[tuple[weakref.ref[AnswerSegment], int]] = deque()
        self._scheduled = False

    @classmethod
    def of(cls, app: App[object]) -> CaptureQueue:
        queue = _QUEUES.get(app)
        if queue is None:
            queue = _QUEUES[app] = cls(app)
        return queue

    def add(self, segment: AnswerSegment) -> None:
        self._waiting.append((weakref.ref(segment), FREEZE_TRIES))
        self._schedule(0)

    def _schedule(self, delay: float) -> None:
        app = self._app()
        if self._scheduled or app is None:
            return
        self._scheduled = True
        if delay:
            app.set_timer(delay, self._run)
        else:
            app.call_after_refresh(self._run)

    def _run(self) -> None:
        deadline = time.perf_counter() + self.allowed
        behind: set[AnswerView] = set()  # views whose earlier segment waits: theirs are captured in order
        again: list[tuple[weakref.ref[AnswerSegment], int]] = []  # tried or held back: first in line next run
        for _ in range(len(self._waiting)):
            if time.perf_counter() >= deadline:
                break
            ref, tries = self._waiting.popleft()
            segment = ref()
            view = segment.parent if segment is not None else None
            if segment is None or not isinstance(view, AnswerView):
                continue  # removed meanwhile
            if view in behind:
                again.append((ref, tries))
            elif not view.freeze(segment):
                behind.add(view)
                if tries > 1:
                    again.append((ref, tries - 1))
        self._scheduled = False
        self._waiting = deque(entry for entry in (*again, *self._waiting) if _attached(entry[0]))
        if self._waiting:
            self._schedule(self.window)


_QUEUES: weakref.WeakKeyDictionary[App[object], CaptureQueue] = weakref.WeakKeyDictionary()


def _drop(widget: Widget) -> None:
    """Hide ``widget`` at once, and remove it (with the lines it kept from painting) after
    the next refresh. Hidden, no layout places it beside what replaced it, and no capture
    or thaw takes it for a live one; kept until then, a frame painted before that layout
    (from the places of the last one) still draws it: removed at once, it left a blank."""
    from tractui.ui.internals import forget_painted_lines

    widget.display = False

    def remove() -> None:
        forget_painted_lines(widget)
        widget.remove()

    widget.app.call_after_refresh(remove)


@dataclass
class _Swap:
    """Widgets of an answer view mounting in place of others (``AnswerView._replace``)."""

    old: list[Widget]
    new: list[Widget]


def _attached(ref: weakref.ref[AnswerSegment]) -> bool:
    segment = ref()
    return segment is not None and segment.is_attached


def _unplaced(segment: Widget) -> bool:
    """Whether a block of ``segment`` was mounted after the last layout: it has no size yet,
    and captured now it would be blank lines (the segment measures its height from its
    blocks' content, so its own height can already be right)."""
    return any(not block.size.width for block in segment.walk_children(Widget) if block.display)


def safe_cut(text: str, start: int) -> int:
    """The first offset at or after ``start`` just past a blank line outside any
    code fence where the next line starts a paragraph (a letter); -1 if none.

    Only a paragraph may open a segment: it has no top margin, so the two
    segments stack exactly as one Markdown would draw them (Textual does not
    collapse margins across containers). Lists, quotes, tables and indented
    text carry on across blank lines and never start with a letter.
    """
    cut = text.find("\n\n", start)
    while cut >= 0:
        if text[cut + 2 : cut + 3].isalpha() and len(_FENCE.findall(text, 0, cut)) % 2 == 0:
            return cut + 2
        cut = text.find("\n\n", cut + 1)
    return -1


def line_cut(text: str) -> int:
    """Where a paragraph that is one very long line is cut: just past the first space at or
    after ``LONG_LINE`` characters into it that comes before a letter; the earliest such
    place in ``text`` (outside code fences), -1 if none is there yet.

    Markdown re-parses and re-wraps the block that grows, so a line of megabytes made each
    frame cost more than the last. The parts are drawn as paragraphs of their own, a blank
    row between them; inline formatting that spans a cut shows its characters. It depends
    only on the text up to the place, so a stream and a resume cut alike.
    """
    start, fences = 0, 0
    while True:
        blank = text.find("\n\n", start)
        end = len(text) if blank < 0 else blank
        if end - start > LONG_LINE and text[start].isalpha() and fences % 2 == 0:
            newline = text.find("\n", start, end)
            line_end = end if newline < 0 else newline
            at = text.find(" ", start + LONG_LINE, line_end)
            while at >= 0:
                if text[at + 1 : at + 2].isalpha():
                    return at + 1
                at = text.find(" ", at + 1, line_end)
        if blank < 0:
            return -1
        fences += len(_FENCE.findall(text, start, blank + 2))
        start = blank + 2


def list_cut(text: str, start: int) -> int:
    """The first line start at or after ``start`` where an item of a top-level list begins
    that goes on with the list before it; -1 if none is there yet.

    A list is one Markdown block, parsed and laid out whole on every append, so a long one
    made each frame cost more than the last; a short one is left whole (``LIST_CHARS``).
    The part before the cut is drawn without the list's bottom margin
    (``AnswerSegment.continues``) and the part after is a list of the same kind: together
    they draw as the one list. A numbered item is cut only where its
    number is the one the list shows there. It depends only on the text up to the item's
    first character that no rule has, so a stream and a resume cut alike.
    """
    for match in _ITEM.finditer(text, start):
        at = match.start()
        begun = _list_begun(text[: match.end()], text.count("\n", 0, at)) if at else -1
        if begun >= 0 and at - _line_offset(text, begun) >= LIST_CHARS:
            return at
    return -1


def _line_offset(text: str, line: int) -> int:
    """Where line ``line`` (from 0) of ``text`` starts."""
    at = 0
    for _ in range(line):
        at = text.index("\n", at) + 1
    return at


def _list_begun(text: str, line: int) -> int:
    """The line where the list that is the last block of ``text`` begins, if its last item
    starts on ``line``, after other items, numbered as written; -1 if not."""
    from tractui.ui.widgets.answer_segment import parse

    block: str | None = None
    begun = -1
    items: list[str] = []  # each top-level item's number as written ("" in a bullet list)
    last = -1
    for token in parse(text):
        if token.level == 0 and token.nesting >= 0:  # a top-level block opens (or is whole)
            block, items, begun = token.type, [], token.map[0] if token.map else -1
        elif token.level == 1 and token.type == "list_item_open":
            items.append(token.info)
            last = token.map[0] if token.map else -1
    if block not in ("bullet_list_open", "ordered_list_open") or len(items) < 2 or last != line:
        return -1
    if block == "ordered_list_open" and int(items[0]) + len(items) - 1 != int(items[-1]):
        return -1
    return begun


class AnswerView(Column):
    def __init__(self, text: str = "", *, public: bool = False) -> None:
        super().__init__(classes="answer -public" if public else "answer")
        self.public = public
        self._markdown: Markdown | None = None  # the public path's one widget
        self._written: list[str] = []
        self._open = ""  # the source of the last segment
        self._given = 0  # how much of it the segment has (see _settled)
        self._segment: AnswerSegment | None = None  # the growing one
        self._initial = text
        self._swaps: list[_Swap] = []  # widgets mounting in place of others

    @property
    def text(self) -> str:
        """Everything written so far, including fragments still queued for display."""
        return self._initial + "".join(self._written)

    async def on_mount(self) -> None:
        if not self.public:
            self.watch(self.app, "theme", lambda: self.thaw(), init=False)
        if self._initial:  # history: whole text at once, cut the same way as a stream
            text, self._initial = self._initial, ""
            await self.write(text)
            await self.finish()

    async def write(self, fragment: str) -> None:
        if not fragment:
            return
        self._written.append(fragment)
        if self.public:
            await self._append_public(fragment)
            return
        before = len(self._open)
        self._open += fragment
        while True:
            cut, in_list = self._next_cut(before)
            if cut < 0:
                await self._give(self._settled())
                return
            await self._give(cut)
            self._open, self._given, before = self._open[cut:], 0, 0
            await self._close(in_list=in_list)

    async def _give(self, end: int) -> None:
        """Hand the growing segment the open text up to ``end``."""
        if end > self._given:
            await self._append(self._open[self._given : end])
            self._given = end

    def _settled(self) -> int:
        """How much of the open text is known to stay in the growing segment: all of it, unless
        its last line, past where a segment may close, could still open a list item that cuts
        there (``- `` before its first letter): that line waits for its next character."""
        line = self._open.rfind("\n") + 1
        if line >= SEGMENT_CHARS and _MAYBE_ITEM.fullmatch(self._open, line):
            return line
        return len(self._open)

    def _next_cut(self, before: int) -> tuple[int, bool]:
        """Where the growing segment closes, now that it grew from ``before`` characters:
        the earliest cut found (as a resume, with the whole text at once, would cut), and
        whether it falls inside a list; -1 if none."""
        text = self._open
        if len(text) <= SEGMENT_CHARS:
            return -1, False
        line = text.rfind("\n", 0, before) + 1  # an item whose first line was still arriving
        found = [
            (at, in_list)
            for at, in_list in (
                (safe_cut(text, max(SEGMENT_CHARS, before - 6)), False),
                (line_cut(text) if len(text) > LONG_LINE else -1, False),
                (list_cut(text, max(SEGMENT_CHARS, line)), True),
            )
            if at >= 0
        ]
        return min(found) if found else (-1, False)

    async def _append_public(self, fragment: str) -> None:
        if self._markdown is None:
            from textual.widgets import Markdown  # after the app's first frame, as on the fast path

            self._markdown = Markdown(classes="answer-public")
            await self.mount(self._markdown)
        await self._markdown.append(fragment)

    async def _append(self, fragment: str) -> None:
        if not fragment:
            return
        if self._segment is None:
            # Markdown: imported with the first answer, after the app's first frame
            from tractui.ui.widgets.answer_segment import AnswerSegment

            self._segment = AnswerSegment()
            await self.mount(self._segment)
        await self._segment.append(fragment)

    async def finish(self) -> None:
        """The answer is complete: what waited is drawn, and the growing segment closed."""
        await self._give(len(self._open))
        await self._close(in_list=False)

    async def _close(self, *, in_list: bool) -> None:
        """Close the growing segment: it is drawn from its lines once laid out.
        ``in_list``: its last list goes on in the next segment."""
        if self._segment is not None:  # never on the public path: it has no segments
            self._segment.continues = in_list
            self._freeze_later(self._segment)
            self._segment = None

    def _freeze_later(self, segment: AnswerSegment) -> None:
        CaptureQueue.of(self.app).add(segment)

    def freeze(self, segment: AnswerSegment) -> bool:
        """Replace a finished segment, once it is laid out, by the lines it draws;
        False while it is not laid out yet.

        A laid-out segment is as tall as its blocks measure; until then (a frame
        may predate its last blocks, a new segment its first, a thawed segment
        its mounting, a closed one the list margin it no longer counts) it waits. Its
        lines join those of the frozen segment just before it, if any: one
        widget for each run of finished segments, so one to lay out each frame
        however long the answer.
        """
        if segment.parent is not self or segment is self._segment or not self._shown(segment):
            return True  # removed, growing again, or being replaced
        width = self.content_region.width
        laid_out = segment.is_mounted and width and segment.children and segment.outer_size.width == width
        if (
            not laid_out
            or segment.outer_size.height != segment.get_content_height(self.content_region.size, self.app.size, width)
            or _unplaced(segment)
        ):
            return False
        if any(block.is_scrollable and block.max_scroll_x > 0 for block in segment.walk_children(Widget)):
            return True  # code wider than the view scrolls sideways: only a live segment can
        from tractui.ui.internals import capture_strips
        from tractui.ui.widgets.frozen import FrozenSegment

        strips = capture_strips(segment)
        place = self.children.index(segment)
        previous = next(
            (child for child in reversed(self.children[:place]) if self._shown(child)), None
        )  # past captured ones
        part = (segment.source, segment.continues)
        if isinstance(previous, FrozenSegment) and previous.captured_width == width:
            previous.extend(strips, part)
            swap = self._swap_showing(previous)
            if swap is None:
                _drop(segment)  # its lines are drawn by the frozen widget from now on
            else:
                swap.old.append(segment)  # ... once that widget is mounted
        else:
            self._replace([segment], [FrozenSegment(strips, width, part)])
        return True

    def thaw(self) -> None:
        """Draw the finished segments from their Markdown again, to be captured anew:
        the width or theme changed."""
        from tractui.ui.widgets.answer_segment import AnswerSegment
        from tractui.ui.widgets.frozen import FrozenSegment

        for swap in [swap for swap in self._swaps if isinstance(swap.old[0], AnswerSegment)]:
            self._swaps.remove(swap)  # captured in the old width or colours: the live ones stay
            for frozen in swap.new:
                frozen.remove()
            for segment in swap.old:
                self._freeze_later(cast("AnswerSegment", segment))
        for frozen in self.query_children(FrozenSegment):
            if not self._shown(frozen):
                continue  # thawed already, on its way out
            segments = [AnswerSegment(source, continues=continues) for source, continues in frozen.parts]
            self._replace([frozen], list[Widget](segments))
            for segment in segments:
                self._freeze_later(segment)

    def _replace(self, old: list[Widget], new: list[Widget]) -> None:
        """Mount ``new`` hidden before ``old[0]``, then show it and drop ``old`` in one step: a
        widget is laid out only once mounted, and a frame between the two steps would show
        neither (or both)."""
        swap = _Swap(old, new)
        self._swaps.append(swap)
        for widget in new:
            widget.display = False
        mounting = self.mount_all(new, before=old[0])

        async def show() -> None:
            await mounting
            if swap not in self._swaps:
                return  # called off by a thaw
            self._swaps.remove(swap)
            for widget in new:
                widget.display = True
            for widget in swap.old:
                if widget.parent is self:
                    _drop(widget)

        self.call_next(show)

    def _shown(self, child: Widget) -> bool:
        """Whether ``child`` draws part of the answer, now or once mounted (not on its way out)."""
        if self._swap_showing(child) is not None:
            return True
        return child.display and not any(child in swap.old for swap in self._swaps)

    def _swap_showing(self, child: Widget) -> _Swap | None:
        return next((swap for swap in self._swaps if child in swap.new), None)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """As a column arranges; captured lines of another width are drawn again, once the
        layout is done. Not on a resize event: Textual sends none to a widget that a layout
        made visible at a size the map it reads had already given it."""
        arrangement = super().arrange(size, optimal)
        if not self.public and self._stale(size.width):
            self.call_later(self._refit)
        return arrangement

    def _refit(self) -> None:
        if self._stale(self.content_region.width):
            self.thaw()

    def _stale(self, width: int) -> bool:
        """Whether lines shown (or about to be) were captured at a width other than ``width``."""
        from tractui.ui.widgets.frozen import FrozenSegment

        return bool(width) and any(
            isinstance(child, FrozenSegment) and child.captured_width != width and self._shown(child)
            for child in self.children
        )
