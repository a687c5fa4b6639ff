"""The "new content below" hint shown while the user reads further up."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static


class NewContentHint(Static):
    class Pressed(Message):
        """The user wants to jump to the newest content."""

    def __init__(self) -> None:
        super().__init__("↓ new content below — Ctrl+End or click to follow", id="new-below")
        self.display = False

    def on_click(self) -> None:
        self.post_message(self.Pressed())
