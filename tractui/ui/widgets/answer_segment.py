"""One run of blocks of a streamed answer: a ``Markdown`` widget.

A module of its own so that Markdown (and markdown-it) is imported with the
first answer, not before the app's first frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import ClassVar, Protocol, cast

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Offset, Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from tractui.ui.internals import GrowsInPlace, highlighted_code, item_row, list_items
from tractui.ui.widgets.column import Blank, LaidOut, StackHeight

# Textual exports only some block classes; the rest are reached through Markdown.BLOCKS
_QUOTE: type[MarkdownBlock] = Markdown.BLOCKS["blockquote_open"]
_BULLETS: type[MarkdownBlock] = Markdown.BLOCKS["bullet_list_open"]
_NUMBERS: type[MarkdownBlock] = Markdown.BLOCKS["ordered_list_open"]
_PARAGRAPH: type[MarkdownBlock] = Markdown.BLOCKS["paragraph_open"]


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


class Paragraph(LaidOut, _PARAGRAPH):  # type: ignore[misc, valid-type]
    """A paragraph; as the first block of a list item, it draws the item's bullet too.

    Textual draws an item as a row holding the bullet and a column holding the
    item's blocks: four widgets to mount, style, lay out and paint for each
    line of a list (figures: docs/ui.md, "Speed"). An item that starts with a
    paragraph is that paragraph, its left padding as wide as the bullet, which it
    paints on its first line with the bullet's style, and the item's other
    blocks below it, indented as far (see ``_rows``); ``tests/test_list_rows.py``
    checks it draws what Textual's row draws, cell for cell.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"item-bullet"}
    DEFAULT_CSS = """
    MarkdownParagraph > .item-bullet { color: $text-primary; }
    MarkdownParagraph:light > .item-bullet { color: $text-secondary; }
    """
    SCOPED_CSS = False

    bullet = ""  # the item's bullet, as Textual's row would show it; none outside a list
    _bullet_style: Style | None = None  # made at the first paint after each change of style

    def as_item(self, bullet: str) -> Paragraph:
        """This paragraph drawn as a list item with ``bullet``."""
        self.bullet = bullet
        self.styles.padding = (0, 0, 0, cell_len(bullet))
        return self

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._bullet_style = None

    def render_lines(self, crop: Region) -> list[Strip]:
        strips = super().render_lines(crop)
        width = cell_len(self.bullet)
        if not width or crop.y > 0 or crop.x >= width or not strips:
            return strips
        if self._bullet_style is None:
            self._bullet_style = self.get_visual_style("item-bullet").rich_style
        # the offset maps the mouse on the bullet to the item's start, as Textual's bullet does
        bullet = Strip([Segment(self.bullet, self._bullet_style)], width).apply_offsets(0, 0)
        for line_filter in self.get_line_filters():  # as Textual filters every line it paints
            bullet = bullet.apply_filter(line_filter, self.background_colors[1])
        bullet = bullet.crop(crop.x, min(width, crop.right))
        first = strips[0]
        strips[0] = Strip.join([bullet, first.crop(width - crop.x, first.cell_length)])
        return strips

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """As Textual's row: the bullet (as its own widget gives it) before the text."""
        selected = super().get_selection(selection)
        if selected is None or not self.bullet or selection.start not in (None, Offset(0, 0)):
            return selected
        text, ending = selected
        return f"{self.bullet} {text}", ending


ITEM_REST = "item-rest"  # the class of an item's block after its first, when the item is not a row


def _rows(composed: ComposeResult) -> Iterator[Widget]:
    """The rows Textual composed for a list, each item that starts with a paragraph as that
    paragraph (see ``Paragraph``) and its other blocks indented below it.

    Only paragraphs and lists follow the first paragraph: inside an item their vertical
    margins are 0, so stacked in the list they take the rows they took in the item's column.
    A block with margins (a fence, a quote) would share its margin with the next item's
    instead of adding to it: that item stays Textual's row."""
    for row in composed:
        match item_row(row):
            case (bullet, [Paragraph() as paragraph, *rest]) if all(
                isinstance(b, Paragraph | _GrowingList) for b in rest
            ):
                yield paragraph.as_item(bullet)
                for block in rest:
                    block.add_class(ITEM_REST)
                    block.styles.margin = (0, 0, 0, cell_len(bullet))
                    yield block
            case _:
                yield row


class _GrowingList(StackHeight, GrowsInPlace):
    """A list that a streamed append updates by its last item and the new ones: the
    items before the last are finished (an item ends where the next begins) and keep
    their widgets. A segment is only appended to, from empty, so the list handed over
    is parsed from the mounted list's first item. Only if the numbers grow a digit
    (every number is aligned to the widest) or the list lost an item (``- -`` became
    ``- - -``, a rule) is all of it built again, as Textual would."""

    async def grow(self, block: MarkdownBlock) -> bool:
        widget = cast(MarkdownBlock, self)
        rows = list(widget.children)  # composed when mounted: per item a row, or its blocks (see ``_rows``)
        firsts = [at for at, row in enumerate(rows) if not row.has_class(ITEM_REST)]  # where each item starts
        items = list_items(block)
        keep = len(firsts) - 1  # the last item may have grown
        if (
            type(block) is not type(self)
            or keep < 1
            or len(items) < len(firsts)
            or not self._same_width(items, len(firsts))
        ):
            return False
        self._skip(items, keep)
        with widget.app.batch_update():
            await widget.remove_children(rows[firsts[keep] :])
            await widget.mount_all(block.compose())
        return True

    def _same_width(self, items: list[MarkdownBlock], before: int) -> bool:
        return True

    def _skip(self, items: list[MarkdownBlock], count: int) -> None:
        """Leave the first ``count`` items out of ``items``, those this list shows already."""
        del items[:count]


class BulletList(_GrowingList, _BULLETS):  # type: ignore[misc, valid-type]
    """A bullet list, measured from its items alone."""

    def compose(self) -> ComposeResult:
        yield from _rows(super().compose())


class OrderedList(_GrowingList, _NUMBERS):  # type: ignore[misc, valid-type]
    """A numbered list, measured from its items alone."""

    def compose(self) -> ComposeResult:
        yield from _rows(super().compose())

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
    "paragraph_open": Paragraph,
    "fence": Fence,
    "code_block": Fence,
    "blockquote_open": BlockQuote,
    "bullet_list_open": BulletList,
    "ordered_list_open": OrderedList,
}


class AnswerSegment(Blank, StackHeight, Markdown):
    """One run of blocks of the answer.

    ``continues``: its last list goes on in the next segment (``answer.list_cut``), so it
    ends without the list's bottom margin, as the one list would.
    """

    DEFAULT_CSS = "AnswerSegment { padding: 0; margin: 0; }"  # flush with the reply, as one Markdown would be
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
