"""One run of blocks of a streamed answer: a ``Markdown`` widget.

A module of its own so that Markdown (and markdown-it) is imported with the
first answer, not before the app's first frame.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from tractui.ui.internals import highlighted_code
from tractui.ui.widgets.column import LaidOut, StackHeight

# Textual exports only some block classes; the rest are reached through Markdown.BLOCKS
_QUOTE: type[MarkdownBlock] = Markdown.BLOCKS["blockquote_open"]
_BULLETS: type[MarkdownBlock] = Markdown.BLOCKS["bullet_list_open"]
_NUMBERS: type[MarkdownBlock] = Markdown.BLOCKS["ordered_list_open"]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """One parser for every segment: Textual builds a new one (a few hundred microseconds,
    its link patterns compiled again) for each append unless given a factory."""
    return MarkdownIt("gfm-like")


@lru_cache(maxsize=256)
def _highlighted(code: str, language: str, ansi: bool, dark: bool) -> Content:
    return MarkdownFence.highlight(code, language, ansi=ansi, dark=dark)


def _laid_out(block: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """``block`` sized by layout alone (see ``LaidOut``), under the same name for CSS."""
    return type(block.__name__, (LaidOut, block), {"__doc__": block.__doc__})


class CodeLabel(LaidOut, Label):
    """The highlighted code inside a fence; it grows as a streamed fence does."""


class Fence(StackHeight, MarkdownFence):
    """A code block, measured from its code alone (see ``column``)."""

    def compose(self) -> ComposeResult:
        yield CodeLabel(highlighted_code(self), id="code-content", expand=True)

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        """Highlighted once per code and theme: Textual highlights a fence when it is
        built and again when it is styled, and a streamed fence is rebuilt as it grows."""
        return _highlighted(code, language, ansi, dark)


class BlockQuote(StackHeight, _QUOTE):  # type: ignore[misc, valid-type]
    """A quote, measured from its blocks alone."""


class BulletList(StackHeight, _BULLETS):  # type: ignore[misc, valid-type]
    """A bullet list, measured from its items alone."""


class OrderedList(StackHeight, _NUMBERS):  # type: ignore[misc, valid-type]
    """A numbered list, measured from its items alone."""


_OWN_BLOCKS: dict[str, type[MarkdownBlock]] = {
    "fence": Fence,
    "code_block": Fence,
    "blockquote_open": BlockQuote,
    "bullet_list_open": BulletList,
    "ordered_list_open": OrderedList,
}


class AnswerSegment(StackHeight, Markdown):
    """One run of blocks of the answer."""

    DEFAULT_CSS = "AnswerSegment { padding: 0; margin: 0; }"  # flush with the reply, as one Markdown would be
    BLANK = True  # only background of its own: see Column
    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012  # declared so by Markdown
        name: _OWN_BLOCKS.get(name) or _laid_out(block) for name, block in Markdown.BLOCKS.items()
    }

    def __init__(self, text: str = "") -> None:
        super().__init__(text, classes="answer-segment", parser_factory=_parser)
