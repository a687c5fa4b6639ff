"""What a layout pays to ask an arrangement what is visible: Textual's grid against
``internals.PlacementList``, for columns of 10 to 10,000 children (a chat log with
that many messages drawn) and for one child 43,000 rows tall (the 5 MiB line).

Each figure is the median of several repetitions, in ms: building the map (once per
arrangement, so once per layout while a reply grows) and one query for a screenful.
Run: uv run python bench/placements.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from textual.geometry import Offset, Region, Spacing
from textual.layout import DockArrangeResult, WidgetPlacement
from textual.widget import Widget

from tractui.ui import internals

REPEATS = 15
WIDTH = 118  # a 120-column terminal's chat log, less its scrollbar


def stacked(heights: list[int]) -> list[WidgetPlacement]:
    """Children one below the other with a row of margin between them, as a column places them."""
    placements, y = [], 0
    for order, height in enumerate(heights):
        child: Widget = object()  # type: ignore[assignment]  # a placement's widget is only compared here
        placements.append(WidgetPlacement(Region(0, y + 1, WIDTH, height), Offset(), Spacing(1, 0, 0, 0), child, order))
        y += height + 1
    return placements


def median_ms(run: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(name: str, placements: list[WidgetPlacement]) -> None:
    bottom = max(placement.region.bottom for placement in placements)
    screen = Region(0, bottom // 2, WIDTH, 40)
    textuals = DockArrangeResult(placements, set(), Spacing())
    ours = internals.listed(DockArrangeResult(placements, set(), Spacing()))
    assert textuals.get_visible_placements(screen) == ours.get_visible_placements(screen)
    build_textual = median_ms(lambda: DockArrangeResult(placements, set(), Spacing()).spatial_map)
    build_ours = median_ms(lambda: internals.listed(DockArrangeResult(placements, set(), Spacing())))
    query_textual = median_ms(lambda: textuals.get_visible_placements(screen))
    query_ours = median_ms(lambda: ours.get_visible_placements(screen))
    print(
        f"  {name:<34} build {build_textual:8.3f} → {build_ours:7.3f} ms"
        f"   query {query_textual:6.3f} → {query_ours:6.3f} ms"
    )


def main() -> None:
    print(f"Textual's grid → PlacementList, median of {REPEATS}:")
    for count in (10, 100, 2_000, 10_000):
        measure(f"{count:,} children of 3–42 rows", stacked([3 + i % 40 for i in range(count)]))
    measure("1 child of 43,000 rows", stacked([43_000]))
    measure("a 43,000-row child among 200", stacked([*(3 + i % 40 for i in range(199)), 43_000]))


if __name__ == "__main__":
    main()
