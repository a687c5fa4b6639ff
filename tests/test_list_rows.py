"""A list item that starts with a paragraph is drawn by that paragraph and its other blocks below
it, not as Textual's row (``answer_segment.Paragraph``): what they draw must be what Textual's
row of a bullet beside a column draws, cell for cell —
characters, colours and attributes — in every theme, with ``NO_COLOR``, and after a theme
change; and a selection must copy the same text.

The reference is Textual's own ``Markdown`` widget given the same document (flush, as the
segments are), laid out at the same width in the same app.
"""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.style import Style
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Markdown

from tractui.ui.internals import capture_strips
from tractui.ui.themes import load_themes
from tractui.ui.widgets.answer_segment import AnswerSegment, Paragraph

WORD = st.sampled_from(
    ["list", "slice", "`items`", "**bold**", "*soft*", "~~gone~~", "[docs](https://example.com/x)", "O(n)", "é", "漢字"]
)
LONG = st.just("b" * 70)  # longer than the column: broken inside the word
TEXT = st.lists(st.one_of(WORD, LONG), min_size=1, max_size=14).map(" ".join)


def _bullets(items: list[str], sub: list[str]) -> str:
    lines = [f"- {a}" for a in items]
    lines[len(lines) // 2] += "".join(f"\n  - {b}" for b in sub)  # an item holding a list
    return "\n".join(lines)


def _numbered(items: list[str], start: int) -> str:
    return "\n".join(f"{number}. {a}" for number, a in enumerate(items, start))


ITEMS = st.lists(TEXT, min_size=1, max_size=6)
LIST = st.one_of(
    st.tuples(ITEMS, st.lists(TEXT, max_size=3)).map(lambda t: _bullets(*t)),
    st.tuples(ITEMS, st.sampled_from([1, 7, 98, 999])).map(lambda t: _numbered(*t)),  # numbers growing a digit
    st.tuples(TEXT, TEXT).map(lambda t: f"- {t[0]}\n\n  {t[1]}"),  # an item of two paragraphs
    st.tuples(TEXT, TEXT).map(lambda t: f"1. {t[0]}\n   - {t[1]}\n     1. {t[0]}\n2. {t[1]}"),  # three levels
    st.tuples(TEXT, TEXT).map(lambda t: f"- {t[0]}\n\n  ```\n  {t[1]}\n  ```\n- {t[1]}"),  # a fence: Textual's row
    st.just("- \n- x"),  # an empty item
)
DOCUMENT = st.lists(st.one_of(LIST, TEXT), min_size=1, max_size=4).map("\n\n".join)
THEMES = ["textual-dark", "textual-light", "nord", "solarized-light", "tractui-dark", "tractui-light"]


class Both(App[None]):
    """Textual's Markdown and a segment, one above the other, given the same document."""

    CSS = "Markdown { padding: 0; margin: 0; }"

    def __init__(self, document: str) -> None:
        super().__init__()
        self.document = document
        for theme in load_themes().themes:
            self.register_theme(theme)

    def compose(self) -> ComposeResult:
        yield Markdown(self.document, id="textual")
        yield AnswerSegment(self.document)


Cell = tuple[str, tuple[object, ...]]


def cells(strips: list[Strip]) -> list[list[Cell]]:
    """What each cell shows: a blank by its background (and any line drawn through it), any
    other character by every attribute a terminal draws."""
    rows: list[list[Cell]] = []
    for strip in strips:
        row: list[Cell] = []
        for text, style, _ in strip:
            s = style or Style()
            for character in text:
                if character == " " and not (s.underline or s.strike or s.reverse):
                    row.append((character, (s.bgcolor,)))
                else:
                    row.append(
                        (character, (s.color, s.bgcolor, s.bold, s.dim, s.italic, s.underline, s.strike, s.reverse))
                    )
        rows.append(row)
    return rows


async def drawn(
    document: str, width: int, themes: list[str]
) -> list[tuple[str, list[list[Cell]], list[list[Cell]], int]]:
    """For each theme in turn (switched in one app): Textual's cells, the segment's cells, and
    how many of the segment's paragraphs drew their item's bullet."""
    app = Both(document)
    out = []
    async with app.run_test(size=(width, 200)) as pilot:
        for theme in themes:
            app.theme = theme
            await pilot.pause()
            segment = app.query_one(AnswerSegment)
            rows = sum(1 for p in segment.query(Paragraph) if p.bullet)
            out.append((theme, cells(capture_strips(app.query_one("#textual"))), cells(capture_strips(segment)), rows))
    return out


def assert_same(results: list[tuple[str, list[list[Cell]], list[list[Cell]], int]]) -> None:
    for theme, textual, segment, _ in results:
        assert len(segment) == len(textual), theme
        for y, (theirs, ours) in enumerate(zip(textual, segment, strict=True)):
            assert ours == theirs, f"{theme}, line {y}: {''.join(c for c, _ in theirs)!r}"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENT, width=st.integers(24, 90), theme=st.sampled_from(THEMES))
def test_an_item_drawn_by_its_paragraph_is_drawn_as_textuals_row(document, width, theme):
    assert_same(asyncio.run(drawn(document, width, [theme])))


