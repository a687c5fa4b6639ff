"""A loaded session is frozen out of the collector's full walks, and given back when it is replaced."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_support import build_app, settle

from tractui.core.content import Content, TextBlock
from tractui.ui.app import TractApp
from tractui.ui.heap import Heap
from tractui.ui.widgets.message import AssistantMessage

SIZE = (100, 30)


@pytest.fixture
def thawed() -> Iterator[None]:
    """What a test froze is given back to the collector after it: this process runs other tests."""
    yield
    gc.unfreeze()
    gc.collect()


def _walked(obj: object) -> bool:
    """Whether full collections walk ``obj`` (a frozen object is in no generation)."""
    return any(tracked is obj for tracked in gc.get_objects())


class _Node:
    me: _Node


def test_a_heap_that_is_off_freezes_nothing(thawed: None) -> None:
    before = gc.get_freeze_count()
    Heap(enabled=False).loaded(replaced=True)
    Heap(enabled=False).loaded(replaced=False)
    assert gc.get_freeze_count() == before


def test_what_is_alive_when_loaded_is_frozen_and_a_replacement_collects_what_was_dropped(thawed: None) -> None:
    kept, dropped = _Node(), _Node()
    dropped.me = dropped  # a reference cycle: only a collection frees it
    gone = weakref.ref(dropped)
    heap = Heap(enabled=True)
    heap.loaded(replaced=False)
    assert not _walked(kept)
    del dropped
    gc.collect()
    assert gone() is not None  # frozen: the price of leaving it out of the walks
    heap.loaded(replaced=True)
    assert gone() is None
    assert not _walked(kept)


def _session(app: TractApp, replies: int = 5) -> str:
    store = app.conversation.store
    sid = store.create_session("loaded")
    for i in range(replies):
        store.append(sid, "user", Content.human(f"question {i}"))
        store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=f"answer {i}")]))
    return sid


async def test_a_resumed_session_is_frozen_once_loaded(tmp_path: Path, thawed: None) -> None:
    app = build_app(tmp_path)
    app.chat.heap = Heap(enabled=True)
    app.conversation.open_session(_session(app))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        newest = app.conversation.history()[-1]
        assert newest.content.text == "answer 4"
        assert not _walked(newest)
        assert not _walked(app.query(AssistantMessage).last())


@pytest.mark.parametrize("command", ["/clear", "/new"])
async def test_a_view_replaced_gives_its_frozen_widgets_back_to_the_collector(
    tmp_path: Path, thawed: None, command: str
) -> None:
    app = build_app(tmp_path)
    app.chat.heap = Heap(enabled=True)
    app.conversation.open_session(_session(app))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = weakref.ref(app.query(AssistantMessage).last())
        assert not _walked(shown())
        await app.chat.run_command(command)
        await settle(pilot)
        assert not app.query(AssistantMessage)
        assert shown() is None
