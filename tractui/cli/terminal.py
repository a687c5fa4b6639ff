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

RESET = "\x1b[0m"


def one_line(text: str) -> str:
    """``text`` on one line: a newline in a title, a tool's arguments or a reason cannot start a row of its own."""
    return " ".join(text.split())


class Terminal:
    """A stream that is safe to write untrusted text to."""

    __slots__ = ("stream", "tty")

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()

    def write(self, text: str) -> None:
        self.stream.write(inert(text) if self.tty else text)

    def styled(self, style: str, text: str) -> None:
        """``text`` in ``style`` (an SGR sequence) on a terminal; plain elsewhere."""
        if self.tty:
            self.stream.write(f"{style}{inert(text)}{RESET}")
        else:
            self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.tty
