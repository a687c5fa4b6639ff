"""A loaded session is frozen out of the collector's full walks, and given back when it is replaced."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import LoopbackServer, sse
from ui_support import build_app, chat_stream, loop_config, settle, stalled, type_line, wait_for

from tractui.core.content import Content, TextBlock
from tractui.ui.app import TractApp
from tractui.ui.heap import Heap
from tractui.ui.widgets.answer import AnswerView
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
    heap = Heap(enabled=False)
    heap.replaced()
    heap.settle()
    assert gc.get_freeze_count() == before


def test_settling_freezes_what_is_alive_and_after_a_replacement_collects_what_was_dropped(thawed: None) -> None:
    kept, dropped = _Node(), _Node()
    dropped.me = dropped  # a reference cycle: only a collection frees it
    gone = weakref.ref(dropped)
    heap = Heap(enabled=True)
    heap.settle()
    assert not _walked(kept)
    del dropped
    gc.collect()
    assert gone() is not None  # frozen: the price of leaving it out of the walks
    heap.settle()
    assert gone() is not None  # nothing was replaced: settling again only freezes
    heap.replaced()
    heap.settle()
    assert gone() is None
    assert not _walked(kept)
    assert not heap.stale


class Watched(Heap):
    """A heap that notes whether a reply streamed at each settle, and when one collected."""

    def __init__(self, app: TractApp) -> None:
        super().__init__(enabled=True)
        self.app = app
        self.streaming: list[bool] = []
        self.collected = asyncio.Event()

    def settle(self) -> None:
        stale = self.stale
        self.streaming.append(self.app.chat.streaming)
        super().settle()
        if stale:
            self.collected.set()


def _watched(app: TractApp) -> Watched:
    heap = app.chat.heap = Watched(app)
    return heap


def _session(app: TractApp, replies: int = 5, name: str = "loaded") -> str:
    store = app.conversation.store
    sid = store.create_session(name)
    for i in range(replies):
        store.append(sid, "user", Content.human(f"question {i}"))
        store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=f"{name} answer {i}")]))
    return sid


async def _replaced_frees(pilot, heap: Watched, replace) -> None:  # type: ignore[no-untyped-def]
    """``replace`` the view: the widget shown before is freed by the settle that follows."""
    app = pilot.app
    shown = weakref.ref(app.query(AssistantMessage).last())
    assert not _walked(shown())
    heap.collected.clear()
    await replace()
    await asyncio.wait_for(heap.collected.wait(), timeout=30)
    assert shown() is None
    assert not any(heap.streaming)


async def test_a_resumed_session_is_frozen_once_loaded(tmp_path: Path, thawed: None) -> None:
    app = build_app(tmp_path)
    heap = _watched(app)
    app.conversation.open_session(_session(app))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(heap.streaming) >= 2)  # loaded, then its next request readied
        await settle(pilot)
        newest = app.conversation.history()[-1]
        assert newest.content.text == "loaded answer 4"
        assert not _walked(newest)
        assert not _walked(app.query(AssistantMessage).last())


@pytest.mark.parametrize("command", ["/clear", "/new", "/sessions"])
async def test_a_view_replaced_gives_its_frozen_widgets_back_to_the_collector(
    tmp_path: Path, thawed: None, command: str
) -> None:
    app = build_app(tmp_path)
    heap = _watched(app)
    other = _session(app, name="other")
    app.conversation.open_session(_session(app))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(heap.streaming) >= 2)
        await settle(pilot)

        async def replace() -> None:
            if command == "/sessions":  # what picking a session in its dialog does
                await app.chat.host._open_session(other)
            else:
                await app.chat.run_command(command)

        await _replaced_frees(pilot, heap, replace)


async def test_a_profile_switch_right_after_a_replacement_still_frees_what_was_replaced(
    tmp_path: Path, thawed: None
) -> None:
    """The switch readies the next request again, which cancels the readying the replacement
    started: the heap is settled all the same."""
    app = build_app(tmp_path)
    heap = _watched(app)
    app.conversation.open_session(_session(app))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(heap.streaming) >= 2)
        await settle(pilot)

        async def replace() -> None:
            app.conversation.new_session()
            await app.chat.show_history()
            app.chat.profile_switched()

        await _replaced_frees(pilot, heap, replace)


async def test_the_heap_is_not_settled_while_a_reply_streams(
    tmp_path: Path, thawed: None, loopback: LoopbackServer
) -> None:
    """A settle asked for while a reply streams (a line typed while a resumed session loaded
    is sent before its settle comes) waits for the reply's end: the reply's live widgets
    are not frozen, nor its stream held by a collection."""
    loopback.add(sse(chat_stream([], ["first answer"])))
    loopback.add(stalled(chat_stream([], ["Half"], usage=None, finish=False)))
    app = build_app(tmp_path, config=loop_config(loopback))
    heap = _watched(app)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "question")
        await settle(pilot)
        heap.streaming.clear()
        await type_line(pilot, "again")
        await wait_for(pilot, lambda: any(a.text == "Half" for a in app.query(AnswerView)))
        heap.replaced()
        app.chat._settle_heap()
        await asyncio.sleep(2.5)  # two tries to settle come and go while it streams
        assert heap.streaming == []
        await pilot.press("escape")
        await asyncio.wait_for(heap.collected.wait(), timeout=30)
        assert heap.streaming == [False]
