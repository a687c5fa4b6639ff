"""The footer at any width: the gauge figure stays whole on screen, the other parts give way first,
in one order ("compacts at", the totals, provider · model, then the bar)."""

from __future__ import annotations

import pytest
from ui_support import build_app, screen_text, settle, type_line

from tractui.ui import format as fmt
from tractui.ui.widgets.footer import BAR_WIDTH, MIN_BAR, PADDING, Fit, GaugeFooter, fit


def footer_line(app) -> str:
    return screen_text(app).splitlines()[-1]


def bar_cells(line: str) -> int:
    return sum(line.count(mark) for mark in "━┆")


def figure(app) -> str:
    """The effective context against the usable window, as the footer's reading says it."""
    reading = app.query_one(GaugeFooter).reading
    assert reading is not None
    return f"{fmt.tokens(reading.effective)} / {fmt.tokens(reading.usable)}"


async def replied(pilot) -> None:
    """A reply came: the figure is measured and the session has totals to show."""
    await type_line(pilot, "some words to fill the context a little")
    await settle(pilot)


@pytest.mark.parametrize("width", [20, 24, 30, 40, 120])
async def test_the_gauge_figure_is_whole_on_screen_at_any_width(tmp_path, width):
    app = build_app(tmp_path)
    async with app.run_test(size=(width, 20)) as pilot:
        await settle(pilot)
        line = footer_line(app)  # before the first reply: an estimate, and said so
        assert figure(app) in line and line.rstrip().endswith("est."), line
        await replied(pilot)
        line = footer_line(app)
        assert figure(app) in line, line
        if width >= 120:  # room for everything
            reading = app.query_one(GaugeFooter).reading
            assert line.lstrip().startswith("demo") and bar_cells(line) == BAR_WIDTH
            assert f"{figure(app)} · compacts at {fmt.tokens(reading.threshold)}" in line
            assert "out " in line


async def test_a_long_provider_and_profile_give_way_to_the_figure(tmp_path):
    """The parts' own lengths decide, not fixed widths: a long profile name at 64 columns."""
    app = build_app(tmp_path, profile_name="a-profile-with-a-rather-long-name")
    async with app.run_test(size=(64, 20)) as pilot:
        await replied(pilot)
        line = footer_line(app)
        assert figure(app) in line and bar_cells(line) == BAR_WIDTH, line
        assert "a-profile" not in line and not app.query_one("#footer-where").display
    async with build_app(tmp_path, profile_name="a-profile-with-a-rather-long-name").run_test(size=(120, 20)) as pilot:
        await settle(pilot)
        assert "demo · a-profile-with-a-rather-long-name" in footer_line(pilot.app)
        assert figure(pilot.app) in footer_line(pilot.app)


async def test_a_narrow_footer_keeps_the_gauge_figure_and_drops_the_rest_in_order(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=(50, 20)) as pilot:
        await replied(pilot)
        footer = app.query_one(GaugeFooter)
        assert not footer.shown.compacts and not footer.shown.totals  # the point and the totals need room
        assert not app.query_one("#footer-totals").display
        shown = str(app.query_one("#footer-gauge").render())
        assert figure(app) in shown and "compacts" not in shown
        await pilot.resize_terminal(120, 20)
        await settle(pilot)
        assert footer.shown == Fit()
        assert app.query_one("#footer-where").display and app.query_one("#footer-totals").display
        assert "compacts at" in footer_line(app) and str(app.query_one("#footer-where").render()) == "demo"


def _cells(option: Fit, *, where: int, totals: int, figure: int, compacts: int, estimate: int) -> int:
    gauge = figure + (option.bar + 2 if option.bar else 0)
    gauge += (compacts if option.compacts else 0) + (estimate if option.estimate else 0)
    sides = (where if option.where else 0) + (totals if option.totals else 0)
    return sides + (4 if sides else 0) + gauge + 2 * option.padding


@pytest.mark.parametrize(
    "parts",
    [
        {"where": 10, "totals": 21, "figure": 12, "compacts": 19, "estimate": 5},
        {"where": 41, "totals": 0, "figure": 13, "compacts": 18, "estimate": 0},
        {"where": 10, "totals": 36, "figure": 9, "compacts": 17, "estimate": 5},
    ],
)
def test_parts_give_way_in_order_as_the_footer_narrows(parts):
    """From wide to narrow, each part goes for good once it went, in the documented order, and
    what is shown always fits while the figure does."""
    order = ["compacts", "totals", "where", "bar", "padding", "estimate"]
    gone: list[str] = []
    last_bar = BAR_WIDTH
    for width in range(160, parts["figure"] - 1, -1):
        option = fit(width, **parts)
        now = [
            name
            for name, went in (
                ("compacts", not option.compacts),
                ("totals", not option.totals),
                ("where", not option.where),
                ("bar", option.bar == 0),
                ("padding", option.padding < PADDING),
                ("estimate", parts["estimate"] and not option.estimate),
            )
            if went
        ]
        assert now == order[: len(now)], (width, now)  # in order
        assert now[: len(gone)] == gone, (width, now, gone)  # and nothing comes back as the width shrinks
        gone = now
        assert option.bar == 0 or MIN_BAR <= option.bar <= last_bar
        last_bar = option.bar or last_bar
        if width >= parts["figure"] + 2:
            assert _cells(option, **parts) <= width, (width, option)
    assert gone[-1] in ("padding", "estimate")  # at the figure's own width: the figure alone
