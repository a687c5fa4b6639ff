"""One run of blocks of a streamed answer: a ``Markdown`` widget.

A module of its own so that Markdown (and markdown-it) is imported with the
first answer, not before the app's first frame.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol, cast

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from tractui.ui.internals import GrowsInPlace, highlighted_code, list_items
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


def parse(text: str) -> list[Token]:
    """``text``'s tokens, as a segment parses it."""
    return _parser().parse(text)


WARMED_LANGUAGES = ("python",)  # the commonest fence in answers, and one of the dearest lexers to make


def warm() -> None:
    """The parser, and the lexer of each of ``WARMED_LANGUAGES``, made ahead: imported with
    this module and made at the first answer and its first code block, they held the screen
    (figures: docs/ui.md, "Speed")."""
    parse("warm")
    for language in WARMED_LANGUAGES:
        MarkdownFence.highlight("", language)


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


class _GrowingList(StackHeight, GrowsInPlace):
    """A list that a streamed append updates by its last item and the new ones: the
    items before the last are finished (an item ends where the next begins) and keep
    their widgets. A segment is only appended to, from empty, so the list handed over
    is parsed from the mounted list's first item. Only if the numbers grow a digit
    (every number is aligned to the widest) or the list lost an item (``- -`` became
    ``- - -``, a rule) is all of it built again, as Textual would."""

    async def grow(self, block: MarkdownBlock) -> bool:
        widget = cast(MarkdownBlock, self)
        rows = list(widget.children)  # one per item, composed when mounted
        items = list_items(block)
        keep = len(rows) - 1  # the last item may have grown
        if (
            type(block) is not type(self)
            or keep < 1
            or len(items) < len(rows)
            or not self._same_width(items, len(rows))
        ):
            return False
        self._skip(items, keep)
        with widget.app.batch_update():
            await widget.remove_children(rows[keep:])
            await widget.mount_all(block.compose())
        return True

    def _same_width(self, items: list[MarkdownBlock], before: int) -> bool:
        return True

    def _skip(self, items: list[MarkdownBlock], count: int) -> None:
        """Leave the first ``count`` items out of ``items``, those this list shows already."""
        del items[:count]


class BulletList(_GrowingList, _BULLETS):  # type: ignore[misc, valid-type]
    """A bullet list, measured from its items alone."""


class OrderedList(_GrowingList, _NUMBERS):  # type: ignore[misc, valid-type]
    """A numbered list, measured from its items alone."""

    def _same_width(self, items: list[MarkdownBlock], before: int) -> bool:
        """Whether the widest number of ``items`` has as many digits as that of the ``before``
        items shown now (numbers count up from the first item's)."""
        start = _number(items[0])
        return len(str(start + len(items) - 1)) == len(str(start + before - 1))

    def _skip(self, items: list[MarkdownBlock], count: int) -> None:
        """As for any list; the first item left is numbered as it is shown (Textual numbers
        a list up from its first item's number as written)."""
        shown = _number(items[0]) + count
        del items[:count]
        cast(_Numbered, items[0]).bullet = str(shown)


class _Numbered(Protocol):
    """A list item as Textual builds it: the number it was written with."""

    bullet: str


def _number(item: MarkdownBlock) -> int:
    """An ordered item's number as written (Textual counts from 1 if it is not a number)."""
    bullet = cast(_Numbered, item).bullet
    return int(bullet) if bullet.isdigit() else 1


_OWN_BLOCKS: dict[str, type[MarkdownBlock]] = {
    "fence": Fence,
    "code_block": Fence,
    "blockquote_open": BlockQuote,
    "bullet_list_open": BulletList,
    "ordered_list_open": OrderedList,
}


class AnswerSegment(StackHeight, Markdown):
    """One run of blocks of the answer.

    ``continues``: its last list goes on in the next segment (``answer.list_cut``), so it
    ends without the list's bottom margin, as the one list would.
    """

    DEFAULT_CSS = "AnswerSegment { padding: 0; margin: 0; }"  # flush with the reply, as one Markdown would be
    BLANK = True  # only background of its own: see Column
    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012  # declared so by Markdown
        name: _OWN_BLOCKS.get(name) or _laid_out(block) for name, block in Markdown.BLOCKS.items()
    }

    def __init__(self, text: str = "", *, continues: bool = False) -> None:
        super().__init__(text, classes="answer-segment", parser_factory=_parser)
        self._continues = continues

    @property
    def continues(self) -> bool:
        return self._continues

    @continues.setter
    def continues(self, value: bool) -> None:
        if value != self._continues:  # its height changes: measured again at the next layout
            self._continues = value
            self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As tall as its blocks; without the last list's bottom margin if that list goes on
        (a class or pseudo-class on the list would restyle all its items whenever one is mounted)."""
        height = super().get_content_height(container, viewport, width)
        last = self.children[-1] if self.children else None
        if self._continues and isinstance(last, _GrowingList):
            return height - last.styles.margin.bottom
        return height
