"""What the benchmarks watch: the frames the app paints (headless: produced, not written)."""

from __future__ import annotations

import asyncio
import time

from tractui.ui.internals import painted_rows, send_key, watch_painted


def watch_frames(app) -> list[float]:
    """The time of every frame the compositor paints (headless: produced, not written)."""
    frames: list[float] = []

    def painted(screen, renderable):
        if renderable is not None:
            frames.append(time.perf_counter())

    watch_painted(app, painted)
    return frames


def watch_prompt(app, box, char: str) -> list[tuple[float, int]]:
    """The time of every frame that redraws the prompt, with how many ``char`` it shows there.

    A key is on screen with the first frame that shows it. Watching from the
    benchmark's own task instead (poll the text, then wait for a frame) missed
    that frame whenever the task woke after it, and counted the next one.
    """
    frames: list[tuple[float, int]] = []

    def painted(screen, renderable):
        if renderable is None:
            return
        lines = painted_rows(renderable, box.region.y, box.region.bottom)
        if lines:
            frames.append((time.perf_counter(), sum(strip.text.count(char) for line in lines for strip in line)))

    watch_painted(app, painted)
    return frames


async def key_to_screen(app, box, shown: list[tuple[float, int]], char: str = "z") -> float:
    """Type ``char`` and wait for the first frame that draws one more of it in the prompt
    (``shown``: from ``watch_prompt`` for ``char``); the milliseconds from the key
    entering the app's input queue to that frame."""
    before, seen = box.text.count(char), len(shown)
    t0 = time.perf_counter()
    send_key(app, char)
    while not any(count > before for _, count in shown[seen:]):
        if time.perf_counter() - t0 > 5:
            raise RuntimeError("a key typed 5 s ago is still not drawn in the prompt")
        await asyncio.sleep(0.001)
    return (next(at for at, count in shown[seen:] if count > before) - t0) * 1000
