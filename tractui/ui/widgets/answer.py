"""The answer, rendered as Markdown while it streams.

Fragments go through Textual's ``MarkdownStream``: only the last block is
re-parsed on each append, and appends that arrive faster than the widget can
render are merged, so the whole message is never re-rendered per token.
"""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AnswerView(Markdown):
    def __init__(self, text: str = "") -> None:
        super().__init__(text, classes="answer")
        self._stream: MarkdownStream | None = None
        self._written: list[str] = [text] if text else []

    @property
    def text(self) -> str:
        """Everything written so far, including fragments still queued for display."""
        return "".join(self._written)

    async def write(self, fragment: str) -> None:
        if not fragment:
            return
        self._written.append(fragment)
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(fragment)

    async def finish(self) -> None:
        """Render what is queued and stop the background updater."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
