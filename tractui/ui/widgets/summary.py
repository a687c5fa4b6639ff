"""A compaction summary in the conversation: one line that opens to the summary text.

The originals it stands in for stay on screen above it, dimmed; this marker
says what the model sees instead of them.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static


class SummaryHeader(Static):
    """The marker line; a click opens or closes the summary."""

    def on_click(self) -> None:
        parent = self.parent
        if isinstance(parent, SummaryMarker):
            parent.toggle()


class SummaryMarker(Vertical):
    """Opens on a click; it takes no focus, so typing stays in the prompt."""

    def __init__(self, text: str, replaced: int) -> None:
        super().__init__(classes="summary-marker")
        self.text = text
        self.replaced = replaced
        self.open = False

    def compose(self) -> ComposeResult:
        yield SummaryHeader(self._header(), markup=False, classes="summary-header")
        yield Markdown(self.text, classes="summary-text")  # the summary is written in Markdown

    def _header(self) -> str:
        plural = "" if self.replaced == 1 else "s"
        arrow = "▾" if self.open else "▸"
        return f"{arrow} Summary of {self.replaced} earlier turn{plural} (the model sees this instead of the dimmed originals)"

    def toggle(self) -> None:
        self.open = not self.open
        self.set_class(self.open, "-open")
        self.query_one(SummaryHeader).update(self._header())
