"""The one output policy for everything tractui prints outside the app.

Every stream a shell command writes to is a ``Terminal``: when it is a
terminal, untrusted text (model output, server messages, titles, imported
files) is made inert (``tractui.core.inert``); to a pipe or a file it is
written exactly. tractui's own styling goes through ``styled``, the only way
an escape sequence reaches the terminal.
"""

from __future__ import annotations

from typing import TextIO

from tractui.core.inert import inert
from tractui.errors import OutputError

RESET = "\x1b[0m"


def one_line(text: str) -> str:
    """``text`` on one line: a newline in a title, a tool's arguments or a reason cannot start a row of its own."""
    return " ".join(text.split())


class Terminal:
    """A stream that is safe to write untrusted text to; a write that fails is an ``OutputError``."""

    __slots__ = ("failed", "stream", "tty")

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.failed = False  # a write failed: what is still buffered can never be written

    def write(self, text: str) -> None:
        self._put(inert(text) if self.tty else text)

    def styled(self, style: str, text: str) -> None:
        """``text`` in ``style`` (an SGR sequence) on a terminal; plain elsewhere."""
        self._put(f"{style}{inert(text)}{RESET}" if self.tty else text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise self._failure(exc) from None

    def isatty(self) -> bool:
        return self.tty

    def _put(self, text: str) -> None:
        try:
            self.stream.write(text)
        except OSError as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: OSError) -> OSError | OutputError:
        self.failed = True
        if isinstance(exc, BrokenPipeError):
            return exc  # the reader has all it wanted: not an error to report
        return OutputError(f"cannot write the output: {exc.strerror or exc}")
