"""The frame budget: how much of a fast stream one frame shows."""

from __future__ import annotations

import gc
import sys

import pytest

from tractui.ui.launch import (
    GC_MIDDLE,
    GC_OLD,
    GC_YOUNG,
    SWITCH_INTERVAL,
    collected_after_start_up,
    tune_gc,
    tune_threads,
)
from tractui.ui.streaming.pacing import FrameBudget, FrameBudgets


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


def test_each_kind_of_text_learns_its_own_budget():
    budgets = FrameBudgets()
    for _ in range(30):  # long, cheap thinking: its frames grow
        chars = budgets.of("thinking").chars
        budgets.frame_took({"thinking": chars}, 0.01 + 2e-6 * chars)
    assert budgets.of("thinking").chars > 20_000
    fresh = FrameBudget().chars
    assert budgets.of("text").chars == fresh  # the answer starts from the default, not from what thinking learnt
    assert not budgets.full({"text": fresh - 1}) and budgets.full({"text": fresh})


def test_a_share_of_a_frame_is_full_sooner():
    budgets = FrameBudgets()
    chars = budgets.of("text").chars
    assert budgets.full({"text": chars // 2}, share=0.5) and not budgets.full({"text": chars // 2})


def test_a_mixed_frame_is_full_by_shares_and_teaches_the_kind_that_filled_it():
    budgets = FrameBudgets()
    budgets.of("thinking").chars, budgets.of("text").chars = 10_000, 1000
    assert not budgets.full({"thinking": 4000, "text": 500})  # 0.4 + 0.5 of a frame
    assert budgets.full({"thinking": 6000, "text": 500})
    budgets.frame_took({"thinking": 1000, "text": 900}, 1.0)  # slow, and mostly the answer's doing
    assert budgets.of("text").chars < 1000 and budgets.of("thinking").chars == 10_000


def test_tune_gc_collects_less_often_in_shorter_pauses_and_freezes_what_start_up_loaded():
    threshold = gc.get_threshold()
    try:
        tune_gc()
        if sys.version_info < (3, 14):
            assert gc.get_threshold() == (GC_YOUNG, GC_MIDDLE, GC_OLD)
        assert gc.get_threshold()[0] == GC_YOUNG
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_start_up_runs_without_collections_then_the_collector_is_tuned_and_start_up_frozen():
    threshold = gc.get_threshold()
    try:
        with collected_after_start_up():
            assert not gc.isenabled()
            made_at_start_up = [object()]
        assert gc.isenabled() and gc.get_threshold()[0] == GC_YOUNG
        assert gc.get_freeze_count() > 0 and made_at_start_up
        gc.unfreeze()
        gc.disable()  # a caller's own choice stands: the collector stays off after start-up
        with pytest.raises(RuntimeError), collected_after_start_up():
            raise RuntimeError("a bad profile")
        assert not gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_tune_threads_hands_the_interpreter_to_a_waiting_thread_sooner():
    interval = sys.getswitchinterval()
    try:
        tune_threads()
        assert sys.getswitchinterval() == SWITCH_INTERVAL < interval  # the input and output threads wait less
    finally:
        sys.setswitchinterval(interval)
