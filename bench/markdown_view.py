"""A long Markdown answer in a real terminal: does every block reach the screen?

Runs ``tractui`` in tmux (a private server) at 80×24, 120×40 and 200×50
against the loopback server, which streams thinking and then a Markdown
answer with every kind of block (headings, a table, nested lists, Python and
Rust code, a blockquote, a rule, a closing paragraph), one token per delta, at
200 tokens/s and then at full speed. When the reply has finished it reads the pane, then pages up
through the conversation reading each screen, and checks that a line of every
block was on screen at least once; while the answer streams and settles it
reads the pane every 20 ms and counts the reads that show fewer lines than the
one before by half (a part of the answer blanked, if only for a frame). It prints the
captures and the checks, and exits 1 when one fails.

Run: uv run python bench/markdown_view.py [COLSxROWS ...]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from loopback import LoopbackServer, sse  # noqa: E402
from ui_stream import token_pieces  # noqa: E402
from ui_support import chat_stream  # noqa: E402

from tractui.core.tokens import get_encoding  # noqa: E402

SERVER = "tractui-markdown-view"
RATE = 200  # tokens per second
THINKING = "The user wants the ways to reverse a list in Python, with their costs and pitfalls.\n"
ANSWER = """# Reversing a list

Three ways, each with its cost.

## The options

| way | copies | cost |
|---|---|---|
| `items[::-1]` | yes | O(n) |
| `items.reverse()` | no | O(n) |
| `reversed(items)` | no | O(1) to start |

- Slicing
  - builds a new list
  - leaves the old one alone
- In place
  1. mutates the list
  2. returns `None`

```python
def reverse_copy(items: list[int]) -> list[int]:
    return items[::-1]
```

```rust
fn reverse_in_place(items: &mut Vec<i32>) {
    items.reverse();
}
```

## Pitfalls

> Iteration order: `reversed()` gives an iterator, not a list; wrap it in `list()` when you need one.

---

In short: slice for a copy, `reverse()` in place, `reversed()` to iterate. That is the whole story.
"""
# one line of each block, as the screen shows it
MARKERS = {
    "heading 1": "Reversing a list",
    "paragraph": "Three ways, each with its cost.",
    "heading 2": "The options",
    "table": "reversed(items)",
    "nested list": "leaves the old one alone",
    "ordered list": "returns None",
    "python": "def reverse_copy",
    "rust": "fn reverse_in_place",
    "heading 2 (pitfalls)": "Pitfalls",
    "blockquote": "Iteration order",
    "closing paragraph": "That is the whole story.",
}


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SERVER, *args], capture_output=True, text=True, check=False).stdout


def pane() -> str:
    return tmux("capture-pane", "-p", "-t", "view")


async def until(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the screen never showed it:\n" + pane())
        await asyncio.sleep(0.05)


def pieces(text: str) -> list[str]:
    encoding = get_encoding("o200k_base")
    return [encoding.decode([t]) for t in encoding.encode(text)]


async def watch_drawn(seconds: float) -> int:
    """Read the pane every 20 ms for ``seconds``: how many times the conversation showed less
    than half the lines of the read before (a part of the answer blanked, even for one frame;
    scrolling through blank margins moves the count far less)."""
    drops, previous = 0, 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        lines = pane().splitlines()[:-4]  # above the prompt and the footer
        drawn = sum(1 for line in lines if line.strip().strip("▁▂▃▄▅▆▇█"))
        drops += drawn < previous // 2
        previous = drawn
        await asyncio.sleep(0.02)
    return drops


async def one(cols: int, rows: int, home: Path, rate: float) -> tuple[list[str], int, dict[str, bool]]:
    thinking = token_pieces(THINKING, 80)
    answer = pieces(ANSWER)
    server = LoopbackServer()
    await server.start()
    body = chat_stream(thinking, answer)
    events = len(thinking) + len(answer) + 2
    if rate:
        server.add(sse(body, seed=1, max_chunk=64, rate=len(body) * rate / events))  # ``rate`` events a second
    else:
        server.add(sse(body, seed=1, max_chunk=1 << 16))  # as fast as the socket takes it
    env = {
        "TRACTUI_CONFIG_DIR": str(home / "config"),
        "TRACTUI_DATA_DIR": str(home / "data"),
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    command = (
        f"cd {ROOT} && env {exports} {sys.executable} -m tractui --provider openai "
        f"--base-url {server.url}/v1 --model loop-model --api-key-env ''"
    )
    tmux("new-session", "-d", "-s", "view", "-x", str(cols), "-y", str(rows), command)
    captures: list[str] = []
    try:
        await until(lambda: "openai" in pane(), 30)
        await asyncio.sleep(0.5)
        tmux("send-keys", "-t", "view", "how do I reverse a list?", "Enter")
        drops = await watch_drawn(events / (rate or 1000) + 2.0)  # the whole stream, then finished parts are captured
        captures.append(pane())
        for _ in range(12):  # page up to the question
            tmux("send-keys", "-t", "view", "PageUp")
            await asyncio.sleep(0.4)
            screen = pane()
            captures.append(screen)
            if "how do I reverse a list?" in screen:
                break
    finally:
        tmux("kill-session", "-t", "view")
        await server.stop()
    seen = "\n".join(captures)
    return captures, drops, {name: marker in seen for name, marker in MARKERS.items()}


async def main(sizes: list[tuple[int, int]]) -> None:
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return
    failed = 0
    for (cols, rows), rate in ((size, rate) for size in sizes for rate in (RATE, 0)):
        speed = f"{rate} tokens/s" if rate else "full speed"
        with tempfile.TemporaryDirectory() as folder:
            captures, drops, found = await one(cols, rows, Path(folder), rate)
        print(f"=== {cols}×{rows}, {speed}: the screen after the reply, then each page up ===")
        for i, screen in enumerate(captures):
            print(f"--- capture {i} ---")
            print(screen.rstrip("\n"))
        missing = [name for name, ok in found.items() if not ok]
        failed += bool(missing) or drops > 0
        print(
            f"{cols}×{rows}, {speed}: {len(found) - len(missing)} of {len(found)} blocks on screen"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + f"; {drops} reads lost half the drawn lines or more while the answer streamed and settled"
        )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    wanted = [tuple(int(n) for n in arg.split("x")) for arg in sys.argv[1:]] or [(80, 24), (120, 40), (200, 50)]
    os.environ.pop("TMUX", None)
    asyncio.run(main([(c, r) for c, r in wanted]))
