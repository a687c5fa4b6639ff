"""Measuring a column of auto-height children without its parent's height.

Textual measures a container whose children all have dynamic heights by
arranging it against its parent's height (so ``fr`` and ``%`` children can
resolve). Every parent of a growing reply grows with it, so each measurement
misses the arrangement cache and the reply is laid out again once per
ancestor, every frame. The children here are all ``height: auto``, for which
the parent's height changes nothing: measured against a height of 0, the
arrangement is cached until the column or its width changes.
"""

from __future__ import annotations

from typing import cast

from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.layout import DockArrangeResult
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widget import Widget

from tractui.ui.internals import listed


class LaidOut:
    """Mixin for a widget whose virtual size comes only from a layout pass.

    After each layout Textual stores every resized widget's new virtual size
    through a reactive that asks for another layout. That second pass changes
    nothing (the sizes came from the pass just done; a scroll container's
    scrollbars ask for their own layout when they appear), yet it arranges
    the whole screen again: each frame of a stream was laid out twice, and a
    key pressed meanwhile waited for both. Growing widgets of a reply take
    this mixin, listed before their widget class (see ``StackHeight``).
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)


class StackHeight(LaidOut):
    """Mixin for a container whose children never depend on its height.

    Listed before the widget class and not a widget itself, so that the
    widget class stays the first base: Textual takes the CSS type names
    (``MarkdownFence``, ``Vertical``...) from the first widget base only.
    """

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        widget = cast(Widget, self)
        if not width or not widget.children:
            return 0
        return stacked_height(widget.arrange(Size(width, 0)))

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Textual's arrangement, queried without a grid (see ``PlacementList``)."""
        return listed(super().arrange(size, optimal))  # type: ignore[misc]


def stacked_height(arrangement: DockArrangeResult) -> int:
    """The height of ``arrangement.total_region``, from its placements alone.

    Textual's total region is read from the arrangement's spatial map, which
    files each placement under every 20 rows it covers: building it for the
    measure cost time in proportion to the height of what the column holds
    (a long answer's frozen part), every frame the answer grew.
    """
    bottom = 0  # the region starts at the top: a vertical layout places nothing above it
    for placement in arrangement.placements:
        if not (placement.fixed or placement.overlay):
            bottom = max(bottom, placement.region.bottom + placement.margin.bottom)
    return bottom + arrangement.scroll_spacing.bottom


class Blank:
    """Mixin for a widget that draws only its background (no border, no content of its own),
    listed before the widget class.

    A column (and the chat log) grows with every frame of a reply, and a resized
    widget re-renders every visible line; Textual's ``BLANK`` fills them with one strip, but
    unfiltered: with ``NO_COLOR`` set, the gaps between an answer's blocks
    kept their colour while all else turned grey. The strip is filtered here
    as Textual filters every line it paints.
    """

    BLANK = True

    def render_lines(self, crop: Region) -> list[Strip]:
        widget = cast(Widget, self)
        strips: list[Strip] = super().render_lines(crop)  # type: ignore[misc]
        filters = widget.get_line_filters()
        if not filters or not strips:
            return strips
        strip = strips[0]  # one strip for every line
        for line_filter in filters:
            strip = strip.apply_filter(line_filter, widget.background_colors[1])
        return [strip] * len(strips)


class Column(Blank, StackHeight, Vertical):
    """A ``Vertical`` of auto-height children, measured from its children alone; blank."""
