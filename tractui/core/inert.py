"""Untrusted text (model output, server messages, imported files) made inert for a terminal.

A reply may carry terminal escape sequences: OSC 52 writes the clipboard,
OSC 0 the window title, OSC 8 hides a link behind text, CSI moves the cursor
and clears the screen, 8-bit C1 bytes do the same in one character, BEL and
BS ring and rub out. Two renderings, one classification:

* ``sanitize`` removes sequences whole and drops lone controls: the app's view,
  where text is read and an escape has nothing to show. BiDi overrides and
  invisible characters are shown as ``⟨U+202E⟩``: they would let text disguise
  itself (a file name read backwards, a word with a hidden break).
* ``inert`` shows every control as its code (``\\x1b``) and BiDi overrides and
  invisible characters as ``⟨U+202E⟩``: what tractui prints to a terminal or
  exports, where the reader should see that something was there.

Newline and tab are text; ``\\r\\n`` is a newline.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SEQUENCE = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: cursor movement, colours, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks, OSC 52 clipboard
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS / SOS / PM / APC strings
    r"|\x1b[ -/]*[0-~]"  # two-byte escapes (ESC c, ESC 7, charset selection)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the same in 8 bits: CSI
    r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)"  # OSC
    r"|[\x90\x98\x9e\x9f][^\x1b\x9c]*(?:\x9c|\x1b\\)"  # DCS / SOS / PM / APC
)
CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but \t, \n), DEL, C1 (8-bit CSI/OSC too)
BIDI = "\u202a-\u202e\u2066-\u2069"  # embeddings, overrides, isolates: they reorder the text around them
# zero-width space, word joiner, byte order mark: invisible; ZWJ and ZWNJ stay (emoji, Persian script)
INVISIBLE = "\u200b\u2060\ufeff"
_UNSAFE = re.compile(f"{_SEQUENCE}|[{CONTROLS}]")
_DISGUISE = re.compile(f"[{BIDI}{INVISIBLE}]")
_SHOWN = re.compile(f"[{CONTROLS}{BIDI}{INVISIBLE}]")
# A prefix of a sequence that has not finished yet (split across stream chunks).
_PARTIAL = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?"
    r"|\x9b[0-?]*[ -/]*|\x9d[^\x07\x1b\x9c]*\x1b?|[\x90\x98\x9e\x9f][^\x1b\x9c]*\x1b?"
)
_INTRODUCER = re.compile("[\x1b\x90\x98\x9b\x9d\x9e\x9f]")  # where a sequence may begin
_HOLD_LIMIT = 4096  # an unterminated string longer than this is dropped, not held forever


def sanitize(text: str) -> str:
    """``text`` with every escape sequence and control character (but newline, tab) removed,
    and BiDi overrides and invisible characters shown as their code points."""
    if text.isprintable():
        return text
    return _DISGUISE.sub(_shown, _UNSAFE.sub("", text.replace("\r\n", "\n")))


class StreamSanitizer:
    """``sanitize`` for a stream: a sequence split across chunks is held until it completes."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk if self._held else chunk
        self._held = ""
        if "\x1b" in text or not text.isascii():  # the 8-bit introducers are not ASCII
            for found in _INTRODUCER.finditer(text):
                start = found.start()
                if _PARTIAL.fullmatch(text, start) and len(text) - start <= _HOLD_LIMIT:
                    self._held = text[start:]
                    text = text[:start]
                    break
        return sanitize(text)

    def flush(self) -> str:
        """End of stream: whatever is held was never a complete sequence; drop it."""
        self._held = ""
        return ""


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0x9F else f"⟨U+{code:04X}⟩"


def inert(text: str) -> str:
    """``text`` with each control character (but newline, tab), BiDi override and invisible character shown as its code.

    Stateless, character by character: a sequence split across stream chunks
    is as inert in pieces as whole.
    """
    if text.isprintable():
        return text
    return _SHOWN.sub(_shown, text.replace("\r\n", "\n"))


_ACTING = re.compile(f"[{CONTROLS}{BIDI}]")


def unseen_controls(text: str) -> str:
    """``text`` without the characters a terminal would act on: controls (but newline and tab)
    and BiDi overrides. Each takes no cell, so what is left takes the cells ``text`` took."""
    if text.isprintable():
        return text
    return _ACTING.sub("", text)


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


_JSON_RAW = re.compile(f"[\x7f-\x9f{BIDI}{INVISIBLE}]")  # what json.dumps leaves raw that a terminal would act on


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON whose text holds no terminal controls: the same value, safe to print anywhere.

    ``json.dumps`` escapes C0 itself; DEL, C1 and BiDi overrides can only occur
    inside strings, where ``\\uXXXX`` is the same character.
    """
    return _JSON_RAW.sub(_escaped, json.dumps(data, ensure_ascii=False, indent=indent))
