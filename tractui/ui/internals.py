"""Every reach into Textual's private API, in one place.

Each function here has a canary test (``tests/test_textual_internals.py``)
that fails with a clear message when a Textual release moves what it uses;
Textual is pinned to the minor series those tests passed on (pyproject). The
overrides of public hooks that depend on Textual's layout behaviour
(``LaidOut.virtual_size``, ``ChatLog.arrange``) have canaries there too. When
an upgrade breaks one, ``/set ui.markdown public`` draws answers with public
Textual only (``Markdown.append``) while the fast path is mended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events
from textual._compositor import ChopsUpdate, Compositor
from textual.widget import Widget

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.app import App
    from textual.content import Content
    from textual.screen import Screen
    from textual.strip import Strip
    from textual.widgets.markdown import MarkdownFence

Painted = Callable[["Screen[object]", "RenderableType | None"], None]


def capture_strips(widget: Widget) -> list[Strip]:
    """The lines ``widget`` and its children draw at their current layout, including the part
    scrolled out of view: a compositor of its own lays the subtree out at the widget's size."""
    compositor = Compositor()
    compositor.reflow(widget, widget.outer_size)
    return compositor.render_strips()


def screen_strips(screen: Screen[object]) -> list[Strip]:
    """The lines the screen shows now, as its compositor last arranged them."""
    return screen._compositor.render_strips()


def anchor_released(widget: Widget) -> bool:
    """The user scrolled an anchored widget away from its end (``is_anchored`` stays true)."""
    return widget._anchor_released


def forget_painted_lines(widget: Widget) -> None:
    """Let ``widget`` and its descendants drop the lines they keep from their last paint.

    Textual keeps them after a widget is removed, until a garbage collection finds
    the widget's reference cycles, and every line keeps caches of its own: each
    collection meanwhile walked them all (figures: docs/ui.md, "Speed")."""
    for node in widget.walk_children(Widget, with_self=True):
        node._styles_cache.clear()


def highlighted_code(fence: MarkdownFence) -> Content:
    """The fence's code as Textual highlighted it for the current theme."""
    return fence._highlighted_code


def watch_painted(app: App[object], painted: Painted) -> None:
    """Call ``painted(screen, update)`` after every update the app hands its driver (headless:
    produced, not written); ``update`` is None when nothing changed."""
    display = app._display

    def wrapped(screen: Screen[object], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        painted(screen, renderable)

    app._display = wrapped  # type: ignore[method-assign]


def painted_rows(renderable: RenderableType, top: int, bottom: int) -> list[list[Strip]]:
    """The strips an update paints on screen rows ``top``..``bottom - 1``, row by row."""
    if isinstance(renderable, ChopsUpdate):
        return [
            [strip for strip in renderable.chops[y].values() if strip]
            for y, _, _ in renderable.spans
            if top <= y < bottom
        ]
    region = getattr(renderable, "region", None)
    strips = getattr(renderable, "strips", None)
    if region is None or strips is None:
        return []
    return [list(line) for y, line in enumerate(strips, region.y) if top <= y < bottom]


def send_key(app: App[object], character: str) -> None:
    """Put a key press in the app's input queue as the terminal driver would."""
    driver = app._driver
    if driver is None:
        raise RuntimeError("the app has no driver: it is not running")
    driver.send_message(events.Key(character, character))
