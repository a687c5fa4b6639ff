"""A thinking block shown inline before the answer it led to.

Text arrives in per-frame batches. The body is a column of paragraph
widgets: only the last paragraph is re-rendered on each append, so a long
thought stays cheap to stream.
"""

from __future__ import annotations

from typing import Callable

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tractui.ui import format as fmt


class ThinkingHeader(Static):
    """The one-line header; clicking it folds or unfolds its block."""

    def on_click(self) -> None:
        parent = self.parent
        if isinstance(parent, ThinkingView):
            parent.toggle_fold()


class ThinkingView(Vertical):
    """Shaded, italic, muted: the model's reasoning, streamed live."""

    def __init__(self, count_tokens: Callable[[str], int], clock: Callable[[], float], *, text: str = "", elapsed: float | None = None) -> None:
        super().__init__(classes="thinking")
        self._count = count_tokens
        self._clock = clock
        self._started = clock()
        self._paragraphs: list[str] = []
        self._last: Static | None = None
        self.tokens = 0
        self._closed_tokens = 0
        self._counted = 0
        self.elapsed = elapsed
        self.folded = False
        self._initial = text

    @property
    def streaming(self) -> bool:
        return self.elapsed is None

    @property
    def text(self) -> str:
        return "\n\n".join(self._paragraphs)

    def compose(self) -> ComposeResult:
        yield ThinkingHeader(self._header(), classes="thinking-header")
        yield Vertical(classes="thinking-body")

    async def on_mount(self) -> None:
        if self._initial:
            await self.append(self._initial)
            self._initial = ""
            self.refresh_header()

    async def append(self, text: str) -> None:
        """Add sanitised text; new paragraphs get their own widget."""
        if not text:
            return
        body = self.query_one(".thinking-body", Vertical)
        pieces = text.split("\n\n")
        if not self._paragraphs:
            self._paragraphs.append("")
        self._paragraphs[-1] += pieces[0]
        fresh: list[Static] = []
        if self._last is None:
            fresh.append(self._paragraph(self._paragraphs[-1]))
        elif pieces[0]:
            self._show(self._last, self._paragraphs[-1])
        for piece in pieces[1:]:
            self._paragraphs.append(piece)
            fresh.append(self._paragraph(piece))
        if fresh:
            await body.mount_all(fresh)
            self._last = fresh[-1]
        # Closed paragraphs are counted once; only the open one is recounted, so the
        # figure matches the tokenizer on the whole text without re-reading it per frame.
        for closed in self._paragraphs[self._counted : len(self._paragraphs) - 1]:
            self._closed_tokens += self._count(closed)
        self._counted = len(self._paragraphs) - 1
        self.tokens = self._closed_tokens + self._count(self._paragraphs[-1])
        self.refresh_header()

    def _paragraph(self, text: str) -> Static:
        widget = Static(markup=False, classes="thinking-text")
        self._show(widget, text)
        return widget

    @staticmethod
    def _show(widget: Static, text: str) -> None:
        shown = text.strip("\n")
        widget.update(shown)
        widget.display = bool(shown.strip())

    def finish(self) -> None:
        if self.elapsed is None:
            self.elapsed = self._clock() - self._started
        self.refresh_header()

    def toggle_fold(self) -> None:
        self.folded = not self.folded
        self.set_class(self.folded, "-folded")
        self.refresh_header()

    def refresh_header(self) -> None:
        if self.is_mounted:
            self.query_one(ThinkingHeader).update(self._header())

    def _header(self) -> str:
        marker = "▸ " if self.folded else ""
        count = f" · {fmt.tokens(self.tokens)} tokens" if self.tokens else ""
        if self.elapsed is None:
            return f"{marker}Thinking… {fmt.duration(self._clock() - self._started)}{count}"
        folded = " (folded)" if self.folded else ""
        took = f" for {fmt.duration(self.elapsed)}" if self.elapsed >= 0 else ""  # < 0: not recorded (history)
        return f"{marker}Thought{took}{count}{folded}"


class RedactedMarker(Static):
    """Encrypted thinking: kept for the model, never shown as text."""

    def __init__(self) -> None:
        super().__init__("🔒 Redacted thinking (encrypted by the provider, kept for the model)", classes="thinking redacted")
