"""Finished runs of answer blocks, shown as the lines they rendered to.

Textual lays out every widget of the screen on every layout pass, on screen
or scrolled out of view, so a long answer made of hundreds of Markdown block
widgets makes each frame slower than the last. Once a segment is finished
its lines never change (until the width or theme does), so they are captured
once and drawn by a single widget; consecutive captured segments share one,
so a whole answer costs a layout pass one widget. It keeps each segment's
Markdown source, to be drawn and captured again.

The lines are kept as tuples of each segment's text, style number and
control codes, made into strips only when drawn: a ``Strip`` carries a dozen caches, and a ``Segment`` holds
its style; thousands of either kept alive made every full garbage collection
longer. A tuple holding only strings and numbers is one the collector stops
walking.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import ControlCode, Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

Row = tuple[tuple[str, int, "Sequence[ControlCode] | None"], ...]
"""A captured line: each segment's text, its style's number and its control codes (None: drawn text)."""


class FrozenSegment(Widget):
    """Draws captured lines; selectable and copyable like the text it stands for."""

    DEFAULT_CSS = "FrozenSegment { height: auto; }"

    def __init__(self, strips: list[Strip], width: int, part: tuple[str, bool]) -> None:
        super().__init__(classes="answer-frozen")
        self._rows: list[tuple[Row, int]] = []
        self._styles: list[Style | None] = []  # a row's style numbers index this
        self._style_numbers: dict[int, int] = {}  # by the style's id: the list keeps each alive
        self._lines: list[str] = []
        self.captured_width = width
        # one per captured segment, each drawn again on its own when thawed: its source, and
        # whether its last list goes on in the next one
        self.parts: list[tuple[str, bool]] = []
        self._selected: LRUCache[int, Strip] = LRUCache(256)
        self._add(strips, part)

    def extend(self, strips: list[Strip], part: tuple[str, bool]) -> None:
        """Add the lines of the segment that follows, captured at the same width."""
        self._add(strips, part)
        self.refresh(layout=True)

    def _add(self, strips: list[Strip], part: tuple[str, bool]) -> None:
        self._rows += [(self._row(strip), strip.cell_length) for strip in strips]
        self._lines += [strip.text.rstrip() for strip in strips]
        self.parts.append(part)

    def _row(self, strip: Strip) -> Row:
        return tuple((text, self._style_number(style), control) for text, style, control in strip)

    def _style_number(self, style: Style | None) -> int:
        number = self._style_numbers.get(id(style))
        if number is None:
            number = self._style_numbers[id(style)] = len(self._styles)
            self._styles.append(style)
        return number

    def _segments(self, row: Row) -> list[Segment]:
        styles = self._styles
        return [Segment(text, styles[number], control) for text, number, control in row]

    @property
    def lines(self) -> list[str]:
        """The plain text of each line, as on screen."""
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self.captured_width

    def render_line(self, y: int) -> Strip:
        if y >= len(self._rows):
            return Strip.blank(self.size.width)
        row, length = self._rows[y]
        # offsets in each segment's meta map the mouse to (column, line) for selection
        strip = Strip(self._segments(row), length).apply_offsets(0, y)
        selection = self.text_selection
        if selection is None or (span := selection.get_span(y)) is None:
            return strip
        if (cached := self._selected.get(y)) is not None:
            return cached
        start, end = span
        highlighted = self._highlight(strip, self._lines[y], start, len(self._lines[y]) if end == -1 else end)
        self._selected[y] = highlighted
        return highlighted

    def _highlight(self, strip: Strip, text: str, start: int, end: int) -> Strip:
        """``strip`` with columns ``start``..``end`` (characters of ``text``) in the selection style."""
        from rich.cells import cell_len

        left, right = cell_len(text[:start]), cell_len(text[:end])
        if right <= left:
            return strip
        before, chosen, after = strip.divide([left, right, strip.cell_length])[:3]
        marked = Strip(list(Segment.apply_style(list(chosen), post_style=self._selection_style())), chosen.cell_length)
        return Strip.join([before, marked, after])

    def _selection_style(self) -> Style:
        """The screen's selection colours over this view, as Textual's own widgets draw them: a
        transparent selection foreground keeps each character's colour. (The combined Rich style
        the screen offers blends that foreground into the background: text the colour of its
        background, invisible.)"""
        styles = self.screen.get_component_styles("screen--selection")
        background = self.background_colors[1] + styles.background
        color = styles.color
        return Style(bgcolor=background.rich_color, color=None if color.a == 0 else (background + color).rich_color)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self._lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._selected.clear()
        self.refresh()

    async def action_link(self, href: str) -> None:
        """A link in the captured Markdown was clicked: open it, as Markdown would."""
        self.app.open_url(href)
