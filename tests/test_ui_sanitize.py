from hypothesis import given, settings
from hypothesis import strategies as st

from tractui.ui.sanitize import StreamSanitizer, sanitize

NASTY = [
    "\x1b]52;c;aGVsbG8=\x07",  # OSC 52: write the clipboard
    "\x1b]52;c;aGVsbG8=\x1b\\",  # OSC 52 with ST
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b[31;1m",  # colours
    "\x1b[?1049h",  # alternate screen
    "\x1bP+q544e\x1b\\",  # DCS query
    "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",  # hyperlink
    "\x07\x08\x7f\x9b31m\x9d0;t\x9c",  # BEL, BS, DEL, 8-bit CSI/OSC
    "\x1bc",  # full reset
]


def test_sequences_are_removed_whole_and_text_stays():
    for seq in NASTY:
        out = sanitize(f"before{seq}after")
        assert "\x1b" not in out and not any(0x80 <= ord(c) <= 0x9F or (ord(c) < 32 and c not in "\n\t") for c in out)
        assert out.startswith("before") and out.endswith("after")
    assert sanitize("a\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\b") == "alinkb"
    assert sanitize("x\x1b[2Jy") == "xy"
    # the 8-bit forms whole too, not only their first byte ("31m" was left on screen)
    assert sanitize("a\x9b31mb\x9d0;title\x9cc\x90+q\x9cd") == "abcd"


def test_plain_text_newlines_tabs_and_unicode_are_untouched():
    text = "def f():\n\treturn 'héllo — 世界 🎉'\n"
    assert sanitize(text) == text
    assert sanitize("a\r\nb") == "a\nb"


def test_text_that_would_disguise_itself_is_shown_by_code_point():
    # a file name that reads "exe.txt" backwards, a word with a hidden break, a stray byte order mark
    assert sanitize("report\u202etxt.exe") == "report⟨U+202E⟩txt.exe"
    assert sanitize("pay\u200bpal \u2067x\u2069 \ufeff") == "pay⟨U+200B⟩pal ⟨U+2067⟩x⟨U+2069⟩ ⟨U+FEFF⟩"
    family, persian = "👨\u200d👩\u200d👧", "می\u200cخواهم"  # joiners that make one emoji or one word stay
    assert sanitize(family) == family and sanitize(persian) == persian


def test_stream_holds_a_sequence_split_across_chunks():
    s = StreamSanitizer()
    pieces = ["ab\x1b]52;c;aGk", "=\x1b", "\\cd\x1b[", "2", "Jef\x9b3", "1mg\x1b"]
    out = "".join(s.feed(p) for p in pieces)
    assert out == "abcdefg"
    assert s.flush() == ""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=30), st.sampled_from(NASTY))
def test_stream_output_never_contains_escape_whatever_the_cuts(cuts, seq):
    text = f"Hello {seq} world {seq} end"
    s = StreamSanitizer()
    out, i, k = [], 0, 0
    while i < len(text):
        step = cuts[k % len(cuts)]
        out.append(s.feed(text[i : i + step]))
        i, k = i + step, k + 1
    joined = "".join(out)
    assert "\x1b" not in joined
    assert joined.startswith("Hello ") and joined.endswith(" end")
    assert joined == sanitize(text)
