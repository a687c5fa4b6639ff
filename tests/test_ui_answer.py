"""The answer is cut into Markdown segments at block boundaries, never inside a code fence or a list,
and finished segments are drawn from the lines they rendered."""

from __future__ import annotations

import asyncio
import gc

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.events import Mount
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown
from ui_support import build_app, screen_text

from tractui.ui.internals import capture_strips as capture
from tractui.ui.internals import watch_painted
from tractui.ui.widgets.answer import LIST_CHARS, LONG_LINE, SEGMENT_CHARS, AnswerView, line_cut, list_cut, safe_cut
from tractui.ui.widgets.answer_segment import AnswerSegment
from tractui.ui.widgets.frozen import FrozenSegment
from tractui.ui.widgets.message import AssistantMessage

BLOCK = "## Step\n\nSome prose here.\n\n```python\ndef f():\n\n    return 1\n```\n\n- one\n\n- two\n\n"


def test_safe_cut_opens_segments_only_at_paragraphs_outside_fences():
    text = "para\n\n```\ncode\n\nmore\n```\n\n- a\n\n- b\n\n    indented\n\n## head\n\n> quote\n\nnext"
    assert text[safe_cut(text, 0) :] == "next"  # not in the fence, nor before a list, indented text, heading or quote
    assert safe_cut("```\nopen fence\n\nstill code", 0) == -1
    assert safe_cut("para\n\n", 0) == -1  # the next block is not known yet


