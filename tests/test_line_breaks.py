"""``internals.LineBreaks`` finds the same line breaks as rich's ``divide_line``, for a line
seen again, a line that grows as a streamed paragraph does, and lines that interleave."""

from __future__ import annotations

import sys
import threading

import textual.content
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich._wrap import divide_line
from textual.content import Content

from tractui.ui import internals

# spaces of many kinds (each one rich's pattern and str.isspace agree on), wide, zero-width
# and combining characters, joiners and selectors that change a neighbour's width, controls
_ALPHABET = (
    "ab \t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u1680\u2000\u2007\u2028\u202f\u3000\u200b\u200d\ufe0f\u0301あ漢👨❤🇺\x00\x7f"
)
_text = st.text(alphabet=_ALPHABET, max_size=120)
# words and runs of spaces, leading ones too, some wider than the line: folds end inside spaces
_words = st.lists(
    st.sampled_from(["ab", "abcdefg", "x", " ", "   ", "\u3000", "あい", "❤\ufe0f", "👨\u200d👨", "\t"]), max_size=40
).map("".join)
_texts = st.one_of(_text, _words)
_widths = st.integers(0, 24)


def _divided(divide, text: str, width: int, fold: bool) -> object:
    try:
        return divide(text, width, fold)
    except ValueError:  # rich cannot fold into no width at all
        return ValueError


@settings(max_examples=400, deadline=None)
@given(_texts, st.lists(st.integers(0, 160), max_size=12), _widths, st.booleans())
@example("   ab   x", [8], 3, True)  # a fold of the leading spaces ends before a word: no place to go on from
@example("abcdef   ", [6], 3, True)  # a fold inside a word's trailing spaces
@example("ab   ", [4], 1, True)  # a break between two spaces
@example("ababababcdefgxxx      ❤️", [23], 1, True)  # a word folded into a piece left empty: two breaks there
def test_a_growing_line_breaks_where_divide_line_breaks_it(text, cuts, width, fold):
    breaks = internals.LineBreaks(divide_line)
    for cut in [*sorted(cuts), len(text), len(text)]:  # the last twice: seen again
        line = text[:cut]
        assert _divided(breaks, line, width, fold) == _divided(divide_line, line, width, fold)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), _texts, _widths, st.booleans()), max_size=20))
@example([(2, 0, "ab x", 1, False), (0, 0, " ", 1, True)])  # a line kept unfolded, then grown and folded
def test_lines_grown_cut_replaced_and_seen_again_at_any_width(steps):
    """Three lines; each step grows one, cuts it short, replaces it or asks again, at a
    width and fold of its own."""
    breaks = internals.LineBreaks(divide_line)
    lines = ["", "", ""]
    for step, which, text, width, fold in steps:
        match step:
            case 0:
                lines[which] += text
            case 1:
                lines[which] = lines[which][: len(text)]
            case 2:
                lines[which] = text
        line = lines[which]
        assert _divided(breaks, line, width, fold) == _divided(divide_line, line, width, fold)


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
    kept = len(breaks._kept)
    assert breaks(long + "more", 20, True) == divide_line(long + "more", 20, True)
    assert len(breaks._kept) == kept, "a line longer than all it may keep pushes out nothing"


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


def test_threads_wrapping_at_once_each_get_their_own_lines_breaks():
    breaks = internals.LineBreaks(divide_line)
    failures: list[BaseException] = []

    def wrap(seed: int) -> None:
        try:
            text = ""
            for i in range(300):
                text += f"w{seed}x{i} "
                assert breaks(text, 7 + seed, True) == divide_line(text, 7 + seed, True)
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        threads = [threading.Thread(target=wrap, args=(seed,)) for seed in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures[0]
