"""The answer, rendered as Markdown while it streams.

Fragments go through Textual's ``MarkdownStream``: only the last block is
re-parsed on each append, and appends that arrive faster than the widget can
render are merged. A long answer is cut into segments at block boundaries
(a blank line outside a code fence): closed segments keep their cached layout,
so each frame lays out only the growing segment instead of the whole answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

    from tractui.ui.widgets.answer_segment import AnswerSegment

PIN_RETRY = 0.05  # seconds between tries to pin a segment that has not been laid out yet
SEGMENT_CHARS = 2000  # a segment closes at the first safe block boundary after this many characters
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
_CONTINUES = re.compile(r"[ \t]|[-*+>|]|\d+[.)]")  # indented text, lists, quotes, tables carry on across a blank line


def safe_cut(text: str, start: int) -> int:
    """The first offset at or after ``start`` just past a blank line that ends a block
    outside any code fence, where the next line starts a fresh block; -1 if none."""
    cut = text.find("\n\n", start)
    while cut >= 0:
        rest = text[cut + 2 : cut + 6]
        if rest and not _CONTINUES.match(rest) and len(_FENCE.findall(text, 0, cut)) % 2 == 0:
            return cut + 2
        cut = text.find("\n\n", cut + 1)
    return -1


class AnswerView(Vertical):
    def __init__(self, text: str = "") -> None:
        super().__init__(classes="answer")
        self._written: list[str] = []
        self._open = ""  # the source of the last segment
        self._segment: AnswerSegment | None = None
        self._stream: MarkdownStream | None = None
        self._initial = text
        self._pinned_width = 0

    @property
    def text(self) -> str:
        """Everything written so far, including fragments still queued for display."""
        return self._initial + "".join(self._written)

    async def on_mount(self) -> None:
        if self._initial:  # history: whole text at once, cut the same way as a stream
            text, self._initial = self._initial, ""
            await self.write(text)
            await self.finish()

    async def write(self, fragment: str) -> None:
        if not fragment:
            return
        self._written.append(fragment)
        while fragment:
            before = len(self._open)
            self._open += fragment
            cut = safe_cut(self._open, max(SEGMENT_CHARS, before - 6)) if len(self._open) > SEGMENT_CHARS else -1
            if cut < 0:
                await self._append(fragment)
                return
            await self._append(self._open[before:cut])
            fragment = self._open[cut:]
            self._open = ""
            await self.finish()

    async def _append(self, fragment: str) -> None:
        if not fragment:
            return
        if self._stream is None:
            # Markdown: imported with the first answer, after the app's first frame
            from tractui.ui.widgets.answer_segment import AnswerSegment

            self._segment = AnswerSegment()
            await self.mount(self._segment)
            self._stream = AnswerSegment.get_stream(self._segment)
        await self._stream.write(fragment)

    async def finish(self) -> None:
        """Render what is queued in the growing segment and stop its updater."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
            if self._segment is not None:
                self.call_after_refresh(self._pin, self._segment)

    def _pin(self, segment: Widget) -> None:
        """Fix a finished segment's height at what it measures.

        Textual re-measures auto-height children against their parent's
        current height, so while the answer grows every finished segment
        would be laid out again on every frame; with a fixed height its
        layout is cached. A new width unpins them (``on_resize``).
        """
        streaming = segment is self._segment and self._stream is not None
        if not segment.is_mounted or streaming:
            return
        width = self.content_region.width
        if not width:  # not laid out yet
            self.set_timer(PIN_RETRY, lambda: self._pin(segment))
            return
        # measured now, from the blocks themselves: the last frame may predate the last blocks
        segment.styles.height = segment.get_content_height(self.content_region.size, self.app.size, width)

    def on_resize(self) -> None:
        width = self.size.width
        if width == self._pinned_width:
            return
        self._pinned_width = width
        for segment in self.children:
            segment.styles.height = "auto"
            self.call_after_refresh(self._pin, segment)
