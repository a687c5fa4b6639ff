"""The footer: provider · model · profile, the live context gauge, session totals.

The gauge shows exactly the reading compaction decides on, against what can
be sent (the window less the output reserve and margin): a bar with ``┆`` where
compaction fires and ``52.1k / 180k · compacts at 153k``, "est." while
estimated, warning-coloured near the compaction point and error-coloured past it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from tractui.ui import format as fmt

BAR_WIDTH = 16
NARROW = 90  # below this many columns the session totals are hidden
TINY = 60  # ... and below this, provider · model too
WARN_AT = 0.9  # of the compaction threshold: "getting close"

Level = Literal["ok", "warning", "error"]


class Reading(Protocol):
    """What the footer needs from ``tractui.core.gauge.ContextReading``."""

    @property
    def effective(self) -> int: ...
    @property
    def estimated(self) -> bool: ...
    @property
    def limit(self) -> int: ...
    @property
    def usable(self) -> int: ...
    @property
    def threshold(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Totals:
    reasoning: int = 0
    output: int = 0
    compactions: int = 0


@dataclass(frozen=True, slots=True)
class Where:
    provider: str = ""
    model: str = ""
    profile: str | None = None


def level(reading: Reading) -> Level:
    if reading.effective > reading.threshold:
        return "error"
    if reading.effective >= WARN_AT * reading.threshold:
        return "warning"
    return "ok"


def gauge_label(reading: Reading, *, short: bool = False) -> str:
    """``effective / usable · compacts at threshold``; ``short`` leaves out where it compacts."""
    est = " est." if reading.estimated else ""
    where = "" if short else f" · compacts at {fmt.tokens(reading.threshold)}"
    return f"{fmt.tokens(reading.effective)} / {fmt.tokens(reading.usable)}{where}{est}"


class GaugeFooter(Horizontal):
    """Shows what the screen sets: ``where``, ``reading`` and ``totals``."""

    where: reactive[Where] = reactive(Where, init=False)
    reading: reactive[Reading | None] = reactive(None, init=False)
    totals: reactive[Totals] = reactive(Totals, init=False)

    def __init__(self) -> None:
        super().__init__(id="footer")
        self.level: Level = "ok"

    def compose(self) -> ComposeResult:
        yield Static(id="footer-where", markup=False)
        yield Static(id="footer-gauge")
        yield Static(id="footer-totals", markup=False)

    def watch_where(self, where: Where) -> None:
        parts: list[str] = []
        for part in (where.provider, where.model, where.profile):
            if part and part not in parts:  # "demo · demo · demo" says it once
                parts.append(part)
        self.query_one("#footer-where", Static).update(" · ".join(parts))

    def on_resize(self) -> None:
        """The gauge figure is the last thing to go: totals first, then provider · model."""
        width = self.size.width
        self.set_class(width < NARROW, "-narrow")
        self.set_class(width < TINY, "-tiny")
        self._redraw()

    def watch_totals(self, totals: Totals) -> None:
        parts = []
        if totals.reasoning:
            parts.append(f"thinking {fmt.tokens(totals.reasoning)}")
        if totals.output:
            parts.append(f"out {fmt.tokens(totals.output)}")
        if totals.compactions:
            parts.append(f"compacted {totals.compactions}×")
        self.query_one("#footer-totals", Static).update(" · ".join(parts))

    def watch_reading(self, reading: Reading | None) -> None:
        if reading is None:
            return
        self.level = level(reading)
        for name in ("ok", "warning", "error"):
            self.set_class(self.level == name, f"-{name}")
        self.query_one("#footer-gauge", Static).update(self._gauge(reading))

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._redraw, init=False)

    def _redraw(self) -> None:
        self.watch_reading(self.reading)

    def _gauge(self, reading: Reading) -> Text:
        colours = self.app.theme_variables
        fill = colours.get(f"gauge-{self.level}", "green")
        empty = colours.get("gauge-empty", "grey30")
        scale = reading.usable
        fraction = min(1.0, reading.effective / scale) if scale else 1.0
        filled = round(fraction * BAR_WIDTH)
        mark = min(BAR_WIDTH - 1, int(reading.threshold / scale * BAR_WIDTH)) if scale else BAR_WIDTH
        bar = Text()
        for i in range(BAR_WIDTH):
            if i == mark and i >= filled:
                bar.append("┆", style=fill if self.level != "ok" else empty)
            else:
                bar.append("━", style=fill if i < filled else empty)
        bar.append("  ")
        short = self.has_class("-narrow")
        bar.append(gauge_label(reading, short=short), style=fill if self.level != "ok" else "")
        return bar
