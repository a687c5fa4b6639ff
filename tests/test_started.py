"""``Started``: a reply's stream under way before anyone iterates it, and otherwise the stream itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from loopback import LoopbackServer, sse
from ui_support import build_app, chat_stream, loop_config, settle, type_line

from tractui.ui.screens import chat as chat_screen
from tractui.ui.streaming.started import Started
from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.message import UserMessage


class Boom(Exception):
    pass


async def _items(items: list[int], fail_at: int | None, log: list[str]) -> AsyncGenerator[int, None]:
    log.append("began")
    try:
        for i, item in enumerate(items):
            if i == fail_at:
                raise Boom(f"at {i}")
            yield item
        if fail_at == len(items):
            raise Boom("at the end")
    except BaseException as exc:
        log.append(type(exc).__name__)
        raise
    finally:
        log.append("closed")


async def _drain(events: object) -> tuple[list[int], str | None]:
    got: list[int] = []
    try:
        async for item in events:  # type: ignore[attr-defined]
            got.append(item)
    except Boom as exc:
        return got, str(exc)
    return got, None


@given(st.lists(st.integers(), max_size=6), st.data())
def test_iterating_gives_exactly_what_the_stream_gives(items: list[int], data: st.DataObject) -> None:
    fail_at = data.draw(st.none() | st.integers(0, len(items)))

    async def both() -> None:
        plain_log: list[str] = []
        started_log: list[str] = []
        plain = await _drain(_items(items, fail_at, plain_log))
        started = Started(_items(items, fail_at, started_log))
        assert await _drain(started) == plain
        await started.aclose()
        assert started_log == plain_log

    asyncio.run(both())


async def test_the_first_item_is_fetched_before_anyone_asks() -> None:
    log: list[str] = []
    started = Started(_items([1, 2], None, log))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert log == ["began"]
    assert await anext(started) == 1
    await started.aclose()
    assert log == ["began", "GeneratorExit", "closed"]


async def test_closed_while_the_first_fetch_waits_the_stream_is_cancelled_and_closed() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def waits() -> AsyncGenerator[int, None]:
        log.append("began")
        try:
            await gate.wait()  # the request on its way, no event yet
            yield 1
        except BaseException as exc:
            log.append(type(exc).__name__)
            raise

    started = Started(waits())
    await asyncio.sleep(0)
    await started.aclose()
    assert log == ["began", "CancelledError"]


async def test_closed_before_iterating_an_unread_first_item_closes_the_stream() -> None:
    log: list[str] = []
    started = Started(_items([1], None, log))
    await asyncio.sleep(0.01)  # the first item fetched and waiting
    await started.aclose()
    assert log == ["began", "GeneratorExit", "closed"]


async def test_a_cancelled_wait_for_the_first_item_cancels_the_stream() -> None:
    log: list[str] = []

    async def waits() -> AsyncGenerator[int, None]:
        try:
            await asyncio.Event().wait()
            yield 1
        except BaseException as exc:
            log.append(type(exc).__name__)
            raise

    started = Started(waits())
    reader = asyncio.ensure_future(anext(started))
    await asyncio.sleep(0.01)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert log == ["CancelledError"]
    await started.aclose()


async def _until(predicate: Callable[[], bool]) -> None:
    while not predicate():
        await asyncio.sleep(0.01)


class _HeldUserMessage(UserMessage):
    """The user's message, whose mount waits until the test lets it finish."""

    release = asyncio.Event()

    async def on_mount(self) -> None:
        await self.release.wait()


async def test_the_request_leaves_while_the_users_message_is_still_being_mounted(
    tmp_path: Path, loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mounting the user's message and the reply lets the screen lay out and paint first; the
    request does not wait for that: it reaches the server while the mount is held."""
    loopback.add(sse(chat_stream([], ["the answer"])))
    held = type("Held", (_HeldUserMessage,), {"release": asyncio.Event()})
    monkeypatch.setattr(chat_screen, "UserMessage", held)
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_line(pilot, "question", enter=False)
        enter = asyncio.ensure_future(pilot.press("enter"))  # the press ends once the screen is idle again
        await asyncio.wait_for(_until(lambda: len(loopback.requests) == 1), timeout=30)
        assert not any(a.text for a in app.query(AnswerView))  # nothing drawn into an unmounted reply
        held.release.set()
        await enter
        await settle(pilot)
        assert [a.text for a in app.query(AnswerView)] == ["the answer"]
        assert app.conversation.history()[-1].content.text == "the answer"
