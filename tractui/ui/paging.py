"""The session's messages in the conversation view: the newest drawn at once,
older ones a batch at a time as the user scrolls up to them.

The messages not drawn yet are one run of the chain (``HistoryPager.earlier``),
and the marker (``EarlierMessages``) stands where they belong: at the top, or,
once Ctrl+Home drew the session's first messages above it, between those and
the rest. Scrolling near it draws from its side nearest the user: upwards from
below it (each message inserted above the ones drawn, the view kept), downwards
from above it (mounted before the marker, below what the user reads).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from tractui.ui.widgets.earlier import EarlierMessages

if TYPE_CHECKING:
    from textual.widget import Widget

    from tractui.store.history import Commit
    from tractui.ui.history import Entry
    from tractui.ui.widgets.chat_log import ChatLog


class HistoryPager:
    """Which messages of the chain are not drawn yet, and drawing them."""

    def __init__(self, count: Callable[[str], int], clock: Callable[[], float]) -> None:
        self._count = count
        self._clock = clock
        self.earlier: list[Entry] = []  # not drawn yet, oldest first
        self.drawing = False
        # one drawing or replacing at a time: Ctrl+Home waits for the batch under way
        self._lock = asyncio.Lock()
        self._replacing = 0  # replacements waiting or under way: batches yield to them
        self._stop: asyncio.Future[None] | None = None  # done when the view the batch draws into is replaced
        self._growing: Widget | None = None  # drawn downwards, not laid out with its text yet (``frontier``)
        # the chain and the first commit drawn, while the entries above it are not read yet
        self._unread: tuple[Callable[[int | None], list[Commit]], str] | None = None
        # what /clear took off the screen: a redraw of the session (after a compaction) leaves it off
        self.cleared: frozenset[str] = frozenset()

    @asynccontextmanager
    async def replacing(self) -> AsyncIterator[None]:
        """Change the view's messages (redraw them, remove some): the batch being drawn stops at
        its next message (a wait for its layout ends at once: the screen that lays it out may be
        the one waiting here), and the change waits for it and for a change under way."""
        self._replacing += 1
        if self._stop is not None and not self._stop.done():
            self._stop.set_result(None)
        try:
            async with self._lock:
                yield
        finally:
            self._replacing -= 1

    @property
    def busy(self) -> bool:
        """A batch is drawn or the view is being replaced: the view may hold no marker yet."""
        return self.drawing or self._replacing > 0

    def forget(self, cleared: Iterable[str] = ()) -> None:
        """The view was cleared (of the commits ``cleared``, the chain so far): nothing is left
        to draw further up, and a redraw of this session does not bring them back."""
        self.earlier = []
        self._unread = None
        self.cleared |= frozenset(cleared)

    def show_all(self) -> None:
        """Another session, or one opened anew: every message of it may be drawn."""
        self.cleared = frozenset()

    def _kept(self, entries: list[Entry]) -> list[Entry]:
        """``entries`` less those /clear took off the screen."""
        if not self.cleared:
            return entries
        return [entry for entry in entries if not all(commit.id in self.cleared for commit in entry.commits)]

    @property
    def _more(self) -> bool:
        """Messages are left to draw (or to read, then draw)."""
        return bool(self.earlier) or self._unread is not None

    def at_top(self, chat: ChatLog) -> bool:
        """The marker is the first thing in the view: the messages not drawn yet are all older than
        the ones drawn (no Ctrl+Home drew the session's first ones above it)."""
        return bool(chat.children) and isinstance(chat.children[0], EarlierMessages)

    def wanted(self, chat: ChatLog, *, up: bool) -> bool | None:
        """The user scrolled (``up`` or down) to within a screen of the messages not drawn:
        ``None`` if not (or a batch is being drawn), else whether to draw them downwards
        (from above them: the first ones first) rather than upwards (the last ones first)."""
        if not self._more or self.busy or chat.following:
            return None
        top, height = chat.scroll_y, chat.size.height
        if self.at_top(chat):
            return False if top < height else None
        y = chat.query_one(EarlierMessages).virtual_region.y
        if y < top:  # above the view
            return False if y > top - height else None
        if y >= top + height:  # below it
            return True if y < top + 2 * height else None
        return not up  # in view: the way the user is going

    def frontier(self, chat: ChatLog) -> int | None:
        """The line the view may not go below while messages between the session's first ones and
        the newest are not drawn: the top of the message being drawn there (its text is placed after
        it is laid out, so it may still be blank: the line after the message above it) or of the
        marker. ``None`` when there is no such line: nothing left to draw between."""
        if not (self._more or self.drawing) or self._replacing or chat.following or self.at_top(chat):
            return None
        growing = self._growing
        if growing is not None and growing.is_attached:  # busy mounting, it has no region of its own yet
            at = chat.children.index(growing)
            return chat.children[at - 1].virtual_region_with_margin.bottom if at else 0
        markers = chat.query(EarlierMessages)
        return markers.first().virtual_region.y if len(markers) == 1 else None

    def page_down(self, chat: ChatLog) -> bool:
        """Page Down: a page from what is in view, at once (a scroll left for the next refresh
        would be aimed at by the next key too), the view's bottom not past the ``frontier``: False
        when it stands there and must wait for the messages below to be drawn."""
        top, height = chat.scroll_y, chat.scrollable_content_region.height
        target = top + height
        frontier = self.frontier(chat)
        if frontier is not None and top <= frontier:
            if frontier - height <= top:
                return False
            target = min(target, frontier - height)
        chat.scroll_to(y=target, animate=False, immediate=True)
        return True

    def stop_at(self, chat: ChatLog, before: float, after: float) -> float | None:
        """The view went down (``before`` to ``after``, by the wheel or the scrollbar) past the
        ``frontier``: where to put it back; ``None`` if it did not, or jumped further than the
        wheel goes (a drag of the scrollbar to the end)."""
        height = chat.scrollable_content_region.height
        if after <= before or after - before > 2 * height:
            return None
        frontier = self.frontier(chat)
        if frontier is None or before > frontier:
            return None
        limit = max(before, frontier - height)
        return limit if after > limit else None

    async def show(
        self, chat: ChatLog, chain: Callable[[int | None], list[Commit]], *, batch: int, folded: bool, public: bool
    ) -> None:
        """Draw the newest messages of ``chain`` above what the view holds, with the marker
        that counts the ones further up. Only the chain's end is read for them: the rest
        is read by the first batch drawn (``show_earlier``, ``show_oldest``)."""
        from tractui.ui import history  # Markdown and the store's chain rules: after the first frame

        drawn, earlier = history.newest_of(chain, batch)
        drawn = self._kept(drawn)
        self.earlier = self._kept(earlier or [])
        self._unread = None if earlier is not None or not drawn else (chain, drawn[0].commits[0].id)
        marker = EarlierMessages()
        widgets = [
            marker,
            *(history.widget_for(entry, self._count, self._clock, folded=folded, public=public) for entry in drawn),
        ]
        await chat.mount_all(widgets, before=chat.children[0] if chat.children else None)
        self._tell(chat, marker)

    def _tell(self, chat: ChatLog, marker: EarlierMessages) -> None:
        """The marker says how many messages are not drawn (that some are, until they are read)."""
        count = None if self._unread is not None else len(self.earlier)
        marker.show_count(count, between=not self.at_top(chat))

    def _read_earlier(self, chat: ChatLog) -> None:
        """The entries above the first one drawn, from the whole chain."""
        if self._unread is None:
            return
        from tractui.ui import history

        chain, first = self._unread
        self._unread = None
        pending = history.entries(chain(None))
        at = next((i for i, entry in enumerate(pending) if entry.commits[0].id == first), 0)
        self.earlier = self._kept(pending[:at])
        self._tell(chat, chat.query_one(EarlierMessages))

    async def show_earlier(self, chat: ChatLog, *, batch: int, folded: bool, public: bool, down: bool = False) -> None:
        """Draw a batch of the messages not drawn yet, one message at a time so that keys
        and scrolling are handled in between: the last of them first, above the ones drawn
        below the marker, or (``down``) the first of them first, below the ones drawn above it.
        Nothing while a batch is being drawn or the view replaced: the next scroll asks again."""
        if self.busy:
            return
        async with self._lock:
            if self._replacing:  # asked for the view being replaced
                return
            self.drawing = True
            try:
                self._read_earlier(chat)
                await self._draw(chat, batch=batch, folded=folded, public=public, down=down)
            finally:
                self.drawing = False

    async def show_oldest(self, chat: ChatLog, *, batch: int, folded: bool, public: bool) -> None:
        """Ctrl+Home: scroll to the top and draw the session's first messages there, a batch of
        them, unless they are drawn already; the rest stay not drawn, between them and the
        newer ones, until the user scrolls to them. Waits for a batch being drawn, and for the
        view being replaced: it goes in the new one."""
        while True:
            async with self._lock:
                if not self._replacing:
                    await self._show_oldest(chat, batch=batch, folded=folded, public=public)
                    return
            await asyncio.sleep(0)  # the replacement takes the lock

    async def _show_oldest(self, chat: ChatLog, *, batch: int, folded: bool, public: bool) -> None:
        self.drawing = True  # the scroll to the top starts no batch of its own
        try:
            self._read_earlier(chat)
            # at the top: each message mounted above the marker pushes it down, the first stays in view
            chat.scroll_home(animate=False, immediate=True)
            if self.at_top(chat):
                await self._draw(chat, batch=batch, folded=folded, public=public, down=True)
        finally:
            self.drawing = False

    async def _draw(self, chat: ChatLog, *, batch: int, folded: bool, public: bool, down: bool) -> None:
        from tractui.ui import history

        pending = self.earlier
        if not pending:
            return
        stop = self._stop = asyncio.get_running_loop().create_future()  # done when the view is replaced
        marker = chat.query_one(EarlierMessages)
        drawn, entry = 0, None
        # a batch never ends between a question and the reply to it; nor goes on into a view replaced
        while pending and not stop.done() and (drawn < batch or _paired(entry, pending, down)):
            entry = pending.pop(0) if down else pending.pop()
            drawn += entry.size
            widget = history.widget_for(entry, self._count, self._clock, folded=folded, public=public)
            if down:  # below the ones drawn above the marker: what is on screen above it stays
                self._growing = widget
                try:
                    await chat.mount_placed([widget], marker, stop=stop)
                finally:
                    self._growing = None
            else:  # show() drew at least one message after the marker: the view keeps to it
                oldest = chat.children[chat.children.index(marker) + 1]
                await chat.insert_above([widget], before=oldest, stop=stop)
            if marker.is_attached:  # not in a view replaced meanwhile
                self._tell(chat, marker)


def _paired(drawn: Entry | None, pending: list[Entry], down: bool) -> bool:
    """The entry drawn last and the next one to draw are a question and its reply."""
    if drawn is None or not pending:
        return False
    question, reply = (drawn, pending[0]) if down else (pending[-1], drawn)
    return question.kind == "user" and reply.kind == "reply"
