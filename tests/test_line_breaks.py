"""``internals.LineBreaks`` finds the same line breaks as rich's ``divide_line``, for a line
seen again, a line that grows as a streamed paragraph does, and lines that interleave."""

from __future__ import annotations

import textual.content
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich._wrap import divide_line
from textual.content import Content

from tractui.ui import internals

# spaces of several kinds, wide and zero-width characters, joiners and selectors that change a
# neighbour's width, a control character that counts as a space
_text = st.text(alphabet="ab xyz  \t\u3000\u00a0\x1cあ👨\u200d\ufe0f❤\u0301", max_size=160)
# words and runs of spaces, leading ones too, some wider than the line: folds end inside spaces
_words = st.lists(st.sampled_from(["ab", "abcdefg", "x", " ", "   ", "\u3000", "あい", "❤\ufe0f"]), max_size=40).map(
    "".join
)
_widths = st.integers(1, 24)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_text, _words), st.lists(st.integers(0, 160), max_size=12), _widths, st.booleans())
@example("   ab   x", [8], 3, True)  # a fold of the leading spaces ends before a word: no place to go on from
def test_a_growing_line_breaks_where_divide_line_breaks_it(text, cuts, width, fold):
    breaks = internals.LineBreaks(divide_line)
    for cut in [*sorted(cuts), len(text), len(text)]:  # the last twice: seen again
        line = text[:cut]
        assert breaks(line, width, fold) == divide_line(line, width, fold)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.one_of(_text, _words), _widths), min_size=1, max_size=20), st.booleans()
)
def test_lines_of_several_paragraphs_and_widths_interleave(steps, fold):
    breaks = internals.LineBreaks(divide_line)
    grown = ["", "", ""]
    for which, more, width in steps:
        grown[which] += more
        assert breaks(grown[which], width, fold) == divide_line(grown[which], width, fold)


def test_what_it_keeps_is_bounded_by_lines_and_by_characters():
    breaks = internals.LineBreaks(divide_line)
    for i in range(internals.BREAKS_KEPT + 5):
        breaks(f"line {i} " * 10, 20, True)
    assert len(breaks._kept) == internals.BREAKS_KEPT
    long = "word " * (internals.BREAKS_CHARS // 5)
    breaks(long, 20, True)
    breaks("short one", 20, True)
    assert breaks._chars <= internals.BREAKS_CHARS
    assert breaks._chars == sum(len(text) for text, _, _ in breaks._kept)


def test_a_callers_change_to_the_breaks_it_got_changes_nothing_kept():
    breaks = internals.LineBreaks(divide_line)
    first = breaks("alpha beta gamma delta", 6, True)
    first.append(99)
    assert breaks("alpha beta gamma delta", 6, True) == divide_line("alpha beta gamma delta", 6, True)


def test_textual_content_wraps_through_the_installed_line_breaks():
    internals.remember_line_breaks()
    installed = textual.content.divide_line
    internals.remember_line_breaks()
    assert textual.content.divide_line is installed, "installed once"
    assert isinstance(installed, internals.LineBreaks)
    text = "tractui wraps this line through what it remembers"
    lines = Content(text).wrap(12)
    assert (text, 12, True) in installed._kept, (
        f"Textual {textual.__version__} no longer wraps Content through textual.content.divide_line"
    )
    assert [line.plain.rstrip() for line in lines] == ["tractui", "wraps this", "line through", "what it", "remembers"]
