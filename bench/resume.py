"""How fast the app shows a long session it resumes (``tractui -c``).

Builds a session of long replies (thinking, then a Markdown answer with a
list and code) in a real SQLite file, runs the real app headless on it, and
prints: time until the newest reply is on screen, keystroke-to-screen
latency right after that, how long each batch of older messages takes to
appear as the user scrolls up to the very first message, and keystroke
latency once all of them are drawn.
Goals: newest reply on screen within 1 s, keystrokes under 50 ms.
Run: uv run python bench/resume.py
"""

from __future__ import annotations

import asyncio
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
from ui_support import DEMO, FakeClock, screen_text, wait_for  # noqa: E402

from tractui.conversation.conversation import Conversation  # noqa: E402
from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage  # noqa: E402
from tractui.core.settings import Settings  # noqa: E402
from tractui.providers.demo import DemoProvider  # noqa: E402
from tractui.store.history import HistoryStore  # noqa: E402
from tractui.ui.app import TractApp  # noqa: E402
from tractui.ui.widgets.chat_log import ChatLog  # noqa: E402
from tractui.ui.widgets.earlier import EarlierMessages  # noqa: E402
from tractui.ui.widgets.message import UserMessage  # noqa: E402

TURNS = 100
SIZE = (120, 40)
THOUGHT = "The user asks how to reverse a list; I should compare slicing, reverse() and reversed(). " * 16
ANSWER = (
    "## Reversing, part {i}\n\n"
    + "Slicing with a negative step builds a new list and leaves the old one alone, while `list.reverse()` "
    "works in place and returns `None`. "
    * 6
    + "\n\n- slicing: a copy\n- `reverse()`: in place\n- `reversed()`: lazy, one pass\n\n"
    "```python\ndef newest_first(events: list[str]) -> list[str]:\n    return list(reversed(events))\n```\n\n"
    + "Pick the one that matches who else holds a reference to the list. "
    * 8
)


async def keystrokes(app: TractApp, shown: list[tuple[float, int]], keys: int = 20) -> list[float]:
    """Each from the key entering the app's queue to the first frame that draws it in the prompt
    (``shown``: from ``watch_prompt``, counting ``z``)."""
    box = app.query_one("#input")
    latencies = []
    for _ in range(keys):
        latencies.append(await key_to_screen(app, box, shown))
        await asyncio.sleep(0.03)
    return sorted(latencies)


def build_session(store: HistoryStore) -> str:
    sid = store.create_session("bench")
    for i in range(TURNS):
        store.append(sid, "user", Content.human(f"question {i}: how do I reverse a list?"))
        store.append(
            sid,
            "reasoning",
            Content(speaker="ai", blocks=[ThinkingBlock(thought=THOUGHT, source_field="reasoning_content")]),
        )
        answer = ANSWER.format(i=i) + (" NEWEST-REPLY-END" if i == TURNS - 1 else "")
        store.append(
            sid,
            "assistant",
            Content(speaker="ai", blocks=[TextBlock(text=answer)]),
            usage=Usage(input_tokens=1000 + i, output_tokens=900),
        )
    return sid


async def run(folder: Path) -> None:
    store = HistoryStore(folder / "history.db")
    sid = build_session(store)
    conversation = Conversation(store, Settings(), DEMO, provider=DemoProvider(DEMO, pace=0), session_id=sid)
    app = TractApp(conversation, clock=FakeClock())
    start = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        frames = watch_frames(app)
        prompt = watch_prompt(app, app.query_one("#input"), "z")  # a letter the prompt's placeholder lacks
        await wait_for(pilot, lambda: app.chat.ready and "NEWEST-REPLY-END" in screen_text(app), timeout=120)
        shown = time.perf_counter() - start
        print(f"{TURNS} long replies: newest reply on screen after {shown * 1000:.0f} ms (goal < 1,000 ms)")

        latencies = await keystrokes(app, prompt)
        print(
            f"  keystroke to screen right after: median {statistics.median(latencies):.1f} ms, "
            f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.1f} ms (goal < 50 ms)"
        )

        chat = app.query_one(ChatLog)
        batches = []
        while app.query_one(EarlierMessages).display:
            left = len(app.chat.pager.earlier)
            t0 = time.perf_counter()
            chat.scroll_home(animate=False, immediate=True)
            while len(app.chat.pager.earlier) == left or app.chat.pager.drawing:
                await asyncio.sleep(0.001)
            drawn = time.perf_counter()
            while not frames or frames[-1] <= drawn:
                await asyncio.sleep(0.001)
            batches.append((frames[-1] - t0) * 1000)
            await asyncio.sleep(0.2)  # the user reads a little
        assert "question 0:" in "".join(u.text for u in app.query(UserMessage))
        print(
            f"  scrolling up to the first message: {len(batches)} batches of older messages, each drawn in "
            f"median {statistics.median(batches):.0f} ms, max {max(batches):.0f} ms"
        )
        latencies = await keystrokes(app, prompt)
        print(
            f"  keystroke to screen with all {TURNS * 2} messages drawn: median {statistics.median(latencies):.1f} ms, "
            f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.1f} ms"
        )
    store.close()


def main() -> None:
    tune_gc()  # as `tractui` does before the app starts
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACTUI_CONFIG_DIR"] = str(Path(tmp) / "config")
        os.environ["TRACTUI_DATA_DIR"] = str(Path(tmp) / "data")
        asyncio.run(run(Path(tmp)))


if __name__ == "__main__":
    main()
