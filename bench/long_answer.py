"""Whether drawing keeps pace as one answer grows: a 50,000-token Markdown answer at full speed.

Runs the real app headless against the loopback server (Chat Completions),
streams one long answer of prose sections (paragraphs, a list, a code block)
as fast as the socket goes, and prints the tokens per second drawn over each
successive 10,000-token window, from the frame that drew the window's first
token to the one that drew its last. The rate should not fall as the answer
grows (goal: each window >= 5,000 tok/s, the last within 20% of the first).
``--list``: the answer is one long bullet list instead (items of a sentence or
two, some with sub-items), 20,000 tokens in 4,000-token windows.
Run: uv run python bench/long_answer.py [--list]
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
LIST_TOKENS = 20_000
LIST_WINDOW = 4_000


def one_list(items: int) -> str:
    """A bullet list of ``items`` items, as a model writes a long one: a bold name, a sentence
    or two, and now and then sub-items."""
    lines = []
    for n in range(1, items + 1):
        lines.append(f"- **Step {n}**: reverse the slice in place, then check that `items[{n}]` still holds.")
        if n % 7 == 0:
            lines += ["  - a copy costs O(n) memory", "  - `reversed()` walks it once, lazily"]
    return "\n".join(lines) + "\n"


async def run(tmp: Path, text: str, tokens: int, window: int) -> list[float]:
    """The rate of each window, printed as soon as it is drawn (a slow run shows where it is)."""
    body = chat_stream([], token_pieces(text, tokens), usage=(100, tokens))
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=None, max_chunk=1 << 20))
    app = build_app(tmp, config=loop_config(server))
    fed = 0
    rates: list[float] = []
    begin = 0.0  # when the window being drawn began: Enter, then the frame that ended the one before
    feed, flush = ReplyRenderer.feed, ReplyRenderer.flush

    def counted_feed(self: ReplyRenderer, event: object) -> None:
        nonlocal fed
        feed(self, event)  # type: ignore[arg-type]
        if isinstance(event, TextDelta):
            fed += 1

    async def timed_flush(self: ReplyRenderer) -> None:
        nonlocal begin
        pending = fed  # tokens handed to the widgets by the end of this flush
        await flush(self)
        while pending >= window * (len(rates) + 1):
            now = time.perf_counter()
            rates.append(window / (now - begin))
            low = len(rates) - 1
            print(f"  tokens {low * window // 1000}k–{(low + 1) * window // 1000}k: {rates[-1]:,.0f} tok/s", flush=True)
            begin = now

    ReplyRenderer.feed, ReplyRenderer.flush = counted_feed, timed_flush  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await type_line(pilot, "go", enter=False)
            begin = time.perf_counter()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await settle(pilot)
    finally:
        ReplyRenderer.feed, ReplyRenderer.flush = feed, flush  # type: ignore[method-assign]
        await server.stop()
    return rates


def main() -> None:
    tune_gc()
    listed = "--list" in sys.argv[1:]
    text, tokens, window = (one_list(2_000), LIST_TOKENS, LIST_WINDOW) if listed else (PROSE, TOKENS, WINDOW)
    what = "one long list" if listed else "an answer"
    print(f"{what} of {tokens:,} tokens at full speed, tokens/s drawn per {window:,}-token window:", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACTUI_CONFIG_DIR"] = str(Path(tmp) / "config")
        os.environ["TRACTUI_DATA_DIR"] = str(Path(tmp) / "data")
        rates = asyncio.run(run(Path(tmp), text, tokens, window))
    print(f"last window / first: {rates[-1] / rates[0]:.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
