"""One run of blocks of a streamed answer: a ``Markdown`` widget.

A module of its own so that Markdown (and markdown-it) is imported with the
first answer, not before the app's first frame.
"""

from __future__ import annotations

from textual.widgets import Markdown


class AnswerSegment(Markdown):
    """One run of blocks of the answer."""

    DEFAULT_CSS = "AnswerSegment { padding: 0; margin: 0; }"  # flush with the reply, as one Markdown would be

    def __init__(self, text: str = "") -> None:
        super().__init__(text, classes="answer-segment")
