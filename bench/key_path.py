"""Where a typed key's time goes while a reply streams, in a real terminal.

Runs ``tractui`` in a pseudo-terminal at 120×40 (as ``bench/external.py``
does), under ``bench/key_path_app.py``, which notes inside the app when each
key passes; streams a Markdown answer at 2,000 tokens/s from the loopback
server and types a key every 150 ms (``--session N``: in a resumed session of N
messages, the long replies ``bench/resume.py`` builds). Prints, per key: the terminal to the
app's input thread, to the app's message queue handing it over, to the
prompt having handled it, to the output that shows it handed to the app's
writer thread, to the terminal reading it; and, while the answer streamed,
how busy the app was, its screen layouts (each lays out and paints the whole
screen) and its garbage collections.
Run: uv run python bench/key_path.py [--tokens N] [--session N]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from external import END, RATE, ROOT, Client, Terminal, chunks_body, started, tractui_client
from loopback import LoopbackServer, sse
from startup import as_installed
from ui_stream import PROSE, token_pieces

EVERY = 0.15  # seconds between keys


class Recorded(TypedDict):
    """What ``key_path_app.py`` notes (perf_counter, one clock for both processes on Linux)."""

    keys: list[float]  # a key reaching the input thread
    received: list[float]  # the app's message queue handing it to the app
    handled: list[float]  # the prompt done with it
    writes: list[float]  # output handed to the writer thread
    updates: list[tuple[float, float]]  # screen layouts: start, seconds
    collections: list[tuple[int, float]]  # garbage collections: generation, seconds
    busy: float  # seconds in event-loop callbacks


def instrumented() -> Client:
    plain = tractui_client()

    def argv(url: str, home: Path, extra: tuple[str, ...]) -> list[str]:
        return [sys.executable, str(ROOT / "bench" / "key_path_app.py"), *plain.argv(url, home, extra)[3:]]

    def env(url: str, home: Path) -> dict[str, str]:
        return {**plain.env(url, home), "KEY_PATH_OUT": str(home / "key_path.json")}

    return Client("tractui", argv, env, plain.ready, plain.send)


def resumed(home: Path, messages: int) -> tuple[tuple[str, ...], Callable[[Terminal], bool]]:
    """A session of ``messages`` to resume (``-c``), and when the app has drawn it; none for 0."""
    if not messages:
        return (), lambda term: True
    import resume as resume_bench

    from tractui.store.history import HistoryStore

    resume_bench.TURNS = messages // 2
    (home / "data").mkdir(parents=True)
    with HistoryStore(home / "data" / "history.db") as store:
        resume_bench.build_session(store)
    return ("-c", "--set", "context-limit=100000000"), lambda term: "NEWEST-REPLY-END" in term.text()


async def measure(home: Path, tokens: int, messages: int) -> tuple[list[tuple[float, float]], Recorded, float]:
    """(pressed, read) per key, what the app recorded, and how long the keys were typed."""
    body, events = chunks_body([], [*token_pieces(PROSE, tokens), f"\n\n{END}\n"])
    server = LoopbackServer()
    await server.start()
    server.add(sse(body, seed=1, max_chunk=4096, rate=len(body) * RATE / events))
    extra, loaded = resumed(home, messages)
    term, _ = await started(instrumented(), server, home, extra=extra, loaded=loaded)
    presses: list[tuple[float, float]] = []
    try:
        await term.until(lambda: bool(server.requests), timeout=60)
        await asyncio.sleep(0.3)  # the answer has begun
        term.proc.send_signal(signal.SIGUSR1)
        began = time.perf_counter()
        while END not in term.text() and time.perf_counter() - began < 120:
            latency = await term.key_latency()
            if latency is not None:
                presses.append((term.typed, term.typed + latency / 1000))
            await asyncio.sleep(EVERY)
        span = time.perf_counter() - began
        term.proc.send_signal(signal.SIGUSR2)
        await term.until(lambda: (home / "key_path.json").exists(), timeout=10)
    finally:
        term.close()
        await server.stop()
    recorded: Recorded = json.loads((home / "key_path.json").read_text())
    return presses, recorded, span


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return f"p50 {statistics.median(ordered) * 1000:6.1f}   p95 {p95 * 1000:6.1f}   max {ordered[-1] * 1000:6.1f} ms"


def report(presses: list[tuple[float, float]], app: Recorded, span: float, tokens: int, messages: int) -> None:
    keys, received, handled, writes = app["keys"], app["received"], app["handled"], app["writes"]
    steps = ("input", "received", "handled", "painted", "read")
    parts: dict[str, list[float]] = {name: [] for name in (*steps, "whole")}
    for pressed, read in presses:
        at = bisect.bisect_left(keys, pressed)
        came = bisect.bisect_left(received, pressed)
        done = bisect.bisect_left(handled, pressed)
        if at == len(keys) or came == len(received) or done == len(handled) or keys[at] > read:
            continue  # the app did not note it
        write = bisect.bisect_left(writes, handled[done])
        if write == len(writes):
            continue
        times = (pressed, keys[at], received[came], handled[done], writes[write], read)
        for name, before, after in zip(steps, times, times[1:], strict=False):
            parts[name].append(after - before)
        parts["whole"].append(read - pressed)
    where = f" in a resumed session of {messages:,} messages" if messages else ""
    print(f"a {tokens:,}-token answer at {RATE:,} tok/s{where}, a key every {EVERY * 1000:.0f} ms: {len(presses)} keys")
    labels = {
        "input": "terminal → the app's input thread",
        "received": "→ the app's message queue hands it over",
        "handled": "→ the prompt has handled it",
        "painted": "→ output showing it handed to the writer",
        "read": "→ written, and read by the terminal",
        "whole": "keystroke → screen",
    }
    for name, label in labels.items():
        if parts[name]:
            print(f"  {label:42s} {_ms(parts[name])}")
    updates = app["updates"]
    print(f"while the keys were typed ({span:.1f} s): the app busy {app['busy'] / span:.0%} of the time")
    if updates:
        print(f"  {len(updates) / span:.1f} screen layouts a second, each {_ms([u[1] for u in updates])}")
    for generation, name in enumerate(("young", "middle", "full")):
        pauses = [seconds for gen, seconds in app["collections"] if gen == generation]
        if pauses:
            print(
                f"  {len(pauses)} {name} garbage collections, {sum(pauses) * 1000:.0f} ms in all, longest {max(pauses) * 1000:.1f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=24_000)
    parser.add_argument("--session", type=int, default=0, help="messages of a session resumed first")
    args = parser.parse_args()
    sys.setswitchinterval(0.0005)  # the terminal's reader thread times output as soon as it is read
    as_installed(sys.executable, str(ROOT / "tractui"))
    with tempfile.TemporaryDirectory() as tmp:
        presses, app, span = asyncio.run(measure(Path(tmp) / "k", args.tokens, args.session))
    report(presses, app, span, args.tokens, args.session)


if __name__ == "__main__":
    main()
