"""The longest stalls of the event loop while a fresh app draws its first reply.

The first answer of a run imports Textual's Markdown and the first code block
makes its language's lexer; made on the event loop, each held the screen (and
a key typed then) for tens of milliseconds. The app makes them on a thread of
its own while the user types (``answer_segment.warm``). This runs the real app
headless against the loopback server, in a fresh interpreter per run, with
the warm-up and without it (alternating), lets the user take a second to type,
then streams a reply (thinking, then an answer that opens with Python code) at
250 events a second, and prints the four longest stalls of the event loop (a
2 ms sleep's lateness) of each run, from Enter to the reply's end.
Run: uv run python bench/first_answer.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THINKING = ["Let me think about this. "] * 40
ANSWER = [
    "```python\n",
    "def newest_first(events):\n",
    "    return list(reversed(events))\n",
    "```\n\n",
    "That is all. ",
    *["More words here. "] * 40,
]


async def one_run(warm: bool) -> list[float]:
    """The four longest stalls (ms), longest first, from Enter to the reply's end."""
    sys.path[:0] = [str(ROOT / "tests")]
    from tractui.ui.launch import set_frame_rate, tune_gc

    set_frame_rate()
    from loopback import LoopbackServer, sse
    from ui_support import build_app, chat_stream, loop_config, settle, type_line, wait_for

    from tractui.ui.screens.chat import ChatScreen

    if not warm:

        def no_warm_up(self: ChatScreen) -> None:
            pass

        ChatScreen._warm_drawing = no_warm_up  # type: ignore[assignment, method-assign]
    server = LoopbackServer()
    await server.start()
    server.add(sse(chat_stream(THINKING, ANSWER), pace=0.004))
    lags: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        app = build_app(Path(tmp), config=loop_config(server))
        tune_gc()  # as `tractui` does before it runs the app
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await asyncio.sleep(1.0)  # the user typing the first question
            done = False

            async def probe() -> None:
                while not done:
                    start = time.perf_counter()
                    await asyncio.sleep(0.002)
                    lags.append(time.perf_counter() - start - 0.002)

            task = asyncio.create_task(probe())
            await type_line(pilot, "go")
            await settle(pilot)
            await wait_for(pilot, lambda: any("More words here" in c.content.text for c in app.conversation.history()))
            done = True
            await task
    await server.stop()
    return sorted((lag * 1000 for lag in lags), reverse=True)[:4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--one", choices=("warm", "cold"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(" ".join(f"{lag:.1f}" for lag in asyncio.run(one_run(args.one == "warm"))))
        return
    results: dict[str, list[list[float]]] = {"without the warm-up": [], "with it": []}
    for _ in range(args.runs):
        for name, mode in (("without the warm-up", "cold"), ("with it", "warm")):
            out = subprocess.run(
                [sys.executable, __file__, "--one", mode], capture_output=True, text=True, check=True
            ).stdout.split()
            results[name].append([float(x) for x in out])
    print(f"the first reply of a fresh app: its four longest event-loop stalls (ms), {args.runs} runs each")
    for name, runs in results.items():
        print(f"  {name}: " + "; ".join("/".join(f"{x:.0f}" for x in run) for run in runs))
        medians = [statistics.median(run[i] for run in runs) for i in range(4)]
        print("    medians by rank: " + " / ".join(f"{m:.0f}" for m in medians))


if __name__ == "__main__":
    main()
