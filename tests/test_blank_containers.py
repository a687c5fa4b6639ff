"""Containers that draw only their background (``column.Blank``: the answer's columns and
segments, the chat log) fill their lines with one strip instead of Textual's painting: the cells must be
the same, in any theme and with ``NO_COLOR``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from test_list_rows import Cell, cells
from textual.app import App, ComposeResult
from textual.widget import Widget

from tractui.ui.widgets.answer_segment import AnswerSegment
from tractui.ui.widgets.chat_log import ChatLog
from tractui.ui.widgets.column import Column

Painting = Callable[[str], Coroutine[Any, Any, tuple[list[list[Cell]], list[list[Cell]]]]]


def _alike_in_every_theme(both: Painting, monkeypatch: pytest.MonkeyPatch) -> None:
    """``both(theme)`` paints the blank widget and Textual's painting of it: alike in a dark
    and a light theme, and with ``NO_COLOR``."""
    for theme in ("textual-dark", "solarized-light"):
        ours, painted = asyncio.run(both(theme))
        assert ours == painted and len(ours) > 2
    monkeypatch.setenv("NO_COLOR", "1")
    ours, painted = asyncio.run(both("nord"))
    assert ours == painted


def test_a_blank_container_draws_what_textual_draws_for_it(monkeypatch):
    """A column with padding holding a segment, beside the same column painted by Textual."""

    class Painted(Column):
        BLANK = False
        render_lines = Widget.render_lines  # Textual's painting alone, not Blank's

    class Columns(App[None]):
        CSS = "Column { padding: 1 2; }"

        def compose(self) -> ComposeResult:
            yield Column(AnswerSegment("- a list\n\ntext " * 3), id="blank")
            yield Painted(AnswerSegment("- a list\n\ntext " * 3), id="painted")

    async def both(theme: str) -> tuple[list[list[Cell]], list[list[Cell]]]:
        app = Columns()
        async with app.run_test(size=(40, 30)) as pilot:
            app.theme = theme
            await pilot.pause()
            ours, painted = (
                cells(widget.render_lines(widget.size.region)) for widget in app.query(AnswerSegment).results()
            )
            assert ours == painted  # the segments (Blank both: a control)
            ours, painted = (cells(column.render_lines(column.size.region)) for column in app.query(Column))
            return ours, painted

    _alike_in_every_theme(both, monkeypatch)


def test_the_chat_log_draws_what_textual_draws_for_it(monkeypatch):
    """The log's own lines (its padding, and what no message covers), with the app's CSS for
    it, beside the same log painted by Textual."""

    class PaintedLog(ChatLog):
        BLANK = False
        render_lines = Widget.render_lines

    class Logs(App[None]):
        CSS = "ChatLog { height: 1fr; padding: 0 2; scrollbar-gutter: stable; background: $background; }"

        def compose(self) -> ComposeResult:
            for log in (ChatLog(), PaintedLog()):
                with log:
                    yield AnswerSegment("text " * 30)

    async def both(theme: str) -> tuple[list[list[Cell]], list[list[Cell]]]:
        app = Logs()
        async with app.run_test(size=(40, 20)) as pilot:
            app.theme = theme
            await pilot.pause()
            ours, painted = (cells(log.render_lines(log.size.region)) for log in app.query(ChatLog))
            return ours, painted

    assert ChatLog.BLANK  # the log paints one strip, not Textual's lines
    _alike_in_every_theme(both, monkeypatch)