def test_every_theme_and_a_switch_between_them_draw_the_bullets_as_textual_does():
    document = "- one **two** `three` [four](https://example.com)\n- five\n\n3. six\n4. seven\n\ntext"
    results = asyncio.run(drawn(document, 40, [*THEMES, "textual-dark"]))  # painted, then switched
    assert_same(results)
    assert all(rows == 4 for *_, rows in results)  # each item of one paragraph took the fast path


def test_items_holding_lists_and_paragraphs_are_drawn_without_rows_and_as_textual_draws_them():
    """An outline as models write them (each item a paragraph and a sub-list, a second
    paragraph, three levels) takes no row; an item holding a fence keeps Textual's, since the
    fence's margins would merge with the next item's."""

    async def drawn_rows(document: str) -> tuple[list[list[Cell]], list[list[Cell]], int]:
        app = Both(document)
        async with app.run_test(size=(60, 200)) as pilot:
            await pilot.pause()
            segment = app.query_one(AnswerSegment)
            rows = len(segment.query(Horizontal))
            return cells(capture_strips(app.query_one("#textual"))), cells(capture_strips(segment)), rows

    outline = (
        "1. **Reverse** the list in place\n   - `items.reverse()` changes it\n   - no copy is made\n"
        "2. Or make a reversed copy\n\n   `items[::-1]` builds a new list\n\n"
        "   1. it costs O(n) memory\n      - each element once\n3. Or iterate: `reversed()`"
    )
    fenced = "- one\n\n  ```\n  code\n  ```\n- two\n  - three"
    for document, expected_rows in ((outline, 0), (fenced, 1)):
        textual, segment, rows = asyncio.run(drawn_rows(document))
        assert rows == expected_rows, document
        assert_same([("textual-dark", textual, segment, 0)])


def test_a_streamed_list_of_items_holding_lists_grows_in_place_and_draws_as_textual_does():
    """Appended a few characters at a time, as a reply streams: the finished items keep their
    widgets (the list grows in place, its last item found by the blocks it flattened), and
    the whole draws what Textual draws for the whole document."""
    document = (
        "- **one** first\n  - sub a\n  - sub b\n\n  after one\n"
        "- two second\n  - sub c\n- three third\n  1. sub d\n  2. sub e\n- four"
    )

    class Streamed(App[None]):
        CSS = "Markdown { padding: 0; margin: 0; }"

        def compose(self) -> ComposeResult:
            yield Markdown(document, id="textual")
            yield AnswerSegment("")

    async def streamed() -> tuple[bool, list[list[Cell]], list[list[Cell]], int]:
        app = Streamed()
        async with app.run_test(size=(50, 60)) as pilot:
            segment = app.query_one(AnswerSegment)
            first = None
            for at in range(0, len(document), 7):
                await segment.append(document[at : at + 7])
                await pilot.pause()
                if first is None and "two" in document[: at + 7]:
                    first = segment.query(Paragraph).first()
            kept = first is not None and first.is_attached and first is segment.query(Paragraph).first()
            rows = len(segment.query(Horizontal))
            return kept, cells(capture_strips(app.query_one("#textual"))), cells(capture_strips(segment)), rows

    kept, textual, segment, rows = asyncio.run(streamed())
    assert kept
    assert rows == 0
    assert_same([("textual-dark", textual, segment, 0)])


def test_with_no_color_the_bullets_and_the_gaps_are_filtered_as_textual_filters_them(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    results = asyncio.run(drawn("- one\n- two\n\nthree\n\n- four", 30, ["nord", "solarized-light"]))
    assert_same(results)
    _, textual, _, _ = results[0]
    assert len({cell[1] for row in textual for cell in row if cell[0] == " "}) == 1  # grey: one background


def test_a_selection_copies_an_item_as_textuals_row_gives_it():
    async def copied() -> list[str | None]:
        app = Both("- one **two**\n- three\n  - four\n\n1. five\n2. six")
        texts = []
        async with app.run_test(size=(40, 30)) as pilot:
            for widget in (app.query_one("#textual"), app.query_one(AnswerSegment)):
                widget.text_select_all()
                await pilot.pause()
                texts.append(app.screen.get_selected_text())
        return texts

    textual, segment = asyncio.run(copied())
    assert textual and "•" in textual and "five" in textual
    assert segment == textual


def test_part_of_an_items_first_line_is_that_part_of_the_whole_line():
    """The compositor asks for the lines in view only: a crop may start inside the bullet."""

    async def parts() -> list[tuple[list[list[Cell]], list[list[Cell]]]]:
        app = Both("10. one **two** three")
        out = []
        async with app.run_test(size=(30, 10)) as pilot:
            await pilot.pause()
            paragraph = next(p for p in app.query(Paragraph) if p.bullet)
            whole = paragraph.render_lines(Region(0, 0, paragraph.size.width, 1))[0]
            for x, width in ((0, 2), (1, 3), (2, 6), (4, 8), (5, 1)):
                out.append((cells([whole.crop(x, x + width)]), cells(paragraph.render_lines(Region(x, 0, width, 1)))))
        return out

    for cropped, asked in asyncio.run(parts()):
        assert asked == cropped
