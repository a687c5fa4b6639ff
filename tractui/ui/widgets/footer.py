"""The footer: provider · model · profile, the live context gauge, session totals.

The gauge shows exactly the reading compaction decides on, against what can
be sent (the window less the output reserve and margin): a bar with ``┆`` where
compaction fires and ``52.1k / 180k · compacts at 153k``, "est." while
estimated, warning-coloured near the compaction point and error-coloured past it.

On a narrow terminal the parts give way in one order (``fit``): "compacts at",
the session totals, provider · model, then the bar narrows and goes; the
figure (``52.1k / 180k``) stays whole down to about 20 columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from tractui.ui import format as fmt

BAR_WIDTH = 16
MIN_BAR = 6  # a narrower bar says nothing the figure does not: it goes instead
BAR_GAP = 2  # between the bar and the figure
GAP = 2  # blank cells at least between the gauge and a part beside it
PADDING = 2  # the footer's own, each side; 1 when the figure alone needs the room
WHERE_MIN = 10  # provider · model's narrowest (its ``min-width``)
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


def gauge_label(reading: Reading, *, short: bool = False, estimate: bool = True) -> str:
    """``effective / usable · compacts at threshold est.``; ``short`` leaves out where it
    compacts, ``estimate=False`` the "est." (only when even the figure has no room for it)."""
    est = " est." if reading.estimated and estimate else ""
    where = "" if short else f" · compacts at {fmt.tokens(reading.threshold)}"
    return f"{fmt.tokens(reading.effective)} / {fmt.tokens(reading.usable)}{where}{est}"


@dataclass(frozen=True, slots=True)
class Fit:
    """What the footer shows at its width: the gauge figure always, the rest as room allows."""

    where: bool = True  # provider · model · profile
    totals: bool = True
    bar: int = BAR_WIDTH  # cells of the bar; 0: no bar
    compacts: bool = True  # "· compacts at …"
    estimate: bool = True  # "est." after the figure, when it is an estimate
    padding: int = PADDING


def fit(width: int, *, where: int, totals: int, figure: int, compacts: int, estimate: int) -> Fit:
    """The fullest footer that fits ``width`` columns, given each part's width in cells (the
    figure ``52.1k / 180k``, the " · compacts at …" and " est." after it): "compacts at" goes
    first, then the totals, then provider · model, then the bar narrows and goes, then the
    footer's padding and the "est."; the figure is never given up (cut only below its own width)."""

    def fits(option: Fit) -> bool:
        gauge = figure + (option.bar + BAR_GAP if option.bar else 0)
        gauge += (compacts if option.compacts else 0) + (estimate if option.estimate else 0)
        sides = (where if option.where else 0) + (totals if option.totals else 0)
        return sides + (2 * GAP if sides else 0) + gauge <= width - 2 * option.padding

    alone = Fit(where=False, totals=False, compacts=False)
    options = [
        Fit(),
        Fit(compacts=False),
        Fit(totals=False, compacts=False),
        alone,
        *(Fit(where=False, totals=False, compacts=False, bar=bar) for bar in range(BAR_WIDTH - 1, MIN_BAR - 1, -1)),
        Fit(where=False, totals=False, compacts=False, bar=0),
        Fit(where=False, totals=False, compacts=False, bar=0, padding=1),
    ]
    return next((option for option in options if fits(option)), Fit(False, False, 0, False, False, 1))


class GaugeFooter(Horizontal):
    """Shows what the screen sets: ``where``, ``reading`` and ``totals``, as many of
    them as its width allows (``fit``)."""

    where: reactive[Where] = reactive(Where, init=False)
    reading: reactive[Reading | None] = reactive(None, init=False)
    totals: reactive[Totals] = reactive(Totals, init=False)

    def __init__(self) -> None:
        super().__init__(id="footer")
        self.level: Level = "ok"
        self.shown = Fit()  # what the last fit chose
        self._where_text = ""
        self._totals_text = ""

    def compose(self) -> ComposeResult:
        yield Static(id="footer-where", markup=False)
        yield Static(id="footer-gauge")
        yield Static(id="footer-totals", markup=False)

    def watch_where(self, where: Where) -> None:
        parts: list[str] = []
        for part in (where.provider, where.model, where.profile):
            if part and part not in parts:  # "demo · demo · demo" says it once
                parts.append(part)
        self._where_text = " · ".join(parts)
        self.query_one("#footer-where", Static).update(self._where_text)
        self._refit()

    def on_resize(self) -> None:
        self._refit()

    def watch_totals(self, totals: Totals) -> None:
        parts = []
        if totals.reasoning:
            parts.append(f"thinking {fmt.tokens(totals.reasoning)}")
        if totals.output:
            parts.append(f"out {fmt.tokens(totals.output)}")
        if totals.compactions:
            parts.append(f"compacted {totals.compactions}×")
        self._totals_text = " · ".join(parts)
        self.query_one("#footer-totals", Static).update(self._totals_text)
        self._refit()

    def watch_reading(self, reading: Reading | None) -> None:
        if reading is None:
            return
        self.level = level(reading)
        for name in ("ok", "warning", "error"):
            self.set_class(self.level == name, f"-{name}")
        self._refit()

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._redraw, init=False)

    def _refit(self) -> None:
        """Choose what shows at the footer's width (once it has one), then draw the gauge."""
        width = self.outer_size.width  # with the padding: the fit chooses that too
        if width:
            reading = self.reading
            figure = full = estimated = 0
            if reading is not None:
                figure = cell_len(gauge_label(reading, short=True, estimate=False))
                full = cell_len(gauge_label(reading))
                estimated = cell_len(gauge_label(reading, short=True)) - figure
            shown = self.shown = fit(
                width,
                where=max(WHERE_MIN, cell_len(self._where_text)),
                totals=cell_len(self._totals_text),
                figure=figure,
                compacts=full - figure - estimated,
                estimate=estimated,
            )
            for part, wanted in (("#footer-where", shown.where), ("#footer-totals", shown.totals)):
                widget = self.query_one(part)
                if widget.display != wanted:
                    widget.display = wanted
            self.set_class(shown.padding < PADDING, "-cramped")
        self._redraw()

    def _redraw(self) -> None:
        if self.reading is not None:
            self.query_one("#footer-gauge", Static).update(self._gauge(self.reading))

    def _gauge(self, reading: Reading) -> Text:
        colours = self.app.theme_variables
        fill = colours.get(f"gauge-{self.level}", "green")
        empty = colours.get("gauge-empty", "grey30")
        shown = self.shown
        bar = Text()
        if shown.bar:
            width, scale = shown.bar, reading.usable
            fraction = min(1.0, reading.effective / scale) if scale else 1.0
            filled = round(fraction * width)
            mark = min(width - 1, int(reading.threshold / scale * width)) if scale else width
            for i in range(width):
                if i == mark and i >= filled:
                    bar.append("┆", style=fill if self.level != "ok" else empty)
                else:
                    bar.append("━", style=fill if i < filled else empty)
            bar.append(" " * BAR_GAP)
        label = gauge_label(reading, short=not shown.compacts, estimate=shown.estimate)
        bar.append(label, style=fill if self.level != "ok" else "")
        return bar
