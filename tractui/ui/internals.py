"""Every reach into Textual's private API, in one place.

Each function here has a canary test (``tests/test_textual_internals.py``)
that fails with a clear message when a Textual release moves what it uses;
Textual is pinned to the minor series those tests passed on (pyproject). The
overrides of public hooks that depend on Textual's layout behaviour
(``LaidOut.virtual_size``, ``ChatLog.arrange``) have canaries there too. When
an upgrade breaks one, ``/set ui.markdown public`` draws answers with public
Textual only (``Markdown.append``) while the fast path is mended. The two
process-wide changes the app installs (``remember_line_breaks``,
``uncycle_painted_strips``) give Textual's own results, which property tests
check against the originals. A third, ``mend_terminal_input``, changes how the
Linux driver reads the terminal, where Textual's own way ends the app or loses
a paste's order.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import signal
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Sequence
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import textual.content
import textual.drivers.linux_driver
from rich.cells import cell_len
from textual import events
from textual._compositor import ChopsUpdate, Compositor, CompositorUpdate, LayoutUpdate
from textual._parser import ParseEOF, ParseTimeout, Peek1, Read1, TokenCallback
from textual._spatial_map import SpatialMap
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.containers import Vertical
from textual.drivers.linux_driver import LinuxDriver
from textual.keys import Keys
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets._markdown import MarkdownBullet

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.app import App
    from textual.content import Content
    from textual.geometry import Offset, Region
    from textual.layout import DockArrangeResult, WidgetPlacement
    from textual.message import Message
    from textual.screen import Screen
    from textual.widgets.markdown import MarkdownBlock, MarkdownFence

Painted = Callable[["Screen[object]", "RenderableType | None"], None]


def capture_strips(widget: Widget) -> list[Strip]:
    """The lines ``widget`` and its children draw at their current layout, including the part
    scrolled out of view: a compositor of its own lays the subtree out at the widget's size."""
    compositor = Compositor()
    compositor.reflow(widget, widget.outer_size)
    return compositor.render_strips()


class GrowsInPlace:
    """Mixin for a Markdown block that a streamed append may update in place: ``grow(block)``
    (True if it did) is tried before Textual's replacement of the whole block.

    ``Markdown.append`` re-parses the last block and hands the result to the mounted
    block's ``_update_from_block``, which removes it and mounts the new one: a list of a
    dozen items was built, styled and laid out again, every widget of it, on every frame.
    """

    async def grow(self, block: MarkdownBlock) -> bool:
        raise NotImplementedError

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if not await self.grow(block):
            await super()._update_from_block(block)  # type: ignore[misc]


def list_items(block: MarkdownBlock) -> list[MarkdownBlock]:
    """The items of a list block not composed yet (mounting it composes them into rows)."""
    return block._blocks


def item_row(row: Widget) -> tuple[str, list[Widget]] | None:
    """The bullet and the blocks of a row that a Markdown list composed for one of its items
    (a bullet beside a column of the item's blocks), before it is mounted; None for any
    other widget."""
    match row._pending_children:
        case [MarkdownBullet() as bullet, Vertical() as column]:
            return bullet.symbol, column._pending_children
    return None


