"""The scrolling conversation.

Anchored to the bottom so it follows the stream; once the user scrolls up the
anchor is released and a "new content below" hint appears instead of yanking
them back down. Older messages mounted above what the user reads leave it
where it is on screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message
from textual.widget import Widget

from tractui.ui.widgets.column import LaidOut


class ChatLog(LaidOut, VerticalScroll):
    can_focus = True

    class ScrolledPastTop(Message):
        """The user scrolled up with the oldest drawn message already in view."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keep: tuple[Widget, int] | None = None  # a widget and its row on screen, held while older messages mount

    def on_mount(self) -> None:
        self.anchor()

    def on_mouse_scroll_up(self) -> None:
        if self.scroll_y <= 0:  # nothing moves, so no scroll change tells the app
            self.post_message(self.ScrolledPastTop())

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

    async def insert_above(self, widgets: Sequence[Widget], before: Widget) -> None:
        """Mount ``widgets`` before ``before`` without moving what is on screen.

        Scrolling back after the layout would paint one frame at the wrong
        place; instead the scroll offset is set in the same layout pass that
        places the new widgets (``arrange``), as Textual does for the anchor.
        """
        if self.following:  # anchored: the compositor keeps the bottom in view
            await self.mount_all(widgets, before=before)
            return
        self._keep = (before, before.virtual_region.y - round(self.scroll_y))
        try:
            await self.mount_all(widgets, before=before)
            laid_out: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.call_after_refresh(lambda: laid_out.done() or laid_out.set_result(None))
            await laid_out
        finally:
            self._keep = None

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        arrangement = super().arrange(size, optimal)
        if self._keep is not None:
            widget, row = self._keep
            for placement in arrangement.placements:
                if placement.widget is widget:
                    y = max(0, placement.region.y - row)
                    self.set_reactive(Widget.scroll_y, y)
                    self.set_reactive(Widget.scroll_target_y, y)
                    self.vertical_scrollbar.position = y
                    break
        return arrangement
