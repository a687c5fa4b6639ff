"""The frame loop never loses what a frame took from the renderer."""

from __future__ import annotations

import asyncio
import time

from textual.app import App

from tractui.ui.streaming import frames
from tractui.ui.streaming.frames import FrameLoop
from tractui.ui.streaming.pacing import FrameBudgets


class _SlowRenderer:
    """A renderer whose flush takes a while, as mounting an answer's first segment can."""

    def __init__(self) -> None:
        self.pending = True
        self.flushing = asyncio.Event()
        self.flushed: list[str] = []
        self.message = None

    async def flush(self) -> None:
        self.pending = False
        self.flushing.set()
        await asyncio.sleep(0.2)
        self.flushed.append("frame")

    async def finish(self) -> None:
        self.flushed.append("finish")


async def test_a_frame_the_timer_began_is_drawn_whole_before_the_reply_finishes():
    """The stream ends while a timer frame is still drawing: stopping the timer cancelled that
    frame halfway, and the text it had taken from the renderer never reached the screen."""
    app: App[None] = App()
    async with app.run_test() as pilot:
        loop = FrameLoop(app.screen, drawn=lambda: None, gauge=lambda: None)
        renderer = _SlowRenderer()
        loop.begin(renderer, time.perf_counter())  # type: ignore[arg-type]

        async def stream():
            await renderer.flushing.wait()  # a timer frame is drawing now
            return
            yield  # an async generator with no events

        ended: list[bool] = []

        async def then() -> None:
            ended.append(True)

        await loop.run(stream, renderer, then)  # type: ignore[arg-type]
        await pilot.pause()
        assert renderer.flushed == ["frame", "finish"]
        assert ended == [True]


class _Counting:
    """A renderer that counts what each frame showed."""

    def __init__(self) -> None:
        self.backlog: dict[str, int] = {}
        self.frames: list[int] = []
        self.message = None

    @property
    def pending(self) -> bool:
        return bool(self.backlog)

    def feed(self, event: str) -> None:
        self.backlog["text"] = self.backlog.get("text", 0) + len(event)

    async def flush(self) -> None:
        self.frames.append(self.backlog.pop("text", 0))

    async def finish(self) -> None:
        await self.flush()


async def _first_frame(typing: bool, sent_by_a_key: bool = False, typed_since: bool = False) -> int:
    app: App[None] = App()
    async with app.run_test():
        loop = FrameLoop(app.screen, drawn=lambda: None, gauge=lambda: None)
        renderer = _Counting()
        if sent_by_a_key:
            loop.input_came()  # the Enter that sent the prompt
        asked_at = time.perf_counter()
        if typed_since:
            await asyncio.sleep(0.01)  # the reply's message mounting
            loop.input_came()  # a key typed meanwhile
        loop.begin(renderer, asked_at)  # type: ignore[arg-type]
        if typing:
            loop.input_came()

        async def stream():
            for _ in range(100):  # a flood: all there at once
                yield "x" * 100

        async def then() -> None:
            pass

        await loop.run(stream, renderer, then)  # type: ignore[arg-type]
        return renderer.frames[0]


async def test_while_the_user_types_a_flood_is_drawn_in_smaller_frames(monkeypatch):
    """Each frame ends with a layout that a key waits for; while keys come, frames take half
    their budget (and teach it nothing), so a key waits less for the frame being drawn."""
    monkeypatch.setattr(frames, "FRAME", 60.0)  # only the budget ends a frame, however slow the machine
    budget = FrameBudgets().of("text").chars
    assert await _first_frame(typing=False) == budget
    assert await _first_frame(typing=True) == budget // 2


async def test_the_key_that_sent_the_prompt_is_not_typing_during_the_reply(monkeypatch):
    """Enter came a moment before the reply began: counted as typing, a full-speed reply's
    first second was drawn in half frames that taught the budget nothing."""
    monkeypatch.setattr(frames, "FRAME", 60.0)
    budget = FrameBudgets().of("text").chars
    assert await _first_frame(typing=False, sent_by_a_key=True) == budget
    # a key typed after it, while the reply's message mounted, is typing
    assert await _first_frame(typing=False, sent_by_a_key=True, typed_since=True) == budget // 2