class PlacementList(SpatialMap["WidgetPlacement"]):
    """A spatial map that finds its placements without filing them in a grid.

    Textual files each placement of an arrangement under every square of 100 by 20
    cells it covers, in a list per square, the first time a layout asks what is
    visible: a column holding a long answer built a list for every 20 rows of it,
    for each container around it, on every layout of a stream (figures: docs/ui.md,
    "Speed"). Here the placements are kept as the squares they span, and a query
    gives the same values in the same order (for distinct placements, as an
    arrangement's are): each ordered by the first square of the query it shares,
    as the grid's squares are visited, then as inserted. Placements stacked
    downwards (each starting and ending no higher than the one before, as a
    column's and the chat log's are) are found by bisection, others by a walk.
    ``tests/test_textual_internals.py`` checks it against Textual's map.
    """

    def __init__(self) -> None:
        super().__init__()
        self._squares: list[tuple[int, int, int, int, WidgetPlacement]] = []  # x, last x, y, last y
        self._stack: tuple[list[int], list[int]] | None = None  # first and last rows, when stacked

    def _square_span(self, region: Region) -> tuple[int, int, int, int]:
        x, y, width, height = region
        grid_width, grid_height = self._grid_size
        return x // grid_width, (x + width - 1) // grid_width, y // grid_height, (y + height - 1) // grid_height

    def insert(self, regions_and_values: Iterable[tuple[Region, Offset, bool, bool, WidgetPlacement]]) -> None:
        total_region = self.total_region
        for region, offset, fixed, overlay, value in regions_and_values:
            if fixed:
                self._fixed.append(value)
                continue
            if not overlay:
                total_region = total_region.union(region)
            self._squares.append((*self._square_span(region + offset), value))
        self.total_region = total_region
        firsts = [square[2] for square in self._squares]
        lasts = [square[3] for square in self._squares]
        stacked = all(a <= b for a, b in pairwise(firsts)) and all(a <= b for a, b in pairwise(lasts))
        self._stack = (firsts, lasts) if stacked else None

    def get_values_in_region(self, region: Region) -> list[WidgetPlacement]:
        left, right, top, bottom = self._square_span(region)
        squares = self._squares
        if self._stack is None:
            candidates = range(len(squares))
        else:  # stacked: the squares before start end above the query, those from end on begin below it
            firsts, lasts = self._stack
            candidates = range(bisect_left(lasts, top), bisect_right(firsts, bottom))
        found = []
        for index in candidates:
            x, last_x, y, last_y, value = squares[index]
            first_x, first_y = max(x, left), max(y, top)
            if first_x <= min(last_x, right) and first_y <= min(last_y, bottom):
                found.append((first_x, first_y, index, value))
        found.sort(key=lambda entry: entry[:3])
        return [*self._fixed, *(entry[3] for entry in found)]


def listed(arrangement: DockArrangeResult) -> DockArrangeResult:
    """``arrangement``, its visible placements and extent found by a ``PlacementList``."""
    if arrangement._spatial_map is None:
        placements = PlacementList()
        placements.insert(
            (placement.region.grow(placement.margin), placement.offset, placement.fixed, placement.overlay, placement)
            for placement in arrangement.placements
        )
        arrangement._spatial_map = placements
    return arrangement


LineDivider = Callable[[str, int, bool], list[int]]

BREAKS_KEPT = 32  # lines whose breaks a LineBreaks remembers
BREAKS_CHARS = 1 << 20  # and at most this many characters of them in all


