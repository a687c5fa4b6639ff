"""The frame loop never loses what a frame took from the renderer."""

from __future__ import annotations

import asyncio

from textual.app import App

from tractui.ui.streaming.frames import FrameLoop


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
        loop.begin(renderer)  # type: ignore[arg-type]

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
