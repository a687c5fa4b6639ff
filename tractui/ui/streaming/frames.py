"""The frame loop: a reply's events go to its renderer, and what they queued is drawn
at most once a frame, paced by what the screen has painted.

The loop belongs to the screen that shows the reply; it knows that screen only
as a Textual node and two callbacks. Its timer and its refresh callbacks run
on the app's message queue, never the screen's: a frame waits until the screen
has painted, which the screen's own queue does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from tractui.ui.streaming.pacing import FrameBudgets
from tractui.ui.streaming.settle import settle
from tractui.ui.widgets.tool_call import ToolCallView

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from tractui.core.events import TurnEvent
    from tractui.ui.streaming.renderer import ReplyRenderer

FRAME = 1 / 30  # streaming updates are batched to this rate
GAUGE_EVERY = 0.25  # seconds between gauge readings while streaming
PAINT_WAIT = 1.0  # longest wait for a frame to be painted before taking more of the stream
TYPING = 1.0  # seconds after the user's last key, click or scroll during which frames are smaller
TYPING_SHARE = 0.5  # of a frame's budget, meanwhile


class FrameLoop:
    """Draws the streaming reply, if any: from the stream as it comes, and on a timer for a stream that pauses."""

    def __init__(self, node: DOMNode, *, drawn: Callable[[], None], gauge: Callable[[], None]) -> None:
        self._node = node
        self._drawn = drawn  # after each frame that showed something
        self._gauge = gauge  # a fresh gauge reading, at most every GAUGE_EVERY
        self.renderer: ReplyRenderer | None = None
        self._lock = asyncio.Lock()
        self._last_gauge = 0.0
        self._input_unshown = False  # a key, paste, click or scroll came since the last frame
        self._input_at = -TYPING  # when the last one came

    def begin(self, renderer: ReplyRenderer, asked_at: float) -> None:
        """``renderer`` is now the one drawn; the key that sent it is painted with its first frame.
        Input until ``asked_at`` (``time.perf_counter()`` when the reply was asked for: the key
        that asked) is not typing during the reply, whose frames it would cut short for nothing."""
        self.renderer = renderer
        self._input_unshown = False
        if self._input_at <= asked_at:
            self._input_at = -TYPING

    def input_came(self) -> None:
        self._input_unshown = True
        self._input_at = time.perf_counter()

    async def run(
        self,
        stream: Callable[[], AsyncIterator[TurnEvent]],
        renderer: ReplyRenderer,
        then: Callable[[], Awaitable[None]],
    ) -> None:
        """Stream into ``renderer`` until the reply ends or is cancelled; then finish it and
        call ``then``, unless a newer reply took over meanwhile."""
        timer = self._node.app.set_interval(FRAME, self.frame)
        clock = time.perf_counter
        next_frame = clock() + FRAME
        budgets = FrameBudgets()
        try:
            async for event in stream():
                renderer.feed(event)
                now = clock()
                typing = now - self._input_at < TYPING  # smaller frames: a key waits less for the one drawn
                if now >= next_frame or budgets.full(renderer.backlog, TYPING_SHARE if typing else 1.0):
                    # a burst of queued events: draw them (keys get in meanwhile), a frame's worth at a time
                    await self._show_input()  # not part of the frame the budget learns from
                    started, shown = clock(), renderer.backlog
                    await self.frame()
                    if not typing:  # a frame cut short for the user says little about the display
                        budgets.frame_took(shown, clock() - started)
                    next_frame = clock() + FRAME
        finally:
            async with self._lock:
                # a frame the timer began ends first: stopping a timer cancels its task, and a
                # frame cancelled halfway through drawing loses what it took from the renderer
                timer.stop()
                if self.renderer is renderer:
                    with self._node.app.batch_update():
                        await renderer.finish()
            if self.renderer is renderer:
                self.renderer = None
                await then()

    async def frame(self) -> None:
        """Show what the stream queued since the last frame. Called by the stream loop
        and by the timer; one waits for the other's frame."""
        async with self._lock:
            renderer = self.renderer
            if renderer is None:
                return
            if renderer.pending:
                await self._show_input()
                with self._node.app.batch_update():
                    await renderer.flush()
                await self.painted()
                self._drawn()
        now = time.perf_counter()  # real time: throttling only, never displayed
        if now - self._last_gauge >= GAUGE_EVERY:
            self._last_gauge = now
            self._gauge()

    async def _show_input(self) -> None:
        """Paint what the user did since the last frame (a key, a click, a paste) before
        the reply's next frame, instead of after that frame's layout."""
        if self._input_unshown:
            self._input_unshown = False
            await self.painted()

    async def painted(self) -> None:
        """Wait until what was just flushed is laid out and on screen.

        The display sets the pace: a stream faster than the screen waits in
        the socket, instead of piling up work that would be drawn long after
        the last token. Keys are handled while waiting.
        """
        painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._node.app.call_after_refresh(settle, painted)
        await asyncio.wait([painted], timeout=PAINT_WAIT)

    async def tick(self) -> None:
        """Once a second: thinking timers, tool-call timers and the retry countdown."""
        renderer = self.renderer
        if renderer is None:
            return
        thinking = renderer.message.current_thinking()
        if thinking is not None:
            thinking.refresh_header()
        for call in renderer.message.query(ToolCallView):
            call.tick()
        await renderer.tick()
