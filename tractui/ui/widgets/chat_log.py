"""The scrolling conversation.

Anchored to the bottom so it follows the stream; once the user scrolls up the
anchor is released and a "new content below" hint appears instead of yanking
them back down. Older messages mounted above what the user reads leave it
where it is on screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message
from textual.widget import Widget

from tractui.ui.internals import anchor_released, listed
from tractui.ui.streaming.settle import settle
from tractui.ui.widgets.column import Blank, LaidOut

LAYOUT_WAITS = 5  # refreshes a restore waits for a change to be laid out (a change that moves nothing never is)
PLACING_LAYOUTS = 20  # layouts a message drawn below the view may wait for its blocks to be placed


class ChatLog(Blank, LaidOut, VerticalScroll):
    can_focus = False  # the prompt keeps the keys: the app scrolls the log (Page Up/Down, the wheel)

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
        return self.max_scroll_y - self.scroll_y <= 1 or not anchor_released(self)

    def jump_to_end(self) -> None:
        self.anchor()
        self.scroll_end(animate=False, immediate=True)

    @contextmanager
    def reading_kept(self) -> Iterator[None]:
        """Change what the log shows (hide thinking, fold it) without moving what the
        user reads: the newest content if they follow it, else the line at the top."""
        if self.following:
            yield
            self.call_after_refresh(self.jump_to_end)
            return
        place, height = self.reading_place(), self.virtual_size.height
        yield
        self._restore_when_laid_out(place, height, LAYOUT_WAITS)

    def _restore_when_laid_out(self, place: ReadingPlace, height: int, waits: int) -> None:
        """The change reaches the layout once its widgets have told the screen, which may
        be a refresh or two later: until the log's height moves, wait for the next."""
        if self.virtual_size.height == height and waits > 1:
            self.call_after_refresh(self._restore_when_laid_out, place, height, waits - 1)
        else:
            self.restore(place)

    def reading_place(self) -> ReadingPlace:
        """What the user is reading: the innermost widget at the top of the view (a
        paragraph, a thinking chunk), then each widget holding it up to a message,
        each with the row it sits at (negative: it began above the view)."""
        top = round(self.scroll_y)
        path: list[tuple[Widget, int]] = []
        y, children = 0, self.children  # y: where the container of ``children`` starts
        while (hit := next((c for c in children if c.display and y + c.virtual_region.bottom > top), None)) is not None:
            y += hit.virtual_region.y
            path.append((hit, y - top))
            children = hit.children
        return tuple(reversed(path))

    def restore(self, place: ReadingPlace) -> None:
        """After content around ``place`` was hidden or shown, scroll so that what was
        read is where it was on screen. Hidden meanwhile, the first thing after the
        hidden part takes its place, at the top if that part began above the view;
        removed meanwhile (a segment redrawn), the widget that held it stays put."""
        hidden: tuple[Widget, int] | None = None  # the outermost hidden one so far
        for widget, row in place:
            if not widget.is_attached:
                continue
            if not _shown(widget, self):
                hidden = (widget, row)
                continue
            if hidden is not None:  # what follows the hidden part moves up into its place
                after = _next_shown(hidden[0], self)
                if after is None:
                    return
                widget, row = after, max(0, hidden[1])
            self.scroll_to(y=_y_in(self, widget) - row, animate=False, immediate=True)
            return

    async def insert_above(
        self, widgets: Sequence[Widget], before: Widget, *, stop: asyncio.Future[None] | None = None
    ) -> None:
        """Mount ``widgets`` before ``before`` without moving what is on screen; ``stop`` done
        ends the wait for their layout (the view is being replaced).

        Scrolling back after the layout would paint one frame at the wrong
        place; instead the scroll offset is set in the same layout pass that
        places the new widgets (``arrange``), as Textual does for the anchor.
        """
        if self.following:  # anchored: the compositor keeps the bottom in view
            await self.mount_all(widgets, before=before)
            return
        self._keep = (before, before.virtual_region.y - round(self.scroll_y))
        try:
            await self.mount_laid_out(widgets, before, stop=stop)
        finally:
            self._keep = None

    async def mount_laid_out(
        self, widgets: Sequence[Widget], before: Widget, *, stop: asyncio.Future[None] | None = None
    ) -> None:
        """Mount ``widgets`` before ``before`` and wait for the layout that places them (or for
        ``stop``)."""
        await self.mount_all(widgets, before=before)
        await self._laid_out(stop)

    async def mount_placed(
        self, widgets: Sequence[Widget], before: Widget, *, stop: asyncio.Future[None] | None = None
    ) -> None:
        """Mount ``widgets`` before ``before`` and wait until what they show is placed: a block an
        answer mounts after a layout is painted blank until the next one."""
        await self.mount_laid_out(widgets, before, stop=stop)
        for _ in range(PLACING_LAYOUTS):
            if (stop is not None and stop.done()) or all(_placed(widget) for widget in widgets):
                return
            await self._laid_out(stop)

    async def _laid_out(self, stop: asyncio.Future[None] | None) -> None:
        laid_out: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.call_after_refresh(settle, laid_out)
        await asyncio.wait([laid_out] if stop is None else [laid_out, stop], return_when=asyncio.FIRST_COMPLETED)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Textual's arrangement, queried without a grid (see ``PlacementList``)."""
        arrangement = listed(super().arrange(size, optimal))
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


ReadingPlace = tuple[tuple[Widget, int], ...]
"""Widgets from the innermost out, each with its row from the top of the view."""


def _placed(widget: Widget) -> bool:
    """Every widget shown in ``widget`` has been given its size by a layout."""
    waiting = [widget]
    while waiting:
        shown = waiting.pop()
        if shown.display:
            if not shown.size.width:
                return False
            waiting.extend(shown.children)
    return True


def _y_in(log: Widget, widget: Widget) -> int:
    """How far ``widget`` sits from the top of the log's content, scrolled out or not."""
    y = 0
    while widget is not log:
        y += widget.virtual_region.y
        widget = widget.parent  # type: ignore[assignment]
    return y


def _shown(widget: Widget, log: Widget) -> bool:
    while widget is not log:
        if not widget.display:
            return False
        widget = widget.parent  # type: ignore[assignment]
    return True


def _next_shown(widget: Widget, log: Widget) -> Widget | None:
    """The first shown widget after ``widget`` (a later sibling, or one of an ancestor's)."""
    while widget is not log:
        parent = widget.parent
        if not isinstance(parent, Widget):
            return None
        siblings = parent.children
        later = siblings[siblings.index(widget) + 1 :]
        found = next((w for w in later if w.display), None)
        if found is not None:
            return found
        widget = parent
    return None
