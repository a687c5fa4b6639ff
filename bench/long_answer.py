"""Whether drawing keeps pace as one answer grows: a 50,000-token Markdown answer at full speed.

Runs the real app headless against the loopback server (Chat Completions),
streams one long answer of prose sections (paragraphs, a list, a code block)
as fast as the socket goes, and prints the tokens per second drawn over each
successive 10,000-token window, from the frame that drew the window's first
token to the one that drew its last. The rate should not fall as the answer
grows (goal: each window >= 5,000 tok/s, the last within 20% of the first).
Run: uv run python bench/long_answer.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from tractui.ui.launch import set_frame_rate, tune_gc  # noqa: E402

set_frame_rate()  # as `tractui` does, before Textual is imported

from loopback import LoopbackServer, sse  # noqa: E402
from ui_stream import PROSE, SIZE, token_pieces  # noqa: E402
from ui_support import build_app, chat_stream, loop_config, settle, type_line  # noqa: E402

from tractui.core.events import TextDelta  # noqa: E402
from tractui.ui.streaming.renderer import ReplyRenderer  # noqa: E402

TOKENS = 50_000
WINDOW = 10_000


async def run(tmp: Path) -> list[float]:
    body = chat_stream([], token_pieces(PROSE, TOKENS), usage=(100, TOKENS))
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=None, max_chunk=1 << 20))
    app = build_app(tmp, config=loop_config(server))
    fed = 0
    drawn: list[tuple[float, int]] = []  # (when a flush ended, tokens handed to the widgets by then)
    feed, flush = ReplyRenderer.feed, ReplyRenderer.flush

    def counted_feed(self: ReplyRenderer, event: object) -> None:
        nonlocal fed
        feed(self, event)  # type: ignore[arg-type]
        if isinstance(event, TextDelta):
            fed += 1

    async def timed_flush(self: ReplyRenderer) -> None:
        pending = fed
        await flush(self)
        drawn.append((time.perf_counter(), pending))

    ReplyRenderer.feed, ReplyRenderer.flush = counted_feed, timed_flush  # type: ignore[method-assign,assignment]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await type_line(pilot, "go", enter=False)
            start = time.perf_counter()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await settle(pilot)
    finally:
        ReplyRenderer.feed, ReplyRenderer.flush = feed, flush  # type: ignore[method-assign]
        await server.stop()
    rates = []
    begin = start
    for edge in range(WINDOW, TOKENS + 1, WINDOW):
        end = next(t for t, n in drawn if n >= edge)
        rates.append(WINDOW / (end - begin))
        begin = end
    return rates


def main() -> None:
    tune_gc()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACTUI_CONFIG_DIR"] = str(Path(tmp) / "config")
        os.environ["TRACTUI_DATA_DIR"] = str(Path(tmp) / "data")
        rates = asyncio.run(run(Path(tmp)))
    print(f"one {TOKENS:,}-token answer at full speed, tokens/s drawn per {WINDOW:,}-token window:")
    for i, rate in enumerate(rates):
        print(f"  tokens {i * WINDOW // 1000}k–{(i + 1) * WINDOW // 1000}k: {rate:,.0f} tok/s")
    print(f"last window / first: {rates[-1] / rates[0]:.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
