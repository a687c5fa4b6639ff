"""The app as a user's terminal sees it, measured from outside, beside a peer client.

Runs ``tractui`` in a pseudo-terminal at 120×40 against the loopback server
(Chat Completions), reads what it writes into a terminal emulator (pyte) and
watches the emulated screen, as a user would see it:

1. start to first frame;
2. a reply paced at 2,000 tokens/s (thinking, then a Markdown answer) while a
   key is typed every 150 ms: keystroke → screen p50/p95 (the key entering
   the terminal to the emulated screen showing it in the prompt), and the
   rate the answer is drawn at (its first to its last line on screen);
3. the same reply at full speed: tokens/s from Enter to its last line;
4. one 50,000-token answer at full speed: tokens/s shown over each
   10,000-token window (a marker line at each window's start reaching the
   screen);
5. a 5 MiB answer on a single line at full speed, keys typed every 100 ms
   while it is drawn: keystroke → screen;
6. ``tractui -c`` on a session of 2,000 messages (long replies with
   thinking): the newest reply on screen, a key typed then echoed, and (2 s
   later, start-up done) Enter → the next request reaching the server, beside
   the same on a 10-message session;
7. Elia (``elia-chat``, installed by this script in a throwaway venv under
   the system's temporary folder) on the same loopback server: first frame
   and items 2 and 3, and the ratios.

Each figure is the median over ``--runs`` runs (default 5), with the range.
The in-process figures (``bench/ui_stream.py``) leave out the terminal
driver's writes; these include them. A key or a line counts when the output
that shows it is read from the terminal, timed by a thread that does nothing
else, as a terminal reads it (the emulator, pure Python beside the loopback
server, digests it later; its lag is reported apart). Both apps run with
their bytecode written, as installed.
Run: uv run python bench/external.py [--runs N] [--no-peer]
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import fcntl
import os
import pty
import queue
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from loopback import LoopbackServer, encode_sse, sse  # noqa: E402
from startup import as_installed  # noqa: E402
from ui_stream import PROSE, token_pieces  # noqa: E402

COLS, ROWS = 120, 40
THINKING_TOKENS, ANSWER_TOKENS = 2_000, 6_000
LONG_TOKENS, WINDOW = 50_000, 10_000
HUGE_LINE = 5 << 20  # bytes on one line
RATE = 2_000  # tokens per second, the paced run
HUGE_CAP = PEER_CAP = 30.0  # seconds: longest wait for the huge line, and for the peer's replies
KEY = "§"  # in no reply
END = "END-OF-ANSWER"
THINKING = "Let me weigh each option before I answer, one step at a time.\n\n"
ELIA = "elia-chat==1.10.0"


def chunks_body(thinking: list[str], answer: list[str]) -> tuple[bytes, int]:
    """Chat Completions SSE: a delta per piece, thinking as ``reasoning_content``."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loop-model"}

    def delta(**d: str) -> dict[str, object]:
        return {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}

    chunks = [delta(reasoning_content=p) for p in thinking] + [delta(content=p) for p in answer]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return encode_sse(chunks), len(chunks)


def reply_body() -> tuple[bytes, int]:
    return chunks_body(token_pieces(THINKING, THINKING_TOKENS), [*token_pieces(PROSE, ANSWER_TOKENS), f"\n\n{END}\n"])


def long_body() -> bytes:
    """50,000 tokens of Markdown with a marker line after each 10,000-token window."""
    pieces = token_pieces(PROSE, LONG_TOKENS)
    answer: list[str] = []
    for start in range(0, LONG_TOKENS, WINDOW):
        answer += [*pieces[start : start + WINDOW], f"\n\nMARK-{start // WINDOW + 1}\n\n"]
    return chunks_body([], [*answer, f"\n\n{END}\n"])[0]


