"""The scrolling conversation.

Anchored to the bottom so it follows the stream; once the user scrolls up the
anchor is released and a "new content below" hint appears instead of yanking
them back down.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import Widget


class ChatLog(VerticalScroll):
    can_focus = True

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """True while the view sticks to the newest content."""
        return self.max_scroll_y - self.scroll_y <= 1 or not self._anchor_released

    def jump_to_end(self) -> None:
        self.anchor()
        self.scroll_end(animate=False, immediate=True)

    def first_visible(self) -> tuple[Widget, int] | None:
        """The first message on screen and how far it sits from the top of the view."""
        top = self.scroll_y
        for child in self.children:
            if child.display and child.virtual_region.bottom > top:
                return child, child.virtual_region.y - round(top)
        return None

    def restore(self, place: tuple[Widget, int] | None) -> None:
        """After a layout change, put ``place``'s widget back where it was on screen."""
        if place is None:
            return
        widget, offset = place
        if widget.is_attached:
            self.scroll_to(y=widget.virtual_region.y - offset, animate=False, immediate=True)
