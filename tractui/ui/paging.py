"""The session's messages in the conversation view: the newest drawn at once,
older ones a batch at a time as the user scrolls up to them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tractui.ui.widgets.earlier import EarlierMessages

if TYPE_CHECKING:
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
        # the chain and the first commit drawn, while the entries above it are not read yet
        self._unread: tuple[Callable[[int | None], list[Commit]], str] | None = None

    def forget(self) -> None:
        """The view was cleared: nothing is left to draw further up."""
        self.earlier = []
        self._unread = None

    def wants_more(self, chat: ChatLog) -> bool:
        """The user scrolled to within a screen of the oldest message drawn."""
        return bool(self.earlier) and not self.drawing and not chat.following and chat.scroll_y < chat.size.height

    async def show(
        self, chat: ChatLog, chain: Callable[[int | None], list[Commit]], *, batch: int, folded: bool, public: bool
    ) -> None:
        """Draw the newest messages of ``chain`` above what the view holds, with the marker
        that counts the ones further up. Only the chain's end is read for them: the rest
        is read by the first ``show_earlier``."""
        from tractui.ui import history  # Markdown and the store's chain rules: after the first frame

        drawn, earlier = history.newest_of(chain, batch)
        self.earlier = earlier or []
        self._unread = None if earlier is not None or not drawn else (chain, drawn[0].commits[0].id)
        marker = EarlierMessages()
        widgets = [
            marker,
            *(history.widget_for(entry, self._count, self._clock, folded=folded, public=public) for entry in drawn),
        ]
        await chat.mount_all(widgets, before=chat.children[0] if chat.children else None)
        marker.show_count(len(self.earlier))

    def _read_earlier(self, chat: ChatLog) -> None:
        """The entries above the first one drawn, from the whole chain."""
        if self._unread is None:
            return
        from tractui.ui import history

        chain, first = self._unread
        self._unread = None
        pending = history.entries(chain(None))
        at = next((i for i, entry in enumerate(pending) if entry.commits[0].id == first), 0)
        self.earlier = pending[:at]
        chat.query_one(EarlierMessages).show_count(len(self.earlier))

    async def show_earlier(self, chat: ChatLog, *, batch: int, folded: bool, public: bool) -> None:
        """Draw a batch of older messages above the oldest one shown, one message at a
        time so that keys and scrolling are handled in between; a reply with its question."""
        self._read_earlier(chat)
        if not self.earlier or self.drawing:
            return
        from tractui.ui import history

        self.drawing = True
        marker = chat.query_one(EarlierMessages)
        try:
            drawn, entry = 0, None
            while self.earlier and (drawn < batch or _question_of(entry, self.earlier[-1])):
                entry = self.earlier.pop()
                drawn += entry.size
                widget = history.widget_for(entry, self._count, self._clock, folded=folded, public=public)
                # show() drew at least one message after the marker, the oldest shown
                oldest = chat.children[chat.children.index(marker) + 1]
                await chat.insert_above([widget], before=oldest)
                marker.show_count(len(self.earlier))
        finally:
            self.drawing = False


def _question_of(reply: Entry | None, entry: Entry) -> bool:
    """``entry`` is the question ``reply`` answers: a batch never ends between the two."""
    return reply is not None and reply.kind == "reply" and entry.kind == "user"
