"""How fast the app displays a stream, and how it answers keys while streaming.

Runs the real app headless against the loopback server (tests/loopback.py)
speaking Chat Completions:

1. 20,000 tokens (thinking, then a markdown answer with code) as fast as the
   socket goes, five times: tokens per second displayed, last token to final
   frame (median and worst).
2. A 2,000 tokens/s stream while keys are typed through both its thinking
   and its answer: keystroke-to-screen latency, overall and per part.

Goals: >= 5,000 tok/s, < 100 ms last token to frame, keystroke p95 < 50 ms.
Run: uv run python bench/ui_stream.py
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from tractui.ui.launch import set_frame_rate, tune_gc  # noqa: E402

set_frame_rate()  # as `tractui` does, before Textual is imported

from frames import key_to_screen, watch_frames, watch_prompt  # noqa: E402
from loopback import LoopbackServer, sse  # noqa: E402
from ui_support import build_app, chat_stream, loop_config, settle, type_line, wait_for  # noqa: E402

from tractui.core.events import TextDelta, ThinkingDelta  # noqa: E402
from tractui.core.tokens import get_encoding  # noqa: E402
from tractui.ui.streaming.renderer import ReplyRenderer  # noqa: E402
from tractui.ui.widgets.message import AssistantMessage  # noqa: E402

TOKENS = 20_000
RUNS = 5  # full-speed runs per answer: the tail is one frame, and one frame is a noisy sample
SIZE = (120, 40)


def token_pieces(text: str, count: int) -> list[str]:
    """``count`` one-token deltas cut from ``text`` repeated, as a model would send them."""
    enc = get_encoding("o200k_base")
    ids = enc.encode(text)
    ids = (ids * (count // len(ids) + 1))[:count]
    return [enc.decode([i]) for i in ids]


THINKING = "Let me reason about the request step by step, weighing each option before I answer.\n\n"
# Dense: a heading, two paragraphs and a code block every ~50 tokens (a worst case for layout).
ANSWER = (
    "## Reversing\n\nUse slicing when you need a copy:\n\n```python\ndef rev(items: list[int]) -> list[int]:\n"
    "    return items[::-1]\n```\n\nOr `items.reverse()` in place. **Both** are O(n).\n\n"
)
# Prose: what a long answer usually looks like, ~600 tokens a section: paragraphs, a list, one code block.
_PARAGRAPH = (
    "Reversing a sequence is cheap, but which way you do it decides whether you get a copy or change the "
    "original, and that matters once other parts of the program hold a reference to the same list. Slicing "
    "with a negative step builds a new list and leaves the old one alone, `list.reverse()` works in place and "
    "returns `None`, and `reversed()` gives a lazy iterator that is ideal when you only walk the items once. "
)
PROSE = (
    "## Choosing a way to reverse\n\n" + _PARAGRAPH * 2 + "\n\n" + _PARAGRAPH + "\n\n"
    "- slicing: a copy, O(n) memory\n- `reverse()`: in place, no copy\n- `reversed()`: lazy, one pass\n"
    "- `deque.rotate`: for rings, not reversal\n\n"
    "```python\nfrom collections import deque\n\n\ndef newest_first(events: list[str]) -> list[str]:\n"
    "    recent = deque(events, maxlen=100)\n    return list(reversed(recent))\n\n\n"
    'print(newest_first(["a", "b", "c"]))\n```\n\n' + _PARAGRAPH * 2 + "\n\n"
)


async def full_speed(tmp: Path, answer: str) -> tuple[float, float]:
    """Tokens per second up to the frame that shows the last token, and how long after
    the last token reached the app (its last event fed to the renderer) that frame came."""
    half = TOKENS // 2
    body = chat_stream(token_pieces(THINKING, half), token_pieces(answer, TOKENS - half), usage=(100, TOKENS))
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=None, max_chunk=1 << 20))
    app = build_app(tmp, config=loop_config(server))
    fed: list[float] = []
    finished: list[float] = []
    feed, finish = ReplyRenderer.feed, ReplyRenderer.finish

    def timed_feed(self, event):
        feed(self, event)
        fed.append(time.perf_counter())

    async def timed_finish(self):  # every text handed to its widget: the next frame shows it all
        await finish(self)
        finished.append(time.perf_counter())

    ReplyRenderer.feed, ReplyRenderer.finish = timed_feed, timed_finish  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            frames = watch_frames(app)
            await settle(pilot)  # tokenizer loaded, history shown
            await type_line(pilot, "go", enter=False)
            start = time.perf_counter()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: bool(frames) and frames[-1] > finished[-1])
            final = next(t for t in frames if t > finished[-1])
            assert len(app.query(AssistantMessage)[-1].answer_text) > 1000
    finally:
        ReplyRenderer.feed, ReplyRenderer.finish = feed, finish  # type: ignore[method-assign]
        await server.stop()
    return TOKENS / (final - start), (final - fed[-1]) * 1000


async def keystrokes(tmp: Path, answer: str, keys: int = 100) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """Type keys while a paced stream runs, spread over its thinking and its answer;
    each latency (with the part of the reply then streaming) runs from the key entering
    the app's input queue to the first frame painted after the character is in the prompt.
    Also the rate at which each part reached the app, in tokens per second."""
    rate, per_write = 2000, 20
    pieces = token_pieces(THINKING, 8000) + token_pieces(answer, 12_000)
    body = chat_stream(pieces[:8000], pieces[8000:], usage=(100, 20_000))
    server = LoopbackServer()
    await server.start()
    event_bytes = len(body) // len(pieces)
    # random write sizes averaging per_write events, sent on the clock whatever the app does:
    # an app that falls behind finds the stream waiting in its socket, as with a real provider
    server.add(sse(body, seed=1, max_chunk=2 * event_bytes * per_write, rate=len(body) * rate / len(pieces)))
    app = build_app(tmp, config=loop_config(server))
    latencies: list[tuple[str, float]] = []
    arrived: dict[str, list[float]] = {"thinking": [], "answer": []}
    feed = ReplyRenderer.feed

    def timed_feed(self, event):
        feed(self, event)
        if isinstance(event, (ThinkingDelta, TextDelta)):
            arrived["thinking" if isinstance(event, ThinkingDelta) else "answer"].append(time.perf_counter())

    ReplyRenderer.feed = timed_feed  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await type_line(pilot, "go")
            await wait_for(
                pilot,
                lambda: bool(app.query(AssistantMessage)) and bool(app.query(AssistantMessage)[-1].parts),
                timeout=30,
            )
            box = app.query_one("#input")
            shown = watch_prompt(app, box, "z")  # a letter the prompt's placeholder lacks
            for _ in range(keys):
                if not app.chat.streaming:
                    print(f"  (stream ended after {len(latencies)} keys)")
                    break
                latency = await key_to_screen(app, box, shown)
                part = "answer" if app.query(AssistantMessage)[-1].answer_text else "thinking"
                latencies.append((part, latency))
                await asyncio.sleep(0.06)  # 100 keys span the 10 s stream
            await app.workers.wait_for_complete()
            await settle(pilot)
    finally:
        ReplyRenderer.feed = feed  # type: ignore[method-assign]
        await server.stop()
    rates = {part: (len(times) - 1) / (times[-1] - times[0]) for part, times in arrived.items() if len(times) > 1}
    return latencies, rates


async def main() -> None:
    tune_gc()  # as `tractui` does before the app starts
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACTUI_CONFIG_DIR"] = str(Path(tmp) / "config")
        os.environ["TRACTUI_DATA_DIR"] = str(Path(tmp) / "data")
        for name, answer in (("prose answer", PROSE), ("dense markdown answer", ANSWER)):
            for i in range(RUNS):
                (Path(tmp) / name / f"a{i}").mkdir(parents=True)
            (Path(tmp) / name / "b").mkdir()
            print(f"{name}:")
            runs = []
            for i in range(RUNS):
                gc.collect()  # each run starts clean, as a new process would: not amid the last run's dead app
                runs.append(await full_speed(Path(tmp) / name / f"a{i}", answer))
            rates, tails = sorted(rate for rate, _ in runs), sorted(tail for _, tail in runs)
            print(
                f"  stream of {TOKENS} tokens: {statistics.median(rates):,.0f} tokens/s displayed "
                f"(median of {RUNS} runs, slowest {rates[0]:,.0f}; goal >= 5,000)"
            )
            print(
                f"  last token to final frame: median {statistics.median(tails):.1f} ms, worst {tails[-1]:.1f} ms (goal < 100 ms)"
            )
            gc.collect()
            keys, arrival = await keystrokes(Path(tmp) / name / "b", answer)
            reached = ", ".join(f"{part} {tok_s:,.0f}" for part, tok_s in arrival.items())
            print(
                f"  keystroke to screen during a 2,000 tok/s stream ({reached} tok/s reached the app; goal p95 < 50 ms):"
            )
            for part in ("all", "thinking", "answer"):
                lat = sorted(ms for p, ms in keys if part in ("all", p)) or [float("nan")]
                p95 = lat[int(0.95 * (len(lat) - 1))]
                print(f"    {part:8}  median {statistics.median(lat):5.1f} ms, p95 {p95:5.1f} ms over {len(lat)} keys")


if __name__ == "__main__":
    asyncio.run(main())