def huge_line_body() -> bytes:
    words = "lorem ipsum dolor sit amet consectetur "
    line = (words * (HUGE_LINE // len(words) + 1))[:HUGE_LINE]
    return chunks_body([], [line[i : i + 4096] for i in range(0, len(line), 4096)] + [f"\n\n{END}\n"])[0]


@dataclass
class Client:
    """How to start a chat client against the loopback server, and where it echoes keys."""

    name: str
    argv: Callable[[str, Path, tuple[str, ...]], list[str]]
    env: Callable[[str, Path], dict[str, str]]
    ready: Callable[[Terminal], bool]  # the first usable frame
    send: str  # the key that sends the prompt
    launches_with_prompt: bool = False  # the prompt is given on the command line


def tractui_client() -> Client:
    def argv(url: str, home: Path, extra: tuple[str, ...]) -> list[str]:
        flags = ["--provider", "openai", "--base-url", f"{url}/v1", "--model", "loop-model", "--api-key-env", ""]
        return [sys.executable, "-m", "tractui", *flags, *extra]

    def env(url: str, home: Path) -> dict[str, str]:
        return {"TRACTUI_CONFIG_DIR": str(home / "config"), "TRACTUI_DATA_DIR": str(home / "data")}

    return Client("tractui", argv, env, lambda t: "openai" in t.prompt(), "\r")


def elia_client(venv: Path) -> Client:
    """Elia through litellm's OpenAI-compatible route; ``elia PROMPT`` opens a chat and sends it."""

    def env(url: str, home: Path) -> dict[str, str]:
        config = home / "config" / "elia"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text(
            'default_model = "loop"\n[[models]]\nid = "loop"\nname = "openai/loop-model"\n'
            f'api_base = "{url}/v1"\napi_key = "unused"\n'
        )
        return {"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"), "OPENAI_API_KEY": "x"}

    def argv(url: str, home: Path, extra: tuple[str, ...]) -> list[str]:
        return [str(venv / "bin" / "elia"), *extra]

    return Client("Elia", argv, env, lambda t: "^j" in t.text() or "Send" in t.text(), "\n", launches_with_prompt=True)


def _own_terminal() -> None:
    """In the child: the pty is its controlling terminal (closing it hangs the client up, as
    closing a terminal window does), and the child dies with this script."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Terminal:
    """A client in a pty, its output read into an emulated screen as it arrives."""

    def __init__(self, client: Client, url: str, home: Path, *extra: str) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))  # before the app reads it
        env = {
            **os.environ,
            **client.env(url, home),
            "TERM": "xterm-256color",
            "COLUMNS": str(COLS),
            "LINES": str(ROWS),
        }
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            client.argv(url, home, extra),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=_own_terminal,
        )
        os.close(slave)
        self.master = master
        self.watched: dict[bytes, float] = {}  # text to watch the output for: when it was first written
        # a screen awaited by ``shown``: resolved with the time the output that drew it was read,
        # not when the emulator, busy with a frame's worth of output in this process, got through it
        self._awaited: tuple[Callable[[], bool], asyncio.Future[float]] | None = None
        self.emulator_lag: list[float] = []  # ms the emulator took over the output that showed one
        self.typed = 0.0  # when ``key_latency`` last typed its key
        self._tail = b""
        self._arrived: queue.SimpleQueue[tuple[float, bytes]] = queue.SimpleQueue()
        self._loop = asyncio.get_running_loop()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """In a thread of its own: each piece of output, timed as it is read, as a terminal
        reads it. The emulator (pure Python, in this process with the loopback server) may be
        busy with the pieces before it; the time it takes is not the client's."""
        while True:
            try:
                data = os.read(self.master, 1 << 20)
            except OSError:
                return  # the client is gone
            if not data:
                return
            self._arrived.put((time.perf_counter(), data))
            self._loop.call_soon_threadsafe(self._emulate)

    def _emulate(self) -> None:
        while not self._arrived.empty():
            now, data = self._arrived.get()
            self.stream.feed(data)
            seen = self._tail + data
            for text, when in self.watched.items():
                if not when and text in seen:
                    self.watched[text] = now
            self._tail = data[-64:]
            if self._awaited is not None and not self._awaited[1].done() and self._awaited[0]():
                self._awaited[1].set_result(now)
                self.emulator_lag.append((time.perf_counter() - now) * 1000)

    def watch(self, *texts: str) -> None:
        """Note when each of ``texts`` is first written to the terminal: a line that scrolls
        past between two looks at the screen is still seen."""
        self.watched |= {text.encode(): 0.0 for text in texts}

    def written(self, text: str) -> float:
        return self.watched[text.encode()]

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def prompt(self) -> str:
        """The bottom rows: the prompt box and the footer."""
        return "\n".join(self.screen.display[-6:])

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    async def until(self, predicate: Callable[[], bool], timeout: float = 60.0, step: float = 0.002) -> float:
        deadline = time.perf_counter() + timeout
        while not predicate():
            if time.perf_counter() > deadline:
                raise TimeoutError("the screen never showed it:\n" + self.text())
            await asyncio.sleep(step)
        return time.perf_counter()

    async def shown(self, predicate: Callable[[], bool], timeout: float) -> float | None:
        """When the output that made ``predicate`` true was read from the terminal; None if not in time."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._awaited = (predicate, future)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None
        finally:
            self._awaited = None

    async def key_latency(self) -> float | None:
        """Type KEY and wait for the prompt to show one more of it: ms, or None if not within 5 s."""
        before = self.prompt().count(KEY)
        self.type(KEY)
        pressed = self.typed = time.perf_counter()
        shown = await self.shown(lambda: self.prompt().count(KEY) > before, timeout=5)
        return None if shown is None else (shown - pressed) * 1000

    async def keys_until(
        self, done: Callable[[], bool], deadline: float, every: float, each: Callable[[], None] = lambda: None
    ) -> tuple[list[float], int]:
        """Type a key every ``every`` seconds until ``done()`` or ``deadline``, calling ``each`` before
        each key: the latencies in ms, sorted, and how many keys were not shown within 5 s."""
        latencies: list[float] = []
        lost = 0
        while not done() and time.perf_counter() < deadline:
            each()
            latency = await self.key_latency()
            if latency is None:
                lost += 1
            else:
                latencies.append(latency)
            await asyncio.sleep(every)
        return sorted(latencies), lost

    def close(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._reader.join(5)  # its read ends once the client's side of the pty is closed
        os.close(self.master)


async def started(
    client: Client,
    server: LoopbackServer,
    home: Path,
    watch: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    loaded: Callable[[Terminal], bool] = lambda term: True,
) -> tuple[Terminal, float]:
    """The client running (with ``extra`` arguments), its first usable frame on screen, and
    seconds it took; once ``loaded`` holds, the prompt sent."""
    args = ("go",) if client.launches_with_prompt else ()
    term = Terminal(client, server.url, home, *args, *extra)
    term.watch(*watch)
    first = await term.until(lambda: client.ready(term), timeout=120) - term.start
    await term.until(lambda: loaded(term), timeout=120)
    if not client.launches_with_prompt:
        await asyncio.sleep(1.0)  # the tokenizer and history loaded after the first frame
        term.type("go" + client.send)
    return term, first


async def paced_run(client: Client, home: Path, cap: float = 60) -> dict[str, float]:
    """First frame, and keys typed every 150 ms while a 2,000 tok/s reply streams."""
    body, events = reply_body()
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=1, max_chunk=4096, rate=len(body) * RATE / events))
    term, first = await started(client, server, home)
    try:
        await term.until(lambda: bool(server.requests), timeout=60)
        sent = time.perf_counter()
        await asyncio.sleep(0.3)  # the reply has begun
        answer_first: float | None = None

        def answer_begun() -> None:
            nonlocal answer_first
            if answer_first is None and "Reversing a sequence" in term.text():
                answer_first = time.perf_counter()

        latencies, lost = await term.keys_until(lambda: END in term.text(), sent + cap, 0.15, answer_begun)
        last = time.perf_counter()
        finished = END in term.text()
    finally:
        term.close()
        await server.stop()
    return {
        "first frame ms": first * 1000,
        "key p50 ms": statistics.median(latencies),
        "key p95 ms": latencies[int(0.95 * (len(latencies) - 1))],
        "emulator lag ms": statistics.median(term.emulator_lag),
        "keys lost": lost,
        "answer drawn tok/s": ANSWER_TOKENS / (last - answer_first) if answer_first and finished else 0.0,
        "whole reply s": last - sent if finished else float("inf"),
    }


async def full_speed(client: Client, home: Path, cap: float = 60) -> dict[str, float]:
    body, _ = reply_body()
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=1, max_chunk=1 << 20))
    term, _ = await started(client, server, home)
    try:
        await term.until(lambda: bool(server.requests), timeout=60)
        sent = time.perf_counter()
        last = await term.shown(lambda: END in term.text(), timeout=cap)
        if last is None:
            return {"full speed tok/s": 0.0}
    finally:
        term.close()
        await server.stop()
    return {"full speed tok/s": (THINKING_TOKENS + ANSWER_TOKENS) / (last - sent)}


async def long_answer(client: Client, home: Path) -> dict[str, float]:
    """Tokens per second shown over each 10,000-token window of a 50,000-token answer."""
    server = LoopbackServer()
    await server.start()
    server.add(sse(long_body(), seed=None, max_chunk=1 << 20))
    marks = [f"MARK-{i}" for i in range(1, LONG_TOKENS // WINDOW + 1)]
    term, _ = await started(client, server, home, watch=tuple(marks))
    try:
        await term.until(lambda: bool(server.requests), timeout=60)
        seen = [time.perf_counter()]  # the first window: from the request, as the user waits for it
        await term.until(lambda: bool(term.written(marks[-1])), timeout=300, step=0.01)
    finally:
        term.close()
        await server.stop()
    seen += [term.written(mark) for mark in marks]
    return {f"window {i + 1} tok/s": _window_rate(seen, i) for i in range(len(marks))}


def _window_rate(seen: list[float], i: int) -> float:
    """Tokens per second over window ``i`` (``seen[i]`` to ``seen[i + 1]``). A marker that
    scrolled past between two frames was never written: the window is widened to the
    nearest markers that were, and the rate taken over that span."""
    start = max(k for k in range(i + 1) if seen[k])
    end = min((k for k in range(i + 1, len(seen)) if seen[k]), default=len(seen) - 1)
    return WINDOW * (end - start) / (seen[end] - seen[start])


async def huge_line(client: Client, home: Path) -> dict[str, float]:
    """Keys typed every 100 ms while a 5 MiB single-line answer is drawn."""
    server = LoopbackServer()
    await server.start()
    server.add(sse(huge_line_body(), seed=None, max_chunk=1 << 20))
    term, _ = await started(client, server, home)
    try:
        await term.until(lambda: bool(server.requests), timeout=60)
        sent = time.perf_counter()
        latencies, lost = await term.keys_until(lambda: END in term.text(), sent + HUGE_CAP, 0.1)
        drawn = time.perf_counter() - sent if END in term.text() else float("inf")
    finally:
        term.close()
        await server.stop()
    return {
        "huge line key p50 ms": statistics.median(latencies) if latencies else float("inf"),
        "huge line key max ms": latencies[-1] if latencies else float("inf"),
        "huge line keys lost": lost,
        "huge line drawn s": drawn,
    }


async def resume(client: Client, home: Path, turns: int) -> dict[str, float]:
    """Start to the newest reply on screen, to a key typed then echoed, and Enter to the next request."""
    import resume as resume_bench

    from tractui.store.history import HistoryStore

    resume_bench.TURNS = turns
    (home / "data").mkdir(parents=True)
    with HistoryStore(home / "data" / "history.db") as store:
        resume_bench.build_session(store)
    server = LoopbackServer()
    await server.start()
    body, _ = chunks_body([], ["fine", f"\n\n{END}\n"])
    server.add(sse(body))
    term = Terminal(client, server.url, home, "-c", "--set", "context-limit=1M")  # all 2,000 messages fit
    try:
        newest = await term.shown(lambda: "NEWEST-REPLY-END" in term.text(), timeout=120)
        term.type(KEY)
        echoed = await term.shown(lambda: KEY in term.prompt(), timeout=120)
        if newest is None or echoed is None:
            raise TimeoutError("the resumed session never showed its newest reply and the key:\n" + term.text())
        newest, echoed = newest - term.start, echoed - term.start
        await asyncio.sleep(2.0)  # the rest of start-up done (older messages, gauge): preparation alone
        term.type("next\r")
        sent = time.perf_counter()
        requested = await term.until(lambda: bool(server.requests), timeout=120) - sent
        await term.until(lambda: END in term.text(), timeout=120)
    finally:
        term.close()
        await server.stop()
    return {"newest ms": newest * 1000, "key echoed ms": echoed * 1000, "next request ms": requested * 1000}


@dataclass
class Figures:
    runs: list[dict[str, float]] = field(default_factory=list)

    def add(self, run: dict[str, float]) -> None:
        self.runs.append(run)

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.runs if key in r)

    def span(self, key: str, fmt: str = ",.0f") -> str:
        values = [r[key] for r in self.runs if key in r]
        return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def elia_venv() -> Path | None:
    """A throwaway venv with Elia, made once per machine under the temporary folder; None if it can't be."""
    venv = Path(tempfile.gettempdir()) / "tractui-bench-elia"
    if (venv / "bin" / "elia").exists():
        return venv
    uv = shutil.which("uv")
    if uv is None:
        return None
    made = subprocess.run([uv, "venv", "-q", "-p", "3.11", str(venv)], capture_output=True)
    pip = subprocess.run(
        [uv, "pip", "install", "-q", ELIA], env={**os.environ, "VIRTUAL_ENV": str(venv)}, capture_output=True
    )
    return venv if made.returncode == 0 and pip.returncode == 0 else None


async def one_run(tmp: Path, elia: Client | None) -> tuple[dict[str, float], dict[str, float]]:
    ours: dict[str, float] = {}
    tractui = tractui_client()
    ours |= await paced_run(tractui, tmp / "paced")
    ours |= await full_speed(tractui, tmp / "full")
    ours |= await long_answer(tractui, tmp / "long")
    ours |= await huge_line(tractui, tmp / "huge")
    ours |= {f"{k} (2,000)": v for k, v in (await resume(tractui, tmp / "resume", 1000)).items()}
    ours |= {f"{k} (10)": v for k, v in (await resume(tractui, tmp / "small", 5)).items()}
    theirs: dict[str, float] = {}
    if elia is not None:
        theirs |= await paced_run(elia, tmp / "elia-paced", cap=PEER_CAP)
        theirs |= await full_speed(elia, tmp / "elia-full", cap=PEER_CAP)
    return ours, theirs


def report(ours: Figures, theirs: Figures, runs: int) -> None:
    print(f"tractui in a pty at {COLS}×{ROWS}, screen read through pyte; median (range) of {runs} runs")
    print(f"  start to first frame: {ours.span('first frame ms')} ms")
    print(
        f"  keystroke → screen during a {RATE:,} tok/s reply: p50 {ours.span('key p50 ms')} ms, "
        f"p95 {ours.span('key p95 ms')} ms; keys not shown within 5 s: {ours.span('keys lost')}"
    )
    print(
        f"    (a key counts when the output showing it is read; this script's emulator took a further "
        f"{ours.span('emulator lag ms', '.1f')} ms over it, not counted)"
    )
    print(f"  that reply's answer drawn at {ours.span('answer drawn tok/s')} tok/s (sent at {RATE:,})")
    print(f"  the same 8,000-token reply at full speed, Enter to last line: {ours.span('full speed tok/s')} tok/s")
    windows = [k for k in ours.runs[0] if k.startswith("window ")]
    print(f"  a {LONG_TOKENS:,}-token answer at full speed, tok/s shown per {WINDOW:,}-token window:")
    for k in windows:
        print(f"    {k[:-6]}: {ours.span(k)}")
    print(
        f"  a {HUGE_LINE >> 20} MiB single-line answer: drawn in {ours.span('huge line drawn s', '.1f')} s "
        f"(inf: not within {HUGE_CAP:.0f} s); "
        f"keys meanwhile p50 {ours.span('huge line key p50 ms')} ms, max {ours.span('huge line key max ms')} ms, "
        f"lost {ours.span('huge line keys lost')}"
    )
    for n in ("2,000", "10"):
        print(
            f"  tractui -c on {n} messages: newest reply on screen {ours.span(f'newest ms ({n})')} ms, "
            f"a key then echoed at {ours.span(f'key echoed ms ({n})')} ms, "
            f"Enter → next request {ours.span(f'next request ms ({n})')} ms"
        )
    if not theirs.runs:
        print("  Elia: not run")
        return
    print(f"Elia ({ELIA}) in the same runs:")
    print(f"  start to first frame: {theirs.span('first frame ms')} ms")
    print(f"  keystroke → screen: p50 {theirs.span('key p50 ms')} ms, p95 {theirs.span('key p95 ms')} ms")
    print(f"  answer drawn at {theirs.span('answer drawn tok/s')} tok/s (0: not finished within {PEER_CAP:.0f} s)")
    print(f"  full speed: {theirs.span('full speed tok/s')} tok/s (0: not finished within {PEER_CAP:.0f} s)")
    print("tractui / Elia (< 1 is better for times, > 1 for rates):")
    for key in ("first frame ms", "key p50 ms", "key p95 ms"):
        print(f"  {key}: {ours.median(key) / theirs.median(key):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    sys.setswitchinterval(0.0005)  # the reader thread times output as soon as it is read
    as_installed(sys.executable, str(ROOT / "tractui"))  # the site-packages are compiled by uv sync
    elia = None
    if not args.no_peer:
        venv = elia_venv()
        if venv is not None:
            as_installed(str(venv / "bin" / "python"), str(venv / "lib"))
        elia = elia_client(venv) if venv else None
    ours, theirs = Figures(), Figures()
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = asyncio.run(one_run(Path(tmp), elia))
        ours.add(a)
        if b:
            theirs.add(b)
    report(ours, theirs, args.runs)


if __name__ == "__main__":
    main()
