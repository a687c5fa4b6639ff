"""Make model output inert before it reaches a widget.

A reply may contain terminal escape sequences (OSC 52 clipboard writes, CSI
cursor movement, BEL, DCS...). Textual draws text itself, but exported text,
copied answers and any raw path to the terminal must never carry them, so
every piece of model text passes through here first. Sequences are removed
whole; lone control characters (except newline and tab) are dropped.
"""

from __future__ import annotations

import re

_SEQUENCE = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: cursor movement, colours, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks, OSC 52 clipboard
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS / SOS / PM / APC strings
    r"|\x1b[ -/]*[0-~]"  # two-byte escapes (ESC c, ESC 7, charset selection)
)
_CONTROLS = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 (but \t, \n), DEL, C1 (8-bit CSI/OSC too)
_UNSAFE = re.compile(f"{_SEQUENCE}|{_CONTROLS}")
# A prefix of a sequence that has not finished yet (split across stream chunks).
_PARTIAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?")
_HOLD_LIMIT = 4096  # an unterminated string longer than this is dropped, not held forever


def sanitize(text: str) -> str:
    """``text`` with every escape sequence and control character (but newline, tab) removed."""
    if text.isprintable():
        return text
    return _UNSAFE.sub("", text.replace("\r\n", "\n"))


class StreamSanitizer:
    """``sanitize`` for a stream: a sequence split across chunks is held until it completes."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk if self._held else chunk
        self._held = ""
        if "\x1b" in text:
            start = text.find("\x1b")
            while start != -1:
                if _PARTIAL.fullmatch(text, start) and len(text) - start <= _HOLD_LIMIT:
                    self._held = text[start:]
                    text = text[:start]
                    break
                start = text.find("\x1b", start + 1)
        return sanitize(text)

    def flush(self) -> str:
        """End of stream: whatever is held was never a complete sequence; drop it."""
        self._held = ""
        return ""
