"""Canaries: one per reach into Textual's internals (``tractui/ui/internals.py``) and per public
hook whose override depends on Textual's layout behaviour. Each fails with a message that says
what moved, so a Textual upgrade is raised on purpose (pyproject pins the minor series)."""

from __future__ import annotations

import gc

import textual
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Offset, Region, Size, Spacing
from textual.layout import DockArrangeResult, WidgetPlacement
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownFence

from tractui.ui import internals
from tractui.ui.widgets.chat_log import ChatLog
from tractui.ui.widgets.column import Column, LaidOut
from tractui.ui.widgets.column import stacked_height as column_height

MOVED = f"Textual {textual.__version__} moved what tractui/ui/internals.py relies on: "


class _Lines(App[None]):
    CSS = "#column { height: auto; } #md { height: auto; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="log"):
            yield Column(*(Static(f"line {i}") for i in range(40)), id="column")
        yield Markdown("```python\nx = 1\n```", id="md")


async def test_capture_strips_draws_a_subtree_scrolled_out_of_view_too():
    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        strips = internals.capture_strips(app.query_one("#column"))
        texts = [strip.text.strip() for strip in strips]
        assert texts[0] == "line 0" and texts[-1] == "line 39", MOVED + "Compositor.reflow / render_strips"


async def test_screen_strips_are_the_lines_on_screen():
    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        strips = internals.screen_strips(app.screen)
        assert len(strips) == 10 and strips[0].text.strip() == "line 0", MOVED + "Screen._compositor.render_strips"


async def test_anchor_released_says_the_user_scrolled_away_from_the_end():
    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        log = app.query_one("#log", VerticalScroll)
        log.anchor()
        await pilot.pause()
        assert internals.anchor_released(log) is False, MOVED + "Widget._anchor_released"
        log.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        assert internals.anchor_released(log) is True, MOVED + "Widget._anchor_released (set on scrolling away)"


async def test_forget_painted_lines_empties_what_a_painted_widget_keeps():
    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        column = app.query_one("#column")
        painted = [line for line in column.query(Static) if line._styles_cache._cache]
        assert painted, MOVED + "Widget._styles_cache._cache (a painted widget's kept lines)"
        internals.forget_painted_lines(column)
        assert not any(line._styles_cache._cache for line in column.query(Static)), MOVED + "StylesCache.clear"
        await pilot.pause()  # painted again when shown: nothing is lost
        assert internals.screen_strips(app.screen)[0].text.strip() == "line 0"


async def test_highlighted_code_is_the_fences_highlighted_content():
    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        fence = app.query_one(MarkdownFence)
        code = internals.highlighted_code(fence)
        assert code.plain.strip() == "x = 1", MOVED + "MarkdownFence._highlighted_code"
        assert code.spans, MOVED + "MarkdownFence._highlighted_code is no longer highlighted"


async def test_watch_painted_sees_each_update_and_painted_rows_reads_it():
    app = _Lines()
    rows: list[str] = []

    def painted(screen, renderable) -> None:
        if renderable is not None:
            rows.extend(s.text for line in internals.painted_rows(renderable, 0, 10) for s in line)

    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        internals.watch_painted(app, painted)
        app.query_one("#column").children[0].update("changed")  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.pause()
        assert any("changed" in row for row in rows), MOVED + "App._display or ChopsUpdate.chops/spans"


