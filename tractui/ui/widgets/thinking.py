"""A thinking block shown inline before the answer it led to.

Text arrives in per-frame batches. The body is a column of chunks cut at
paragraph breaks: only the last chunk is re-rendered and re-counted on each
append, so a long thought stays cheap to stream.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.widgets import Static

from tractui.ui import format as fmt
from tractui.ui.widgets.column import Column, LaidOut

CHUNK_CHARS = 1500  # a chunk closes at the first paragraph break after this many characters


class ThinkingHeader(LaidOut, Static):
    """The one-line header; clicking it folds or unfolds its block."""

    def on_click(self) -> None:
        parent = self.parent
        if isinstance(parent, ThinkingView):
            parent.toggle_fold()


class ThinkingChunk(LaidOut, Static):
    """A run of thinking paragraphs; the last one grows with the stream."""


class ThinkingView(Column):
    """Shaded, italic, muted: the model's reasoning, streamed live."""

    def __init__(
        self,
        count_tokens: Callable[[str], int],
        clock: Callable[[], float],
        *,
        text: str = "",
        elapsed: float | None = None,
    ) -> None:
        super().__init__(classes="thinking -streaming" if elapsed is None else "thinking")
        self._count = count_tokens
        self._clock = clock
        self._started = clock()
        self._pieces: list[str] = []
        self._open = ""  # the chunk still growing
        self._last: ThinkingChunk | None = None
        self.tokens = 0
        self._closed_tokens = 0
        self.elapsed = elapsed
        self.folded = False
        self._initial = text

    @property
    def streaming(self) -> bool:
        return self.elapsed is None

    @property
    def text(self) -> str:
        return "".join(self._pieces)

    def compose(self) -> ComposeResult:
        yield ThinkingHeader(self._header(), classes="thinking-header")
        yield Column(classes="thinking-body")

    async def on_mount(self) -> None:
        if self._initial:
            await self.append(self._initial)
            self._initial = ""
            self.refresh_header()

    async def append(self, text: str) -> None:
        """Add sanitised text. Long thinking is cut at paragraph breaks into chunks:
        closed chunks are never rendered or counted again."""
        if not text:
            return
        self._pieces.append(text)
        self._open += text
        fresh: list[ThinkingChunk] = []
        if len(self._open) > CHUNK_CHARS:
            cut = self._open.rfind("\n\n")
            if cut > 0:
                closed, self._open = self._open[:cut], self._open[cut + 2 :]
                self._closed_tokens += self._count(closed)
                if self._last is None:
                    fresh.append(self._chunk(closed))
                else:
                    self._show(self._last, closed)
                self._last = None
        if self._last is None:
            fresh.append(self._chunk(self._open))
        else:
            self._show(self._last, self._open)
        if fresh:
            await self.query_one(".thinking-body", Column).mount_all(fresh)
            self._last = fresh[-1]
        self.tokens = self._closed_tokens + self._count(self._open)
        self.refresh_header()

    def _chunk(self, text: str) -> ThinkingChunk:
        widget = ThinkingChunk(markup=False, classes="thinking-text")
        self._show(widget, text)
        return widget

    @staticmethod
    def _show(widget: Static, text: str) -> None:
        shown = text.strip("\n")
        widget.update(shown)
        widget.display = bool(shown.strip())

    def recount(self) -> None:
        """Count a finished view's thinking again: drawn from history before the tokenizer
        was loaded, it counted none."""
        if not self.streaming and not self.tokens and self.text:
            self.tokens = self._count(self.text)
            self.refresh_header()

    def finish(self) -> None:
        if self.elapsed is None:
            self.elapsed = self._clock() - self._started
        self.remove_class("-streaming")
        self.refresh_header()

    def toggle_fold(self) -> None:
        self.folded = not self.folded
        self.set_class(self.folded, "-folded")
        self.refresh_header()

    def refresh_header(self) -> None:
        for header in self.query_children(ThinkingHeader):  # none before compose; is_mounted is False in on_mount
            header.update(self._header())

    def _header(self) -> str:
        marker = "▸ " if self.folded else ""
        count = f" · {fmt.tokens(self.tokens)} token{'' if self.tokens == 1 else 's'}" if self.tokens else ""
        if self.elapsed is None:
            return f"{marker}Thinking… {fmt.duration(self._clock() - self._started)}{count}"
        folded = " (folded)" if self.folded else ""
        took = f" for {fmt.duration(self.elapsed)}" if self.elapsed >= 0 else ""  # < 0: not recorded (history)
        return f"{marker}Thought{took}{count}{folded}"


class RedactedMarker(Static):
    """Encrypted or omitted thinking: kept for the model, never shown as text."""

    REDACTED = "🔒 Redacted thinking (encrypted by the provider, kept for the model)"
    OMITTED = "Thinking (not shown by the provider; kept for the model)"

    def __init__(self, text: str = REDACTED) -> None:
        super().__init__(text, classes="thinking redacted")
