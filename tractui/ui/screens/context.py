"""``/context``: the gauge's breakdown as a bar chart and as numbers.

Every figure comes from one ``ContextReading`` (tractui/core/context.py), the
same reading the footer shows and compaction decides on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from tractui.ui import format as fmt
from tractui.ui.screens.overlay import ReadingOverlay
from tractui.ui.widgets.footer import gauge_label, level

CHART_WIDTH = 40


def _bar(value: int, scale: int, colour: str, empty: str) -> Text:
    filled = round(CHART_WIDTH * value / scale) if scale else 0
    if value and not filled:
        filled = 1
    filled = min(filled, CHART_WIDTH)
    return Text.assemble(("█" * filled, colour), ("░" * (CHART_WIDTH - filled), empty))


def context_report(reading: Any, colours: dict[str, str], compactions: int = 0) -> tuple[Text, Table, Text]:
    """Title line, chart table, and the notes under it (basis, error, warnings).

    The basis shown is the reading's own, the call the number was built on.
    """
    basis = reading.basis
    state = level(reading)
    accent = colours.get(f"gauge-{state}", "green")
    empty = colours.get("gauge-empty", "grey30")
    title = Text.assemble(("Context  ", "bold"), (gauge_label(reading), f"bold {accent}"))
    breakdown = reading.breakdown
    rows = [
        ("system", breakdown.system, colours.get("secondary", "magenta")),
        ("tools", breakdown.tools, colours.get("accent", "cyan")),
        ("messages", breakdown.messages, colours.get("primary", "blue")),
        ("thinking", breakdown.thinking, colours.get("thinking-foreground", "grey70")),
        *([("count gap", breakdown.gap, colours.get("primary", "blue"))] if breakdown.gap else []),
        ("output reserve", reading.reserve, colours.get("warning", "yellow")),
        ("safety margin", reading.margin, colours.get("warning", "yellow")),
        ("free", reading.free, colours.get("gauge-ok", "green")),
    ]
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="left")
    table.add_column()
    table.add_column(justify="right")
    for name, value, colour in rows:
        figure = fmt.tokens(value) if value >= 0 else f"-{fmt.tokens(-value)}"  # a gap may be negative
        table.add_row(name, _bar(max(0, value), reading.limit, colour, empty), figure)
    notes = Text()
    share = reading.threshold / reading.usable if reading.usable else 0
    notes.append(
        f"window {fmt.tokens(reading.limit)} · usable {fmt.tokens(reading.usable)} after the reserve and margin · "
        f"compacts past {fmt.tokens(reading.threshold)} ({share:.0%} of usable)\n"
    )
    notes.append(
        "the footer's bar fills towards the usable window; its ┆ marks where compaction fires, and the colour "
        "turns as the reading nears and passes that point\n"
    )
    if reading.estimated or basis is None:
        notes.append(
            'basis: estimated with the tokenizer — "est." in the footer — because no provider has reported usage '
            "for this history yet (or it changed since); the next reply's usage makes it exact\n"
        )
    else:
        notes.append(
            f"basis: last call read {fmt.tokens(basis.input_tokens)}, wrote {fmt.tokens(basis.output_tokens)}"
            f" · new since {fmt.tokens(reading.new_since)}\n"
        )
    if reading.last_error is not None:
        tokens, fraction = reading.last_error
        side = "over" if tokens > 0 else "under" if tokens < 0 else "exactly"
        notes.append(
            f"last estimate's error: {tokens:+d} tokens ({fraction:+.1%}): the reading before the last request, "
            f"minus the input the provider reported ({side})\n"
        )
    if breakdown.gap:
        notes.append(
            "count gap: what the provider counted beyond the tokenizer at the last calls, carried over (an estimate)\n"
        )
    if compactions:
        notes.append(f"compacted {compactions}× in this session\n")
    for warning in reading.warnings:
        notes.append(f"⚠ {warning}\n", style=colours.get("warning", "yellow"))
    notes.rstrip()
    return title, table, notes


class ContextScreen(ReadingOverlay):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,enter", "dismiss", "Close")]

    def __init__(self, reading: Any, compactions: int = 0, keep: Callable[[events.Key], None] | None = None) -> None:
        super().__init__(keep)
        self.reading = reading
        self.compactions = compactions

    def compose(self) -> ComposeResult:
        title, table, notes = context_report(self.reading, self.app.theme_variables, self.compactions)
        with VerticalScroll(id="context-box", classes="overlay-box"):  # scrolls on a small terminal
            yield Static(title, id="context-title")
            yield Static(table, id="context-chart")
            yield Static(notes, id="context-notes")
            yield Static("Esc to close", classes="overlay-hint")