async def test_paints_all_of_tells_a_frame_of_the_view_from_one_of_its_scrollbar():
    app = _Lines()
    updates: list[object] = []
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        log = app.query_one("#log", VerticalScroll)
        view = log.scrollable_content_region
        internals.watch_painted(app, lambda screen, update: updates.append(update) if update else None)
        log.scroll_to(y=view.height, animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        assert any(internals.paints_all_of(update, view) for update in updates), (
            MOVED + "ChopsUpdate.spans or LayoutUpdate.region"
        )
        updates.clear()
        log.vertical_scrollbar.refresh()
        assert internals.paint_now(log.vertical_scrollbar)
        (thumb,) = updates
        assert len(internals.painted_rows(thumb, view.y, view.bottom)) >= view.height  # a sliver of every row
        assert not internals.paints_all_of(thumb, view), MOVED + "ChopsUpdate.spans (a span's columns)"


async def test_watch_painted_does_not_report_an_update_dropped_in_a_batch():
    """``App._display`` drops an update made while a batch update is open (the batch's end
    redraws): it was never written, and ``watch_painted`` says so (None)."""
    app = _Lines()
    seen: list[object] = []
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        internals.watch_painted(app, lambda screen, update: seen.append(update))
        update = "a frame"
        with app.batch_update():
            app._display(app.screen, update)
        app._display(app.screen, update)
        assert seen == [None, update], MOVED + "App._batch_count"


class _Label(Widget):
    """Its text changes without a layout, as a prompt's line does."""

    text: Reactive[str] = Reactive("")

    def render(self) -> str:
        return self.text


class _Labels(App[None]):
    CSS = "_Label { height: 1; }"

    def compose(self) -> ComposeResult:
        yield _Label(id="a")
        yield _Label(id="b")


async def test_paint_now_draws_a_widgets_marked_lines_before_the_screens_update():
    app = _Labels()
    outputs: list[str] = []

    def painted(screen, update) -> None:
        if update is not None:
            outputs.append(internals.update_output(app, update))

    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        internals.watch_painted(app, painted)
        a, b = app.query_one("#a", _Label), app.query_one("#b", _Label)
        b.text = "unchanged"  # marked, not painted now: paint_now paints only what it is given
        with app.batch_update():  # a batch holds back the screen's updates, not this one
            a.text = "changed"
            assert internals.paint_now(a), MOVED + "Widget._repaint_regions / Screen._layout_widgets"
        assert len(outputs) == 1 and "changed" in outputs[0], MOVED + "Compositor.update_widgets / render_update"
        assert "unchanged" not in outputs[0]
        assert not internals.paint_now(a), "nothing marked: nothing painted"
        a.text = "moved"
        a.refresh(layout=True)
        assert not internals.paint_now(a), MOVED + "Widget._layout_required (a pending layout must hold it)"


async def test_frame_output_draws_the_screen_and_update_output_an_update():
    import pyte

    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        terminal = pyte.Screen(30, 10)
        stream = pyte.Stream(terminal)
        stream.feed(internals.frame_output(app.screen))
        assert terminal.display[0].rstrip() == "line 0", MOVED + "LayoutUpdate.render_segments"
        internals.watch_painted(
            app, lambda screen, update: stream.feed(internals.update_output(app, update)) if update else None
        )
        app.query_one("#column").children[1].update("changed")  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.pause()
        assert terminal.display[1].rstrip() == "changed", MOVED + "CompositorUpdate.render_segments"


async def test_send_key_reaches_the_focused_widget():
    pressed: list[str] = []

    class Keys(App[None]):
        def on_key(self, event) -> None:
            pressed.append(event.key)

    app = Keys()
    async with app.run_test() as pilot:
        internals.send_key(app, "z")
        await pilot.pause()
        await pilot.pause()
        assert pressed == ["z"], MOVED + "App._driver.send_message"


async def test_an_append_hands_the_grown_last_block_to_update_from_block_with_its_items():
    """``GrowsInPlace``: ``Markdown.append`` re-parses the last block and hands it to the mounted
    one's ``_update_from_block``; ``list_items`` reads a new list's items from it."""
    from markdown_it import MarkdownIt

    from tractui.ui.widgets.answer_segment import AnswerSegment

    class Lists(App[None]):
        def compose(self) -> ComposeResult:
            yield AnswerSegment()  # a segment is only ever appended to, from empty

    app = Lists()
    async with app.run_test(size=(30, 10)) as pilot:
        segment = app.query_one(AnswerSegment)
        await segment.append("- a\n- b\n")
        await pilot.pause()
        bullets = segment.children[0]
        first = bullets.children[0]
        await segment.append("- c\n")
        await pilot.pause()
        # grown in place: the list and its first row are the ones mounted before
        assert segment.children[0] is bullets and bullets.children[0] is first, MOVED + "_update_from_block"
        assert len(bullets.children) == 3
        token = MarkdownIt().parse("- x\n")[0]
        block = Markdown.BLOCKS["bullet_list_open"](segment, token)
        assert isinstance(getattr(block, "_blocks", None), list), MOVED + "MarkdownBlock._blocks"
        assert internals.list_items(block) is block._blocks


async def test_item_row_reads_the_bullet_and_blocks_of_a_row_a_list_composed():
    """``item_row``: Textual composes a list item as ``Horizontal(MarkdownBullet, Vertical(*blocks))``,
    its parts kept in ``_pending_children`` until mounted."""
    from markdown_it import MarkdownIt

    class Lists(App[None]):
        def compose(self) -> ComposeResult:
            yield Markdown()

    app = Lists()
    async with app.run_test(size=(30, 10)):
        markdown = app.query_one(Markdown)
        tokens = MarkdownIt().parse("- a\n- b\n")
        block = Markdown.BLOCKS["bullet_list_open"](markdown, tokens[0])
        item = Markdown.BLOCKS["list_item_unordered_open"](markdown, tokens[1], "• ")
        paragraph = Markdown.BLOCKS["paragraph_open"](markdown, tokens[2])
        item._blocks.append(paragraph)
        block._blocks.append(item)
        rows = list(block.compose())
        assert len(rows) == 1, MOVED + "MarkdownBulletList.compose"
        assert internals.item_row(rows[0]) == ("• ", [paragraph]), MOVED + "the row of a list item"
        assert internals.item_row(paragraph) is None


def test_virtual_size_is_a_reactive_laid_out_overrides():
    """``LaidOut`` redeclares it without ``layout=True``: the override only means something while
    Textual's own is a reactive that asks for a layout."""
    own = Widget.__dict__.get("virtual_size")
    assert isinstance(own, Reactive) and own._layout, MOVED + "Widget.virtual_size (a layout reactive)"
    assert isinstance(LaidOut.__dict__["virtual_size"], Reactive)
    assert LaidOut.__dict__["virtual_size"]._layout is False


async def test_arrange_is_what_a_layout_pass_asks_a_scroll_container():
    """``ChatLog.arrange`` sets the scroll offset inside the layout pass: Textual must still lay a
    scroll view's children out through ``arrange``."""
    calls: list[Size] = []

    class Counted(ChatLog):
        def arrange(self, size: Size, optimal: bool = False):  # type: ignore[no-untyped-def]
            calls.append(size)
            return super().arrange(size, optimal)

    class Log(App[None]):
        def compose(self) -> ComposeResult:
            yield Counted()

    app = Log()
    async with app.run_test(size=(30, 10)) as pilot:
        await app.query_one(Counted).mount_all([Static(f"line {i}") for i in range(5)])
        await pilot.pause()
        assert calls, MOVED + "Widget.arrange (no longer called by the layout pass)"


async def test_a_columns_stacked_height_is_its_arrangements_total_region_height():
    """``column.stacked_height`` reads the height Textual's ``total_region`` gives from the
    placements alone: the two must agree for every kind of child a column can hold (margins,
    a negative one, docked, overlaid, hidden, wrapped), together and each alone."""

    class Held(App[None]):
        CSS = """
        .a { height: 3; margin: 1 0 2 0; }
        .b { height: 5; margin: 2 0; }
        .c { height: 1; margin: -1 0 0 0; }
        .d { dock: top; height: 2; }
        .e { overlay: screen; height: 4; }
        .f { display: none; }
        .g { height: auto; margin: 0 0 3 0; }
        """

        def compose(self) -> ComposeResult:
            ids = "abcdefg"
            with Column(id="all"):
                for name in ids:
                    yield Static(f"{name} " * 30, classes=name)
            for i, name in enumerate(ids):  # each alone too, and none
                with Column(id=f"only-{i}"):
                    yield Static(f"{name} " * 30, classes=name)
            yield Column(id="empty")

    app = Held()
    async with app.run_test(size=(40, 60)) as pilot:
        await pilot.pause()
        for column in app.query(Column):
            for width in (10, 40):
                arrangement = column.arrange(Size(width, 0))
                textuals = DockArrangeResult(arrangement.placements, arrangement.widgets, arrangement.scroll_spacing)
                assert column_height(arrangement) == textuals.total_region.height, (
                    MOVED + f"DockArrangeResult.total_region ({column.id} at {width})"
                )


async def test_the_linux_driver_installs_its_suspend_and_resume_handlers():
    """``resume_only_after_suspend``: the driver handles SIGTSTP and SIGCONT with
    ``_sigtstp_application`` and ``_sigcont_application``, installed when it is made."""
    import signal

    from textual.drivers.linux_driver import LinuxDriver

    before = {number: signal.getsignal(number) for number in (signal.SIGTSTP, signal.SIGCONT)}
    try:
        driver = LinuxDriver(App(), debug=False, mouse=False, size=(80, 24))
        assert signal.getsignal(signal.SIGTSTP) == driver._sigtstp_application, MOVED + "the SIGTSTP handler"
        assert signal.getsignal(signal.SIGCONT) == driver._sigcont_application, MOVED + "the SIGCONT handler"
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


# coordinates and sizes around the grid's squares (100 by 20 cells) as well as anywhere
_edges = st.sampled_from([-101, -100, -99, -21, -20, -1, 0, 1, 19, 20, 21, 99, 100, 101, 199, 200])
_small = st.one_of(st.integers(-1000, 1000), _edges)
_sizes = st.one_of(st.integers(-2, 250), _edges.filter(lambda size: size >= 0))
_regions = st.builds(Region, _small, _small, _sizes, _sizes)
_offsets = st.builds(Offset, st.integers(-30, 30), st.integers(-30, 30))
_margins = st.builds(Spacing, *(st.integers(-3, 5) for _ in range(4)))
_placements = st.lists(st.tuples(_regions, _offsets, _margins, st.booleans(), st.booleans()), max_size=12)


@st.composite
def _stacked(draw: st.DrawFn) -> list[tuple[Region, Offset, Spacing, bool, bool]]:
    """Placements one below the other, as a column or the chat log arranges its children."""
    placements, y = [], draw(st.integers(-50, 50))
    for _ in range(draw(st.integers(0, 40))):
        margin = Spacing(draw(st.integers(0, 3)), 0, draw(st.integers(0, 3)), draw(st.integers(0, 2)))
        height = draw(st.one_of(st.integers(0, 60), st.sampled_from([19, 20, 21, 400])))
        region = Region(margin.left, y + margin.top, draw(st.sampled_from([30, 99, 100, 120])), height)
        placements.append((region, Offset(0, 0), margin, False, False))
        y = region.bottom + margin.bottom
    return placements


def _compare_placement_lists(placements, queries, spacing) -> internals.PlacementList:
    made = [
        WidgetPlacement(region, offset, margin, object(), order, fixed=fixed, overlay=overlay)
        for order, (region, offset, margin, fixed, overlay) in enumerate(placements)
    ]
    textuals = DockArrangeResult(made, set(), spacing)
    ours = internals.listed(DockArrangeResult(made, set(), spacing))
    assert isinstance(ours.spatial_map, internals.PlacementList)
    assert ours.total_region == textuals.total_region, MOVED + "SpatialMap.insert (total_region)"
    for query in [*queries, textuals.total_region]:
        assert ours.spatial_map.get_values_in_region(query) == textuals.spatial_map.get_values_in_region(query), (
            MOVED + "SpatialMap.get_values_in_region"
        )
        assert ours.get_visible_placements(query) == textuals.get_visible_placements(query), (
            MOVED + "DockArrangeResult.get_visible_placements"
        )
    return ours.spatial_map


_spacings = st.builds(Spacing, *(st.integers(0, 3) for _ in range(4)))


@settings(max_examples=300, deadline=None)
@given(_placements, st.lists(_regions, min_size=1, max_size=4), _spacings)
def test_a_placement_list_answers_as_textuals_spatial_map(placements, queries, spacing):
    """``internals.PlacementList`` stands in for Textual's grid of placements: for distinct
    placements (an arrangement places each widget once) the same total region, and for any
    region the same values and visible placements, in the same order."""
    _compare_placement_lists(placements, queries, spacing)


@settings(max_examples=200, deadline=None)
@given(_stacked(), st.lists(_regions, min_size=1, max_size=4), _spacings)
def test_stacked_placements_are_found_by_bisection_as_textuals_map_finds_them(placements, queries, spacing):
    found = _compare_placement_lists(placements, queries, spacing)
    assert found._stack is not None, "a column's placements take the bisection"


async def test_columns_and_the_chat_log_arrange_with_placement_lists():
    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        column = app.query_one("#column", Column)
        assert isinstance(column.arrange(column.content_region.size).spatial_map, internals.PlacementList)
        log = ChatLog()
        await app.mount(log)
        await log.mount(Static("x"))
        await pilot.pause()
        assert isinstance(log.arrange(log.content_region.size).spatial_map, internals.PlacementList)


_strips = st.lists(st.text(alphabet="ab あ", min_size=1, max_size=6), max_size=5).map(
    lambda texts: Strip([Segment(text) for text in texts])
)


@settings(max_examples=300, deadline=None)
@given(_strips, st.lists(st.integers(0, 40), max_size=6), st.booleans())
def test_a_divided_strip_is_the_same_lines_with_or_without_the_strips_cache(strip, cuts, lazily):
    """Any cuts: past the end, none, the end alone, given as a generator; unsorted ones fail alike."""

    def outcome(divide, strip: Strip, cuts) -> object:
        try:
            return [(line.text, line.cell_length) for line in divide(strip, cuts)]
        except AssertionError:  # rich's Segment.divide asserts its cuts are in order
            return AssertionError

    ours = outcome(internals._divide_uncached_whole, strip, (cut for cut in cuts) if lazily else cuts)
    assert ours == outcome(internals._divide, Strip(list(strip), strip.cell_length), cuts)


def test_a_line_alone_on_its_row_is_freed_as_soon_as_it_is_dropped():
    internals.uncycle_painted_strips()
    internals.uncycle_painted_strips()
    assert Strip.divide is internals._divide_uncached_whole, "installed once"
    gc.collect()
    gc.disable()
    try:
        for beyond in ([], [40], [40, 80]):  # the compositor's cuts may run past the line's end
            strip = Strip([Segment("a line alone")])
            assert strip.divide([strip.cell_length, *beyond]) == [strip]
            del strip
            assert gc.collect() == 0, f"the line waited for a garbage collection (cuts past it: {beyond})"
    finally:
        gc.enable()


async def test_the_compositor_paints_each_line_through_strip_divide():
    calls: list[int] = []
    installed = Strip.divide

    def counted(strip: Strip, cuts):
        calls.append(1)
        return installed(strip, cuts)

    app = _Lines()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        Strip.divide = counted
        try:
            app.screen.refresh()
            await pilot.pause()
        finally:
            Strip.divide = installed
    assert calls, MOVED + "Compositor._render_chops no longer divides painted lines with Strip.divide"


def _read_by_the_linux_driver(*reads: bytes) -> list[object]:
    """What Textual's Linux driver makes of ``reads`` from its terminal, its input thread run on a pipe."""
    import os
    import signal
    import threading
    import time

    from textual.drivers.linux_driver import LinuxDriver

    before = {number: signal.getsignal(number) for number in (signal.SIGTSTP, signal.SIGCONT)}
    read_end, write_end = os.pipe()
    messages: list[object] = []
    raised: list[BaseException] = []
    try:
        driver = LinuxDriver(App(), debug=False, mouse=False, size=(80, 24))
        driver.fileno = read_end
        driver.process_message = messages.append  # type: ignore[method-assign]

        def run() -> None:
            try:
                driver.run_input_thread()
            except BaseException as error:
                raised.append(error)

        thread = threading.Thread(target=run)
        thread.start()
        for data in reads:
            os.write(write_end, data)
            time.sleep(0.15)
        driver.exit_event.set()
        thread.join(10)
        assert not thread.is_alive()
    finally:
        os.close(write_end)
        os.close(read_end)
        for number, handler in before.items():
            signal.signal(number, handler)
    if raised:
        raise raised[0]
    return messages


async def test_the_linux_driver_decodes_and_parses_through_what_mend_terminal_input_replaces():
    """``mend_terminal_input``: the driver's input thread makes its decoder with its module's
    ``getincrementaldecoder`` and its parser with its module's ``XTermParser``."""
    from textual import events

    internals.mend_terminal_input()
    keys = _read_by_the_linux_driver(b"a\xe9b\xc3", b"\xa9", b"\x1b[200~x \x1b[31my\x1b[201~")
    typed = [message.character for message in keys if isinstance(message, events.Key)]
    assert typed == ["a", "\ufffd", "b", "é"], MOVED + "LinuxDriver.run_input_thread's decoder"
    pastes = [message.text for message in keys if isinstance(message, events.Paste)]
    assert pastes == ["x \x1b[31my"], MOVED + "LinuxDriver.run_input_thread's parser"


def test_textuals_parser_takes_a_paste_between_its_brackets():
    """``WholePastes`` lets Textual's parser see the brackets of a paste and nothing between
    them: the start bracket puts it in its paste mode, the end bracket ends it with an empty
    ``Paste`` (dropped); the two must still be the only way in and out of it."""
    from textual import events
    from textual._xterm_parser import XTermParser

    def events_of(parser: XTermParser, data: str) -> list[tuple[str, str | None]]:
        return [
            (type(event).__name__, event.text if isinstance(event, events.Paste) else getattr(event, "key", None))
            for at in range(len(data))
            for event in parser.feed(data[at])
        ]

    assert events_of(XTermParser(), "\x1b[200~\x1b[201~a") == [("Paste", ""), ("Key", "a")], (
        MOVED + "XTermParser's bracketed paste"
    )
    assert events_of(XTermParser(), "\x1b[200~xy\x1b[201~") == [("Paste", "xy")]


_keyboard = st.lists(
    st.one_of(
        st.sampled_from(
            ["\x1b", "\x1b[A", "\x1b[1;5C", "\x1b[<0;3;4M", "\x1bOP", "\x1b[200~x\x1b[201~", "\x1b[I", "\r"]
        ),
        st.sampled_from(["\x1b[", "[", "2", "0", "1", "~", "\t", "\x7f", "a", "é"]),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_keyboard, st.integers(1, 8))
def test_whole_pastes_parses_as_textuals_parser_where_no_esc_is_pasted(data: str, size: int):
    """Keys, mouse reports, focus and pastes without an ESC inside: the same events, in the same
    order, however the input is split between reads."""
    from textual._xterm_parser import XTermParser

    def events_of(parser: XTermParser) -> list[str]:
        found: list[str] = []
        for at in range(0, len(data), size):
            found += (repr(event) for event in parser.feed(data[at : at + size]))
        found += (repr(event) for event in parser.feed(""))
        return found

    assert events_of(internals.WholePastes()) == events_of(XTermParser()), MOVED + "XTermParser.parse"


def test_a_kitty_key_outside_unicode_is_no_key_and_the_parser_reads_on():
    """Textual's parser raised on ``CSI 1114112 u`` (``chr`` out of range) and, a generator, never
    read another key; ``WholePastes`` reads it as no key. Textual still reads kitty keys through
    the method it overrides."""
    from textual import events

    parser = internals.WholePastes()
    found = [
        event.key
        for data in ("\x1b[1114112u", "\x1b[97;1;99999999999999999999u", "a", "\x1b[97;5u")
        for event in parser.feed(data)
        if isinstance(event, events.Key)
    ]
    assert [key for key in found if key != "<ignore>"] == ["a", "ctrl+a"], MOVED + "XTermParser._parse_extended_key"
