"""The app as a user's terminal sees it: keystroke echo and drawing rate measured from outside.

Runs ``tractui`` in a pseudo-terminal at 120×40 against the loopback server
(Chat Completions), reads what it writes into a terminal emulator (pyte) and
samples the emulated screen, as a user would see it:

1. start to first frame;
2. a reply paced at 2,000 tokens/s (thinking, then a Markdown answer) while a
   key is typed every 150 ms: keystroke → screen p50/p95 (the key entering
   the terminal to the emulated screen showing it in the prompt), and the
   rate the answer is drawn at (its first to its last line on screen);
3. the same answer at full speed: tokens/s from Enter to its last line;
4. ``tractui -c`` on a session of 2,000 messages (long replies with thinking):
   the newest reply on screen, and a key typed then echoed.

The in-process figures (``bench/ui_stream.py``) leave out the terminal
driver's writes and the emulator; these include them.
Run: uv run python bench/external.py
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from loopback import LoopbackServer, encode_sse, sse  # noqa: E402
from ui_stream import PROSE, token_pieces  # noqa: E402

COLS, ROWS = 120, 40
THINKING_TOKENS, ANSWER_TOKENS = 2_000, 6_000
RATE = 2_000  # tokens per second, the paced run
KEY = "§"  # in neither the thinking nor the answer
END = "END-OF-ANSWER"
THINKING = "Let me weigh each option before I answer, one step at a time.\n\n"


def stream_body() -> tuple[bytes, int]:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loop-model"}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"reasoning_content": p}, "finish_reason": None}]}
        for p in token_pieces(THINKING, THINKING_TOKENS)
    ]
    answer = [*token_pieces(PROSE, ANSWER_TOKENS), f"\n\n{END}\n"]
    chunks += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in answer]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return encode_sse(chunks), len(chunks)


class Terminal:
    """The app in a pty, its output read into an emulated screen as it arrives."""

    def __init__(self, url: str, home: Path, *extra: str) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))  # before the app reads it
        os.set_blocking(master, False)
        env = {
            **os.environ,
            "TRACTUI_CONFIG_DIR": str(home / "config"),
            "TRACTUI_DATA_DIR": str(home / "data"),
            "TERM": "xterm-256color",
            "COLUMNS": str(COLS),
            "LINES": str(ROWS),
        }
        args = ["--provider", "openai", "--base-url", f"{url}/v1", "--model", "loop-model", "--api-key-env", ""]
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tractui", *args, *extra],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        asyncio.get_running_loop().add_reader(master, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self.master, 1 << 20)
        except OSError:
            return
        self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def prompt(self) -> str:
        """The bottom rows: the prompt box and the footer."""
        return "\n".join(self.screen.display[-6:])

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    async def until(self, predicate, timeout: float = 60.0, step: float = 0.002) -> float:
        deadline = time.perf_counter() + timeout
        while not predicate():
            if time.perf_counter() > deadline:
                raise TimeoutError("the screen never showed it:\n" + self.text())
            await asyncio.sleep(step)
        return time.perf_counter()

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        os.close(self.master)


async def paced_run(home: Path) -> dict[str, float]:
    body, events = stream_body()
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=1, max_chunk=4096, rate=len(body) * RATE / events))
    term = Terminal(server.url, home)
    try:
        first = await term.until(lambda: "openai" in term.prompt()) - term.start
        await asyncio.sleep(1.0)  # the tokenizer and history loaded after the first frame
        term.type("go\r")
        sent = time.perf_counter()
        await term.until(lambda: "Thinking" in term.text())  # the reply has begun; the prompt is empty
        latencies: list[float] = []
        lost = 0
        answer_first: float | None = None
        while END not in term.text():
            if answer_first is None and "Reversing a sequence" in term.text():
                answer_first = time.perf_counter()
            before = term.prompt().count(KEY)
            term.type(KEY)
            pressed = time.perf_counter()
            try:
                shown = await term.until(lambda n=before: term.prompt().count(KEY) > n, timeout=5)
            except TimeoutError:
                lost += 1
                continue
            latencies.append((shown - pressed) * 1000)
            await asyncio.sleep(0.15)
        last = time.perf_counter()
    finally:
        term.close()
        await server.stop()
    latencies.sort()
    drawn = ANSWER_TOKENS / (last - answer_first) if answer_first else 0.0
    return {
        "first frame ms": first * 1000,
        "key p50 ms": statistics.median(latencies),
        "key p95 ms": latencies[int(0.95 * (len(latencies) - 1))],
        "keys": len(latencies),
        "lost": lost,
        "answer drawn tok/s": drawn,
        "whole reply s": last - sent,
    }


async def full_speed(home: Path) -> float:
    body, _ = stream_body()
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=1, max_chunk=1 << 20))
    term = Terminal(server.url, home)
    try:
        await term.until(lambda: "openai" in term.prompt())
        await asyncio.sleep(1.0)
        term.type("go\r")
        sent = time.perf_counter()
        last = await term.until(lambda: END in term.text(), timeout=300, step=0.005)
    finally:
        term.close()
        await server.stop()
    return (THINKING_TOKENS + ANSWER_TOKENS) / (last - sent)


async def resume(home: Path, turns: int = 1000) -> tuple[float, float]:
    """Seconds from start to the newest reply on screen, and to a key typed then being echoed."""
    import resume as resume_bench

    from tractui.store.history import HistoryStore

    resume_bench.TURNS = turns
    (home / "data").mkdir(parents=True)
    with HistoryStore(home / "data" / "history.db") as store:
        resume_bench.build_session(store)
    server = LoopbackServer()
    await server.start()
    term = Terminal(server.url, home, "-c")
    try:
        newest = await term.until(lambda: "NEWEST-REPLY-END" in term.text(), timeout=120)
        term.type(KEY)
        echoed = await term.until(lambda: KEY in term.prompt(), timeout=120)
    finally:
        term.close()
        await server.stop()
    return newest - term.start, echoed - term.start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paced = asyncio.run(paced_run(Path(tmp) / "a"))
        fast = asyncio.run(full_speed(Path(tmp) / "b"))
        newest, echoed = asyncio.run(resume(Path(tmp) / "c"))
    print(f"tractui in a pty at {COLS}×{ROWS}, screen read through pyte:")
    print(f"  start to first frame: {paced['first frame ms']:.0f} ms")
    print(
        f"  keystroke → screen during a {RATE:,} tok/s reply ({paced['keys']:.0f} keys): "
        f"p50 {paced['key p50 ms']:.0f} ms, p95 {paced['key p95 ms']:.0f} ms (goal p95 < 50 ms); "
        f"{paced['lost']:.0f} not shown within 5 s"
    )
    print(
        f"  that reply's answer drawn at {paced['answer drawn tok/s']:,.0f} tok/s "
        f"(sent at {RATE:,}); whole reply on screen after {paced['whole reply s']:.1f} s"
    )
    print(f"  the same reply at full speed: {fast:,.0f} tok/s from Enter to its last line (goal >= 5,000)")
    print(
        f"  tractui -c on 2,000 messages: newest reply on screen after {newest * 1000:,.0f} ms, "
        f"a key typed then echoed at {echoed * 1000:,.0f} ms (goal: newest < 500 ms)"
    )


if __name__ == "__main__":
    main()
