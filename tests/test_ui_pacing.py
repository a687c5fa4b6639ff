"""The frame budget: how much of a fast stream one frame shows."""

from __future__ import annotations

import gc

from tractui.ui.launch import GC_YOUNG, tune_gc
from tractui.ui.pacing import FrameBudget


def run_frames(budget: FrameBudget, overhead: float, per_char: float, frames: int = 60) -> float:
    """Frames of a display costing ``overhead + per_char * chars``, each as big as the budget allows."""
    took = 0.0
    for _ in range(frames):
        took = overhead + per_char * budget.chars
        budget.frame_took(budget.chars, took)
    return took


def test_the_budget_settles_where_a_frame_takes_the_target():
    budget = FrameBudget()
    took = run_frames(budget, overhead=0.03, per_char=50e-6)
    assert abs(took - budget.target) < 0.01
    assert abs(budget.chars - (budget.target - 0.03) / 50e-6) < 150


def test_a_fast_display_gets_bigger_frames_and_a_slow_one_the_floor():
    fast, slow = FrameBudget(), FrameBudget()
    run_frames(fast, overhead=0.01, per_char=2e-6)
    run_frames(slow, overhead=0.2, per_char=100e-6)
    assert fast.chars > 20_000
    assert slow.chars == slow.floor  # the fixed part alone is over the target: smaller frames would not help


def test_frames_the_budget_did_not_limit_teach_nothing():
    budget = FrameBudget()
    before = budget.chars
    budget.frame_took(10, 5.0)  # a trickle that happened to meet a slow frame
    budget.frame_took(before, 0.0)
    assert budget.chars == before


def test_tune_gc_collects_young_objects_less_often_and_freezes_what_start_up_loaded():
    threshold = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold()[0] == GC_YOUNG
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