class LineBreaks:
    """rich's ``divide_line`` as Textual's ``Content`` calls it, remembering recent lines.

    Textual wraps a paragraph twice a frame (to measure it, then to draw it), each
    time from its first word, and a streamed paragraph is a new ``Content`` each
    time it grows: the breaks of a long one were found again and again (figures:
    docs/ui.md, "Speed"). A line seen before gets its breaks back; a line that
    extends one seen before keeps that one's breaks up to its last break before a
    word and finds the rest. ``tests/test_line_breaks.py`` holds it to ``divide_line``.
    """

    def __init__(self, divide: LineDivider) -> None:
        self.divide = divide
        self._kept: OrderedDict[tuple[str, int, bool], list[int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()  # Textual wraps on its event loop; a worker thread may too

    def __call__(self, text: str, width: int, fold: bool = True) -> list[int]:
        key = (text, width, fold)
        with self._lock:
            breaks = self._kept.get(key)
            if breaks is None:
                breaks = self._extended(text, width, fold)
                self._keep(key, breaks)
            else:
                self._kept.move_to_end(key)
            return breaks.copy()

    def _extended(self, text: str, width: int, fold: bool) -> list[int]:
        """The breaks of ``text`` from those of the latest kept line it extends.

        A break before a word (after a space, past any leading spaces) stays however
        the text after it grows: the words before it are whole, the line it starts is
        a fresh one, and a longer word fits no better. Only before a word that fits
        the width, though: one that is folded gets a break at each of its pieces, and
        rich gives none at the very start of a text (``if start``), so a piece left
        empty (a character wider than the line) would lose its break.
        """
        base = next(
            (
                (kept, breaks)
                for (kept, kept_width, kept_fold), breaks in reversed(self._kept.items())
                if kept_width == width and kept_fold == fold and len(kept) < len(text) and text.startswith(kept)
            ),
            None,
        )
        if base is None:
            return self.divide(text, width, fold)
        lead = len(text) - len(text.lstrip())
        for index in range(len(base[1]) - 1, -1, -1):
            at = base[1][index]
            if at > lead and text[at - 1].isspace() and not text[at].isspace() and _fits(text, at, width):
                return [*base[1][: index + 1], *(at + tail for tail in self.divide(text[at:], width, fold))]
        return self.divide(text, width, fold)

    def _keep(self, key: tuple[str, int, bool], breaks: list[int]) -> None:
        if len(key[0]) > BREAKS_CHARS:  # kept, it would push out every other line and itself
            return
        self._kept[key] = breaks
        self._chars += len(key[0])
        while len(self._kept) > BREAKS_KEPT or self._chars > BREAKS_CHARS:
            (text, _, _), _ = self._kept.popitem(last=False)
            self._chars -= len(text)


_WORD = re.compile(r"\S+")  # a word as rich's ``words`` finds it, without the spaces after it


def _fits(text: str, at: int, width: int) -> bool:
    """The word at ``at`` fits a line of ``width`` cells: rich does not fold it."""
    word = _WORD.match(text, at)
    return word is not None and cell_len(word.group()) <= width


def remember_line_breaks() -> None:
    """Let Textual's ``Content`` find its line breaks through a ``LineBreaks`` (once)."""
    if not isinstance(textual.content.divide_line, LineBreaks):
        textual.content.divide_line = LineBreaks(textual.content.divide_line)


_divide = Strip.divide


def _divide_uncached_whole(strip: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    """``Strip.divide``, except that a strip cut only at its end is not remembered in itself."""
    within = [cut for cut in cuts if cut <= strip.cell_length]
    if within == [strip.cell_length]:
        return [strip]
    return _divide(strip, within)


def uncycle_painted_strips() -> None:
    """Keep the lines the screen paints out of reference cycles (once).

    The compositor divides every painted line at the screen's cuts; a line
    alone on its row is cut only at its end, and ``Strip.divide`` remembers
    that answer, the line itself, in the line's own cache: a cycle, so every
    line painted was freed only by a garbage collection, and each collection
    walked them all (figures: docs/ui.md, "Speed"). Such a line is now given
    back without being remembered, and freed as soon as it is dropped.
    """
    if Strip.divide is _divide:
        Strip.divide = _divide_uncached_whole  # type: ignore[method-assign, assignment]


def screen_strips(screen: Screen[object]) -> list[Strip]:
    """The lines the screen shows now, as its compositor last arranged them."""
    return screen._compositor.render_strips()


def anchor_released(widget: Widget) -> bool:
    """The user scrolled an anchored widget away from its end (``is_anchored`` stays true)."""
    return widget._anchor_released


def forget_painted_lines(widget: Widget) -> None:
    """Let ``widget`` and its descendants drop the lines they keep from their last paint.

    Textual keeps them after a widget is removed, until a garbage collection finds
    the widget's reference cycles, and every line keeps caches of its own: each
    collection meanwhile walked them all (figures: docs/ui.md, "Speed")."""
    for node in widget.walk_children(Widget, with_self=True):
        node._styles_cache.clear()


def paint_now(widget: Widget) -> bool:
    """Paint the lines ``widget`` marked for repaint at once, instead of with the screen's next
    update (up to a frame later, then behind a layout of the whole screen, and never while a
    batch update is open).

    Only the screen rows of those lines are drawn, from the layout on screen, so a half-made
    batch elsewhere is not shown; and only when no pending layout can move ``widget`` (its
    own, an ancestor's, the screen's): then the next update draws it. True if painted."""
    app = widget.app
    screen = widget.screen
    if app.is_inline or screen is not app.screen or not widget._repaint_regions:
        return False
    compositor = screen._compositor
    if widget not in compositor.visible_widgets:
        return False
    if screen._layout_required and not screen._layout_widgets:
        return False
    for node in widget.ancestors_with_self:
        if not isinstance(node, Widget):
            break
        if node in screen._layout_widgets or (node is not screen and node._layout_required):
            return False
    compositor.update_widgets({widget})
    update = compositor.render_update(screen_stack=app._background_screens)
    batched, app._batch_count = app._batch_count, 0
    try:
        app._display(screen, update)
    finally:
        app._batch_count = batched
    return True


def highlighted_code(fence: MarkdownFence) -> Content:
    """The fence's code as Textual highlighted it for the current theme."""
    return fence._highlighted_code


def watch_painted(app: App[object], painted: Painted) -> None:
    """Call ``painted(screen, update)`` after every update the app hands its driver (headless:
    produced, not written); ``update`` is None when nothing changed, or when the app dropped it
    (an update made inside ``batch_update`` is not written: the batch's end redraws)."""
    display = app._display

    def wrapped(screen: Screen[object], renderable: RenderableType | None) -> None:
        dropped = app._batch_count > 0
        display(screen, renderable)
        painted(screen, None if dropped else renderable)

    app._display = wrapped  # type: ignore[method-assign]


def painted_rows(renderable: RenderableType, top: int, bottom: int) -> list[list[Strip]]:
    """The strips an update paints on screen rows ``top``..``bottom - 1``, row by row."""
    if isinstance(renderable, ChopsUpdate):
        return [
            [strip for strip in renderable.chops[y].values() if strip]
            for y, _, _ in renderable.spans
            if top <= y < bottom
        ]
    region = getattr(renderable, "region", None)
    strips = getattr(renderable, "strips", None)
    if region is None or strips is None:
        return []
    return [list(line) for y, line in enumerate(strips, region.y) if top <= y < bottom]


def paints_all_of(renderable: RenderableType, region: Region) -> bool:
    """Whether an update ``watch_painted`` saw draws every cell of ``region`` (screen
    coordinates): a whole frame does; a frame of changed parts only if they cover it, row by
    row, from its left edge to its right."""
    if isinstance(renderable, ChopsUpdate):
        spans: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in renderable.spans:
            spans.setdefault(y, []).append((x1, x2))
        return all(_covered(spans.get(y, []), region.x, region.right) for y in range(region.y, region.bottom))
    painted = getattr(renderable, "region", None)
    return isinstance(renderable, LayoutUpdate) and painted is not None and painted.contains_region(region)


def _covered(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether the ``spans`` of a row (each from its first column to just past its last) cover
    the columns ``start`` to ``end - 1``."""
    reach = start
    for x1, x2 in sorted(spans):
        if x1 > reach:
            break
        reach = max(reach, x2)
    return reach >= end


def update_output(app: App[object], renderable: RenderableType) -> str:
    """What the driver writes to the terminal for an update ``watch_painted`` saw (without
    the synchronized-output brackets and the cursor move around it)."""
    if not isinstance(renderable, CompositorUpdate):
        raise TypeError(f"not a screen update: {type(renderable).__name__}")
    return renderable.render_segments(app.console)


def frame_output(screen: Screen[object]) -> str:
    """What the driver would write to draw the whole screen from nothing, as it is now."""
    return LayoutUpdate([[strip] for strip in screen_strips(screen)], screen.size.region).render_segments(
        screen.app.console
    )


def send_key(app: App[object], character: str) -> None:
    """Put a key press in the app's input queue as the terminal driver would."""
    driver = app._driver
    if driver is None:
        raise RuntimeError("the app has no driver: it is not running")
    driver.send_message(events.Key(character, character))


def resume_only_after_suspend(app: App[Any], terminal_alive: Callable[[], bool]) -> None:
    """Let the terminal driver take a SIGCONT for the end of a suspension only after a SIGTSTP,
    or with its terminal still there.

    Textual's Linux driver starts its terminal mode again on any SIGCONT. A
    terminal that closes hangs up its session with SIGHUP and then SIGCONT:
    the driver started a new output thread on the terminal that was gone,
    which died at its first write; the app's writes filled its queue, and the
    app hung for good while ending. A SIGCONT after a SIGSTOP (which no
    handler sees) with the terminal still there stops the terminal mode and
    starts it again, for a shell may have written over the screen meanwhile;
    a hangup of a suspended app resumes nothing. Call from the main thread,
    in the running event loop, the driver running."""
    driver = app._driver
    if not isinstance(driver, LinuxDriver):
        return
    suspend, resume = driver._sigtstp_application, driver._sigcont_application
    suspended = False

    def on_stop(*args: object) -> None:
        nonlocal suspended
        suspended = True
        suspend(*args)

    def on_continue(*args: object) -> None:
        nonlocal suspended
        if suspended:
            suspended = False
            if terminal_alive():  # else a hangup ended the suspension: the app is ending
                resume(*args)
        elif terminal_alive():
            driver.suspend_application_mode()
            resume(*args)

    # from the event loop, not from a Python signal handler: one runs at any line of the main
    # thread, and the driver's writes it makes hung for good when that line was a write
    # holding the writer's queue lock
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTSTP, on_stop)
    loop.add_signal_handler(signal.SIGCONT, on_continue)


class WholePastes(XTermParser):
    """Textual's parser of terminal input, except that a bracketed paste is taken whole.

    Textual's parser (``_xterm_parser``) reads an ESC inside a paste as the start
    of an escape sequence and gives up on it as key presses: pasting
    ``ERROR \\x1b[31mfailed`` typed ``^[31mfailed`` as keys and then pasted
    ``ERROR `` — the text reordered, ESC turned into ``^``, a pasted tab a Tab
    key (and a pasted line break could have been Enter). Here Textual's parser
    reads everything but the text between the paste's brackets: it sees the
    start bracket (and enters its paste mode), then, when this parser has read
    the whole paste, the end bracket, and leaves its paste mode with nothing
    pasted; that empty ``Paste`` is dropped and this parser's one, the text
    exactly as the terminal sent it (less NUL, as Textual's), is given instead.
    ``tests/test_textual_internals.py`` holds it to Textual's parser on input
    without ESC inside a paste.
    """

    def parse(self, token_callback: TokenCallback[Message]) -> Generator[Read1 | Peek1, str, None]:
        handing_back = False  # the end bracket is being handed to Textual's parser

        def textuals(token: Message) -> None:
            if not (handing_back and isinstance(token, events.Paste)):
                token_callback(token)

        inner = super().parse(textuals)
        awaiting = next(inner)
        start, end = BRACKETED_PASTE_START, BRACKETED_PASTE_END
        size = len(end)
        matched = 0  # characters of the start bracket Textual's parser has just read
        while True:
            try:
                character = yield awaiting
            except (ParseTimeout, ParseEOF) as thrown:  # an ESC on its own, or the end of input
                matched = 0
                try:
                    awaiting = inner.throw(thrown)
                except StopIteration:
                    return
                continue
            awaiting = inner.send(character)
            if character == start[matched]:
                matched += 1
                if matched < size:
                    continue
            else:
                matched = 1 if character == "\x1b" else 0
                continue
            matched = 0  # Textual's parser is in its paste mode: the paste is read here
            pasted: list[str] = []
            while True:
                try:
                    character = yield self.read1()
                except ParseTimeout:
                    continue
                except ParseEOF:
                    token_callback(events.Paste("".join(pasted).replace("\x00", "")))
                    return
                pasted.append(character)
                if character == "~" and "".join(pasted[-size:]) == end:
                    break
            token_callback(events.Paste("".join(pasted[:-size]).replace("\x00", "")))
            handing_back = True
            for character in end:
                awaiting = inner.send(character)
            handing_back = False

    def _parse_extended_key(self, sequence: str) -> list[events.Key] | None:  # type: ignore[override]  # theirs is lru_cache-wrapped
        """Textual's reading of a kitty keyboard sequence, except that one naming a code point
        outside Unicode (only a broken terminal sends it) is ignored, as Textual ignores the
        sequences it maps to nothing: its ``chr`` raised, and its parser, a generator, stopped
        for good, so that no key was read again."""
        try:
            return super()._parse_extended_key(sequence)
        except (ValueError, OverflowError):
            return [events.Key(Keys.Ignore, sequence)]


def _replacing_decoder(encoding: str) -> Callable[[], codecs.IncrementalDecoder]:
    """``codecs.getincrementaldecoder``, the decoder it gives replacing what it cannot decode."""
    return partial(codecs.getincrementaldecoder(encoding), errors="replace")


def mend_terminal_input() -> None:
    """Let Textual's Linux driver read the terminal through a decoder that does not raise and a
    parser that keeps a paste whole (once).

    The driver decodes what it reads from the terminal as strict UTF-8: one byte
    that is not UTF-8 (a Latin-1 terminal's é, binary pasted without brackets)
    raised in its input thread, and the app ended with a traceback. Such a byte
    is now U+FFFD (the decoder stays incremental: a character split between two
    reads is still one character). Pastes: ``WholePastes``."""
    driver = textual.drivers.linux_driver
    if driver.getincrementaldecoder is codecs.getincrementaldecoder:
        driver.getincrementaldecoder = _replacing_decoder  # type: ignore[assignment]
    if driver.XTermParser is XTermParser:
        driver.XTermParser = WholePastes  # type: ignore[misc]
