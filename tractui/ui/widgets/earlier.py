"""The line where a long session's messages not drawn yet belong (at the top, or below its
first messages once Ctrl+Home drew them): they are drawn when reached."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static


class EarlierMessages(Static):
    class Pressed(Message):
        """The user asked for the older messages now."""

    def __init__(self) -> None:
        super().__init__(id="earlier", markup=False)
        self.display = False

    def show_count(self, count: int | None, *, between: bool = False) -> None:
        """Say how many messages are not drawn yet (``None``: some are, how many is not read
        yet); ``between``: they lie between the session's first messages, drawn above the
        line, and the newer ones below it. None hides the line."""
        plural = "" if count == 1 else "s"
        if count is None:
            self.update("↑ earlier messages — scroll up or click to show them")
        elif between:
            self.update(f"↕ {count} more message{plural} here — scroll to them or click to show them")
        else:
            self.update(f"↑ {count} earlier message{plural} — scroll up or click to show them")
        self.display = count is None or count > 0

    def on_click(self) -> None:
        self.post_message(self.Pressed())
