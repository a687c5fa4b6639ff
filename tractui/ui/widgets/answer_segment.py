"""One run of blocks of a streamed answer: a ``Markdown`` widget.

A module of its own so that Markdown (and markdown-it) is imported with the
first answer, not before the app's first frame.
"""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from tractui.ui.widgets.column import StackHeight

# Textual exports only some block classes; the rest are reached through Markdown.BLOCKS
_QUOTE: type[MarkdownBlock] = Markdown.BLOCKS["blockquote_open"]
_BULLETS: type[MarkdownBlock] = Markdown.BLOCKS["bullet_list_open"]
_NUMBERS: type[MarkdownBlock] = Markdown.BLOCKS["ordered_list_open"]


class Fence(StackHeight, MarkdownFence):
    """A code block, measured from its code alone (see ``column``)."""


class BlockQuote(StackHeight, _QUOTE):  # type: ignore[misc, valid-type]
    """A quote, measured from its blocks alone."""


class BulletList(StackHeight, _BULLETS):  # type: ignore[misc, valid-type]
    """A bullet list, measured from its items alone."""


class OrderedList(StackHeight, _NUMBERS):  # type: ignore[misc, valid-type]
    """A numbered list, measured from its items alone."""


class AnswerSegment(StackHeight, Markdown):
    """One run of blocks of the answer."""

    DEFAULT_CSS = "AnswerSegment { padding: 0; margin: 0; }"  # flush with the reply, as one Markdown would be
    BLANK = True  # only background of its own: see Column
    BLOCKS: dict[str, type[MarkdownBlock]] = {
        **Markdown.BLOCKS,
        "fence": Fence,
        "code_block": Fence,
        "blockquote_open": BlockQuote,
        "bullet_list_open": BulletList,
        "ordered_list_open": OrderedList,
    }

    def __init__(self, text: str = "") -> None:
        super().__init__(text, classes="answer-segment")
