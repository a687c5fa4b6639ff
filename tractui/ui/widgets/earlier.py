"""The line at the top of a long session: older messages are drawn when reached."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static


class EarlierMessages(Static):
    class Pressed(Message):
        """The user asked for the older messages now."""

    def __init__(self) -> None:
        super().__init__(id="earlier", markup=False)
        self.display = False

    def show_count(self, count: int) -> None:
        """Say how many older messages are not drawn yet; none hides the line."""
        plural = "" if count == 1 else "s"
        self.update(f"↑ {count} earlier message{plural} — scroll up or click to show them")
        self.display = count > 0

    def on_click(self) -> None:
        self.post_message(self.Pressed())