def test_line_cut_cuts_only_a_paragraph_on_one_long_line_between_words():
    line = "word " * (LONG_LINE // 5 + 10)
    cut = line_cut("intro\n\n" + line)
    assert cut == len("intro\n\n") + LONG_LINE + 5  # just past the first space at LONG_LINE, before a letter
    assert line_cut(line[:LONG_LINE]) == -1  # not that long yet
    assert line_cut("```\n" + line) == -1  # code: never cut
    assert line_cut("- " + line) == -1  # a list item, not a paragraph
    assert line_cut("word\n" + line) == -1  # more than one line: a soft break could start a list
    digits = "1 " * (LONG_LINE // 2 + 5) + "x"
    assert digits[line_cut(digits) :] == "x"  # the next part starts with a letter: a paragraph


async def test_a_long_line_streamed_is_cut_as_on_resume_into_paragraphs_with_every_word(tmp_path):
    app = build_app(tmp_path)
    line = " ".join(f"w{i}" for i in range(3 * LONG_LINE // 4))  # about three cuts
    source = "Before.\n\n" + line + "\n\nAfter."
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one("#chat")
        live = AnswerView()
        await chat.mount(live)
        for i in range(0, len(source), 997):  # fragments that cut words
            await live.write(source[i : i + 997])
        await live.finish()
        resumed = AnswerView(source)
        await chat.mount(resumed)
        frozen = await _frozen_after_layout(pilot, live)
        await _frozen_after_layout(pilot, resumed)
        sources = _sources(live)
        assert sources == _sources(resumed) and "".join(sources) == source
        assert len(sources) >= 4  # the line was cut, both times alike, each part at a word
        assert all(part[:1].isalpha() for part in sources[1:])
        rows = [row for f in frozen for row in f.lines]
        first = next(i for i, row in enumerate(rows) if "w0 " in row)
        last = next(i for i, row in enumerate(rows) if row.rstrip().endswith(f"w{3 * LONG_LINE // 4 - 1}"))
        assert " ".join(" ".join(rows[first : last + 1]).split()) == line  # every word, in order


async def test_long_streamed_answer_is_segmented_and_complete(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK) + 2) + "```python\nprint(1)\n```\n"  # ends in code
    async with app.run_test(size=(100, 40)) as pilot:
        message = AssistantMessage(app.chat.count, app.clock)
        await app.query_one("#chat").mount(message)
        answer = await message.answer()
        for i in range(0, len(source), 37):  # fragments cutting through fences and blank lines
            await answer.write(source[i : i + 37])
        growing = answer.children[-1]  # the fences are highlighted Markdown fences
        assert (
            isinstance(growing, AnswerSegment)
            and len(growing.query("MarkdownFence")) == growing.source.count("```python") > 0
        )
        await message.finish()
        await pilot.pause()
        # live or already frozen: each segment keeps its source
        sources = _sources(answer)
        assert len(sources) >= 3
        assert "".join(sources) == source == answer.text
        for part in sources:
            assert part.count("```") % 2 == 0


async def test_every_segment_of_a_streamed_answer_ends_up_frozen(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (6 * SEGMENT_CHARS // len(BLOCK))
    async with app.run_test(size=(100, 40)) as pilot:
        message = AssistantMessage(app.chat.count, app.clock)
        await app.query_one("#chat").mount(message)
        answer = await message.answer()
        with app.batch_update():  # as in the app's frames: nothing is laid out meanwhile
            for i in range(0, len(source), 400):
                await answer.write(source[i : i + 400])
            await message.finish()
            await asyncio.sleep(0.2)  # the capture queue runs, finds nothing laid out, and must wait
        frozen = await _frozen_after_layout(pilot, answer)
        assert (
            "".join(part for f in frozen for part in _texts(f)) == source
        )  # none left live, waiting for a capture that never comes


async def test_a_captured_segment_lets_go_of_its_painted_lines_when_it_is_removed(tmp_path):
    # a removed widget lives on until a garbage collection finds its reference cycles; the
    # lines it kept from painting (each with caches of its own) made every collection longer
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK))
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView()
        await app.query_one("#chat").mount(view)
        await view.write(source)
        await pilot.pause()
        live = list(view.query_children(AnswerSegment))
        painted = [block for segment in live for block in segment.walk_children(Widget)]
        assert any(block._styles_cache._cache for block in painted)  # drawn, so they keep lines
        await view.finish()
        await _frozen_after_layout(pilot, view)
        assert not any(segment.is_attached for segment in live)
        assert not any(block._styles_cache._cache for block in painted)


async def test_an_answer_removed_while_its_segments_wait_does_not_stop_later_captures(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one("#chat")
        first = AnswerView()
        await chat.mount(first)
        with app.batch_update():  # nothing laid out: its segments are still waiting when it goes
            await first.write(source)
            await first.finish()
            await first.remove()  # as /clear does
        second = AnswerView()
        await chat.mount(second)
        await second.write(source)
        await second.finish()
        frozen = await _frozen_after_layout(pilot, second)
        assert "".join(part for f in frozen for part in _texts(f)) == source


async def test_history_answer_is_segmented_the_same_way(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (2 * SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        await pilot.pause()
        sources = _sources(view)
        assert len(sources) >= 2 and "".join(sources) == source


def _texts(frozen: FrozenSegment) -> list[str]:
    return [source for source, _ in frozen.parts]


def _sources(view: AnswerView) -> list[str]:
    """The source of each segment on screen, live or frozen (a frozen widget draws a run of them)."""
    shown = [s for s in view.children if s.display]  # a captured segment is hidden at once, removed soon after
    return [part for s in shown for part in (_texts(s) if isinstance(s, FrozenSegment) else [s.source])]


async def _frozen_after_layout(pilot, view: AnswerView) -> list[FrozenSegment]:
    for _ in range(40):
        await pilot.pause(0.05)
        frozen = list(view.query_children(FrozenSegment))
        if frozen and not view.query_children(AnswerSegment):
            await pilot.pause()  # laid out without the Markdown segments
            return frozen
    raise AssertionError("segments were not frozen")


def _reference_lines(pilot, markdown: Markdown) -> list[str]:
    return [strip.text.rstrip() for strip in capture(markdown)]


async def test_finished_segments_are_frozen_to_the_lines_one_markdown_would_draw(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one("#chat")
        view = AnswerView(source)
        reference = Markdown(source)  # the whole answer as one plain Markdown widget, flush like the answer
        reference.styles.padding = 0
        await chat.mount(view)
        await chat.mount(reference)
        frozen = await _frozen_after_layout(pilot, view)
        # one widget draws the whole run of segments; on a loaded machine a segment not laid out in time is
        # captured after a later one, in a widget of its own (CaptureQueue): the lines are the same either way
        assert sum(len(_texts(f)) for f in frozen) >= 3 and len(frozen) <= 2
        assert "".join(source for f in frozen for source in _texts(f)) == source
        assert not view.query("MarkdownBlock")  # the blocks' widgets are gone, not just hidden
        assert [line for f in frozen for line in f.lines] == _reference_lines(pilot, reference)
        assert sum(f.outer_size.height for f in frozen) == view.size.height == reference.outer_size.height

        await pilot.resize_terminal(50, 40)  # a new width: captured again at that width
        await pilot.pause()
        frozen = await _frozen_after_layout(pilot, view)
        assert sum(len(_texts(f)) for f in frozen) >= 3 and len(frozen) <= 2  # thawed, frozen again
        assert {f.captured_width for f in frozen} == {view.content_region.width}
        assert [line for f in frozen for line in f.lines] == _reference_lines(pilot, reference)
        assert max(len(line) for f in frozen for line in f.lines) <= 50


def _long_lists() -> str:
    """A bullet list with sub-items and an item of two paragraphs, a numbered list to 30, one
    numbered ``1.`` throughout (shown 1, 2, 3...) and a paragraph: each list far longer than a segment."""
    bullets = []
    for n in range(1, 37):
        bullets.append(f"- **Item {n}**: reverse the slice in place, then check `items[{n}]`.")
        if n % 7 == 0:
            bullets += ["  - a copy costs O(n)", "  - `reversed()` is lazy"]
        if n == 20:
            bullets += ["", "  A second paragraph of the same item, indented under it.", ""]
    numbered = [f"{n}. Step {n} of the plan, with *some* emphasis." for n in range(1, 31)]
    same = [f"1. Again step {n}, numbered one by the writer." for n in range(1, 21)]
    between = "\n\nThen, from the top:\n\n"  # numbered items right after numbered items are the same list
    return "\n".join(bullets) + "\n\n" + "\n".join(numbered) + between + "\n".join(same) + "\n\nThe end.\n"


def test_list_cut_cuts_between_the_items_of_one_top_level_list_once_it_is_long():
    a = "- " + "a" * LIST_CHARS + "\n"  # a first item long enough for the list to be cut after it
    n = "1. " + "a" * LIST_CHARS + "\n"
    assert list_cut(a + "- b\n- c\n", 0) == len(a)
    assert list_cut("- a\n- b\n- c\n", 0) == -1  # a short list waits for a paragraph
    assert list_cut("p" * LIST_CHARS + "\n\n- a\n- b", 0) == -1  # measured from where the list begins
    assert list_cut("para\n" + a + "- b", 0) == len("para\n" + a)
    assert list_cut(a + "  - x\n  - y\n- b", 0) == len(a + "  - x\n  - y\n")  # not in the sub-list
    assert list_cut(a + "\n  more of a\n- b", 0) == len(a + "\n  more of a\n")
    assert list_cut(n + "2. b", 0) == len(n) and list_cut("3" + n[1:] + "4. b", 0) == len(n)
    assert list_cut(a + "\nplain\n- b", 0) == -1  # a new list, after a paragraph
    assert list_cut(a + "* b", 0) == -1  # another bullet starts another list
    assert list_cut(n + "1. b", 0) == -1  # shown as 2: a list of its own would show 1
    assert list_cut(a + "- - -", 0) == -1  # a rule
    assert list_cut(a + "- **", 0) == -1 and list_cut(a + "- **b", 0) == len(a)  # known at its first letter
    assert list_cut("```\n" + a + "- b\n", 0) == -1  # code
    assert list_cut("> " + a + "> - b", 0) == -1  # not top-level


@pytest.mark.parametrize("streamed", [False, True], ids=["resumed", "streamed"])
async def test_a_long_list_is_cut_between_items_and_drawn_as_one_markdown_draws_it(tmp_path, streamed):
    """Resumed: each part drawn from its source; streamed: each list grown in place, item by
    item (its numbers growing a digit on the way, 9 to 10), then cut."""
    app = build_app(tmp_path)
    source = _long_lists()
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one("#chat")
        view = AnswerView("" if streamed else source)
        await chat.mount(view)
        if streamed:
            for i in range(0, len(source), 37):
                await view.write(source[i : i + 37])
                if i % 6 == 0:
                    await pilot.pause()  # some pieces are laid out before the next arrives
            await view.finish()
        reference = Markdown(source)  # mounted last: its hundreds of widgets would slow every layout of the stream
        reference.styles.padding = 0
        await chat.mount(reference)
        frozen = await _frozen_after_layout(pilot, view)
        parts = [part for f in frozen for part in f.parts]
        assert "".join(source for source, _ in parts) == source
        assert sum(continues for _, continues in parts) >= 3  # cut inside each of the first two lists
        assert any(s.startswith("- ") for s, _ in parts) and any(s[0].isdigit() for s, _ in parts)
        assert [line for f in frozen for line in f.lines] == _reference_lines(pilot, reference)

        await pilot.resize_terminal(50, 40)  # thawed and captured again, each part as it was cut
        await pilot.pause()
        frozen = await _frozen_after_layout(pilot, view)
        assert [part for f in frozen for part in f.parts] == parts
        assert [line for f in frozen for line in f.lines] == _reference_lines(pilot, reference)


async def test_a_theme_switch_recaptures_frozen_segments_in_the_new_colours(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        before = await _frozen_after_layout(pilot, view)
        background = before[0].render_line(0)._segments[0].style.bgcolor
        app.theme = "tractui-light"
        await pilot.pause()
        after = await _frozen_after_layout(pilot, view)
        assert not set(after) & set(before)
        assert after[0].render_line(0)._segments[0].style.bgcolor != background


async def test_frozen_text_is_selectable_and_copied_as_shown(tmp_path):
    app = build_app(tmp_path)
    source = "First paragraph here.\n\n" + BLOCK * (SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        frozen = (await _frozen_after_layout(pilot, view))[0]
        y = frozen.lines.index(next(line for line in frozen.lines if "First paragraph" in line))
        x = frozen.lines[y].index("First")
        selection = Selection(Offset(x, y), Offset(x + len("First paragraph"), y))
        assert frozen.get_selection(selection) == ("First paragraph", "\n")
        app.screen.selections = {frozen: selection}
        await pilot.pause()
        plain = {seg.text: seg.style for seg in frozen._segments(frozen._rows[y][0])}
        marked = frozen.render_line(y)
        background = plain[next(iter(plain))].bgcolor if plain[next(iter(plain))] else None
        chosen = [seg for seg in marked._segments if seg.style and seg.style.bgcolor not in (None, background)]
        assert "".join(seg.text for seg in chosen) == "First paragraph"
        # readable: each character keeps its colour, which is not the selection's background (until
        # 2026-11-28 the selection drew the text in its own background colour: invisible)
        text_color = next(style.color for style in plain.values() if style and style.color)
        assert {seg.style.color for seg in chosen} == {text_color}
        assert all(seg.style.color != seg.style.bgcolor for seg in chosen)


async def test_a_segment_with_code_wider_than_the_view_stays_live_to_scroll_sideways(tmp_path):
    app = build_app(tmp_path)
    wide = "Wide code follows.\n\n```python\nx = " + "1 + " * 60 + "1\n```\n\n"
    source = wide + BLOCK * (SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        for _ in range(10):
            await pilot.pause(0.05)
        first, *rest = list(view.children)
        assert isinstance(first, AnswerSegment) and first.query_one("MarkdownFence").max_scroll_x > 0
        assert rest and all(isinstance(segment, FrozenSegment) for segment in rest)  # the others are drawn frozen


async def test_a_link_in_a_frozen_segment_opens_when_clicked(tmp_path):
    app = build_app(tmp_path)
    source = "See [the docs](https://example.com/docs) first.\n\n" + BLOCK * (SEGMENT_CHARS // len(BLOCK) + 2)
    opened: list[str] = []
    async with app.run_test(size=(100, 40)) as pilot:
        app.open_url = lambda url, **_: opened.append(url)  # type: ignore[method-assign]
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        frozen = (await _frozen_after_layout(pilot, view))[0]
        y = next(i for i, line in enumerate(frozen.lines) if "the docs" in line)
        x = frozen.lines[y].index("the docs") + 2
        app.query_one("#chat").scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.click(frozen, offset=(x, y))
        assert opened == ["https://example.com/docs"]


INLINE = "Plain words only.\n\nOr `items.reverse()` in place. **Both** are *fine*, ~~slow~~ is not.\n\n> A quote with `code` too.\n\n- a list with **bold**\n"


def _styled(lines: list) -> list[tuple[str, object]]:
    return [(segment.text, segment.style) for strip in lines for segment in strip if segment.text.strip()]


async def test_inline_styles_match_a_plain_markdown_in_every_theme(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one("#chat")
        live = AnswerSegment(INLINE)  # a live segment, never frozen: its blocks are restyled in place
        reference = Markdown(INLINE)
        reference.styles.padding = 0
        await chat.mount(live)
        await chat.mount(reference)
        await pilot.pause()
        dark = _styled(capture(live))
        assert dark == _styled(capture(reference))
        code = next(style for text, style in dark if text == "items.reverse()")
        assert code.bgcolor is not None
        app.theme = "tractui-light"
        await pilot.pause()
        light = _styled(capture(live))
        assert light == _styled(capture(reference))
        assert next(style for text, style in light if text == "items.reverse()").bgcolor != code.bgcolor


async def test_the_segments_of_one_answer_are_captured_in_order(tmp_path):
    captured: list[str] = []
    late: set[str] = set()

    class Slow(AnswerView):
        def freeze(self, segment: AnswerSegment) -> bool:
            if segment.source in late:  # not laid out yet, for a few turns
                late.discard(segment.source)
                return False
            done = super().freeze(segment)
            if done:
                captured.append(segment.source)
            return done

    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = Slow()
        await app.query_one("#chat").mount(view)
        with app.batch_update():
            await view.write(source)
            await view.finish()
            late.add(view.children[0].source)  # type: ignore[attr-defined]
        frozen = await _frozen_after_layout(pilot, view)
        assert len(captured) >= 3 and "".join(captured) == source  # the first waited, and the others after it
        assert len(frozen) == 1 and "".join(_texts(frozen[0])) == source


async def test_thawing_twice_before_the_first_thaw_is_done_draws_the_answer_once(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        await _frozen_after_layout(pilot, view)
        view.thaw()  # a new width and a new theme in one go
        view.thaw()
        frozen = await _frozen_after_layout(pilot, view)
        assert "".join(_sources(view)) == source
        assert "".join(part for f in frozen for part in _texts(f)) == source


async def test_ui_markdown_public_draws_answers_with_textuals_markdown_alone_and_redraws_at_once(tmp_path):
    from ui_support import settle, type_line

    from tractui.core.settings import Settings

    app = build_app(tmp_path, settings=Settings({"ui.markdown": "public"}))
    async with app.run_test(size=(100, 40)) as pilot:
        await type_line(pilot, "show me a long answer")
        await settle(pilot)
        await pilot.pause(0.2)
        assert app.query(".answer-public") and all(v.public for v in app.query(AnswerView))
        assert not app.query(AnswerSegment) and not app.query(FrozenSegment)
        await type_line(pilot, "/set ui.markdown fast")
        await settle(pilot)
        await pilot.pause(0.2)
        await settle(pilot)
        assert not app.query(".answer-public")  # the view was drawn again, the fast way
        assert app.query(AnswerSegment) or app.query(FrozenSegment)
        assert "show me a long answer" in [u.text for u in app.query("UserMessage")]  # type: ignore[attr-defined]


async def test_code_wider_than_the_view_has_a_bar_under_it_and_narrow_code_none(tmp_path):
    wide = "result = compute(" + ", ".join(f"arg{i}" for i in range(30)) + ")"
    source = f"Before.\n\n```python\n{wide}\n```\n\n```python\nshort = 1\n```\n\nAfter.\n"
    app = build_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        await pilot.pause()
        await pilot.pause(0.3)
        first, second = view.query("MarkdownFence")
        assert first.show_horizontal_scrollbar and first.max_scroll_x > 0  # the cut line says it goes on
        assert first.outer_size.height == second.outer_size.height + 1  # with a bar of its own, a row high
        assert not second.show_horizontal_scrollbar
        first.scroll_to(x=first.max_scroll_x, animate=False, immediate=True)  # and the rest can be reached
        await pilot.pause()
        assert "arg29)" in "\n".join(strip.text for strip in capture(first))


def test_a_frozen_segment_keeps_its_lines_out_of_the_collectors_walk():
    """A long answer's captured lines, each kept as segments (tuples holding styles), were
    walked by every full garbage collection, the longest pauses of a long reply; kept as
    text and style numbers, the collector leaves them out once it has seen them."""
    styles = [Style(bold=True), Style(italic=True, color="red")]
    strips = [Strip([Segment(f"line {i} ", styles[i % 2]), Segment("rest")]) for i in range(2000)]
    frozen = FrozenSegment(strips, 80, ("source", False))
    for _ in range(3):  # a tuple is dropped once what it holds has been: a few passes
        gc.collect()
    assert not any(gc.is_tracked(line) for line in frozen._rows)  # each line held its segments: all tracked
    assert frozen.lines[5] == "line 5 rest"


PARAGRAPHS = "".join(f"Paragraph {n}: the answer goes on with a few more words.\n\n" for n in range(1, 31))


async def _slowly_mounted(self: Widget, event: Mount) -> None:
    await asyncio.sleep(0.3)  # frames are painted meanwhile


def _frames(app) -> list[str]:
    """Each update's screen as text, from now on."""
    painted: list[str] = []
    watch_painted(app, lambda screen, update: painted.append(screen_text(app)) if update is not None else None)
    return painted


def _drawn_once_from_the_first(painted: list[str]) -> int:
    """The first frame that draws each paragraph of ``PARAGRAPHS`` once; every later frame does too."""
    counts = [sum(text.count(f"Paragraph {n}:") == 1 for n in range(1, 31)) for text in painted]
    first = counts.index(30)
    assert counts[first:] == [30] * (len(counts) - first)
    return first


async def test_no_frame_shows_the_answer_blank_while_a_segment_is_captured_or_thawed(tmp_path, monkeypatch):
    """The captured lines, and a thawed segment's Markdown, are laid out only once mounted: the
    widget they replace went at once, and frames until the mount was done showed the answer
    blank (seen on a loaded machine). It goes in the step that shows them."""
    monkeypatch.setattr(FrozenSegment, "on_mount", _slowly_mounted, raising=False)
    app = build_app(tmp_path)
    painted = _frames(app)
    async with app.run_test(size=(100, 70)) as pilot:
        view = AnswerView(PARAGRAPHS)
        await app.query_one("#chat").mount(view)
        await _frozen_after_layout(pilot, view)
        captured = len(painted)
        monkeypatch.setattr(AnswerSegment, "on_mount", _slowly_mounted, raising=False)  # thawed: drawn again
        await pilot.resize_terminal(70, 70)
        await _captured_at_the_width(pilot, view)
        first = _drawn_once_from_the_first(painted)
        assert first < captured < len(painted)  # frames while captured, and while thawed


async def _captured_at_the_width(pilot, view: AnswerView) -> None:
    for _ in range(40):
        frozen = await _frozen_after_layout(pilot, view)
        if {f.captured_width for f in frozen if f.display} == {view.content_region.width}:  # not those going
            return
    raise AssertionError("not captured again at the view's width")


async def test_lines_captured_at_another_width_are_drawn_again_without_a_resize_event(tmp_path, monkeypatch):
    """Textual sends no resize event to a widget that a layout made visible at the size the
    map it read had already given it (two runs in five on a loaded machine): the view, which
    thawed on resize events, kept drawing the lines captured at its old width."""
    from textual.events import Resize
    from textual.message import Message

    post = AnswerView.post_message

    def without_resizes(self: AnswerView, message: Message) -> bool:
        return False if isinstance(message, Resize) else post(self, message)

    monkeypatch.setattr(AnswerView, "post_message", without_resizes)
    app = build_app(tmp_path)
    async with app.run_test(size=(100, 70)) as pilot:
        view = AnswerView(PARAGRAPHS)
        await app.query_one("#chat").mount(view)
        width = {f.captured_width for f in await _frozen_after_layout(pilot, view)}
        await pilot.resize_terminal(70, 70)
        await _captured_at_the_width(pilot, view)
        assert {f.captured_width for f in view.query_children(FrozenSegment) if f.display} != width


async def test_a_thaw_while_captured_lines_are_mounting_draws_the_answer_once(tmp_path, monkeypatch):
    """A new theme or width while a segment's captured lines are still mounting (and later
    segments join them): every frame draws the answer once, and it ends captured again."""
    from ui_support import wait_for

    monkeypatch.setattr(FrozenSegment, "on_mount", _slowly_mounted, raising=False)
    app = build_app(tmp_path)
    painted = _frames(app)
    async with app.run_test(size=(100, 70)) as pilot:
        view = AnswerView(PARAGRAPHS)
        await app.query_one("#chat").mount(view)
        await wait_for(pilot, lambda: any(isinstance(child, FrozenSegment) for child in view.children))
        assert not next(iter(view.query_children(FrozenSegment))).is_mounted  # still mounting
        view.thaw()
        frozen = await _frozen_after_layout(pilot, view)
        assert "".join(_sources(view)) == PARAGRAPHS
        assert "".join(part for f in frozen if f.display for part in _texts(f)) == PARAGRAPHS
        _drawn_once_from_the_first(painted)
