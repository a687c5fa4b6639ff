"""History store speed: append, and resuming a 10,000-message session.

Prints the median time to append one commit (goal < 1 ms), the time to open
the database, load the chain and compile it for a 10,000-message session
(goal < 300 ms), the part of opening spent on the integrity check, and the
memory the loaded session holds.
Run: ``uv run python bench/store.py``.
"""

from __future__ import annotations

import gc
import resource
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage
from tractui.core.settings import Settings
from tractui.store.compile import compile_history
from tractui.store.db import check_integrity
from tractui.store.history import HistoryStore, new_id
from tractui.store.imports import EXPORT_FORMAT, EXPORT_VERSION

APPENDS = 2_000
TURNS = 5_000  # user + assistant = 10,000 messages (plus reasoning commits)

QUESTION = "How would I refactor this function so that it streams its results instead of building a list? " * 2
THOUGHT = "The user wants a generator. I should keep the signature and explain the trade-offs of laziness. " * 4
ANSWER = "Turn the list into a generator: replace `out.append(x)` with `yield x` and drop the return. " * 8


def reply(i: int) -> tuple[Content, Content]:
    meta = {"provider": "anthropic", "model": "claude-sonnet-4", "base_url": "https://api.anthropic.com"}
    thinking = Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought=f"{i} {THOUGHT}", source_field="thinking", signature="c2ln" * 40)],
        metadata=meta,
    )
    answer = Content(speaker="ai", blocks=[TextBlock(text=f"{i} {ANSWER}")], metadata=meta)
    return thinking, answer


def bench_append(folder: Path) -> float:
    with HistoryStore(folder / "append.db") as store:
        sid = store.create_session()
        times = []
        for i in range(APPENDS):
            content = Content.human(f"{i} {QUESTION}") if i % 2 == 0 else reply(i)[1]
            start = time.perf_counter()
            store.append(
                sid,
                "user" if i % 2 == 0 else "assistant",
                content,
                usage=None if i % 2 == 0 else Usage(input_tokens=i, output_tokens=300),
            )
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def build_session(path: Path) -> str:
    """A 10,000-message session written through the store's import (one transaction)."""
    commits, parent, now = [], None, time.time()
    for i in range(TURNS):
        thinking, answer = reply(i)
        for kind, content, usage in (
            ("user", Content.human(f"{i} {QUESTION}"), None),
            ("reasoning", thinking, None),
            ("assistant", answer, Usage(input_tokens=1000 + i, output_tokens=400, reasoning_tokens=200)),
        ):
            cid = new_id()
            commits.append(
                {
                    "id": cid,
                    "parent_id": parent,
                    "session_id": "",
                    "kind": kind,
                    "content": content.model_dump(mode="json"),
                    "usage": usage.model_dump(mode="json") if usage else None,
                    "provider": "anthropic",
                    "model": "claude-sonnet-4",
                    "profile": None,
                    "created_at": now,
                    "status": "complete",
                    "metadata": {},
                }
            )
            parent = cid
    sid = new_id()
    data = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "session": {"id": sid, "created_at": now, "updated_at": now, "head": parent, "title": "bench"},
        "commits": commits,
    }
    with HistoryStore(path) as store:
        store.import_session(data)
    return sid


def resume(path: Path, sid: str, settings: Settings) -> tuple[int, int]:
    with HistoryStore(path) as store:
        chain = store.chain(sid)
    return len(chain), len(compile_history(chain, settings))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        median = bench_append(folder)
        print(f"append: median {median * 1000:.3f} ms over {APPENDS} commits (goal < 1 ms)")

        path = folder / "resume.db"
        sid = build_session(path)
        settings = Settings()
        runs = []
        for _ in range(5):
            gc.collect()
            start = time.perf_counter()
            commits, messages = resume(path, sid, settings)
            runs.append(time.perf_counter() - start)
        print(
            f"resume: open + load {commits} commits + compile {messages} messages: "
            f"median {statistics.median(runs) * 1000:.0f} ms, best {min(runs) * 1000:.0f} ms (goal < 300 ms)"
        )

        checks: dict[str, list[float]] = {"after a crash or another program's write": [], "after a clean close": []}
        with HistoryStore(path):
            pass  # a clean close: the marker that lets the next start skip the check
        marker = path.with_name(path.name + "-clean")
        kept = marker.read_text(encoding="ascii")
        for _ in range(5):
            for case, runs in checks.items():
                if case.startswith("after a crash"):
                    marker.unlink()
                start = time.perf_counter()
                check_integrity(path)
                runs.append(time.perf_counter() - start)
                marker.write_text(kept, encoding="ascii")
        for case, runs in checks.items():
            print(
                f"integrity check at open (quick_check, {path.stat().st_size / 2**20:.1f} MiB database) {case}: "
                f"median {statistics.median(runs) * 1000:.1f} ms"
            )

        gc.collect()
        tracemalloc.start()
        with HistoryStore(path) as store:
            chain = store.chain(sid)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"memory: loaded session holds {held / 2**20:.1f} MiB ({len(chain)} commits); process peak RSS {rss:.0f} MiB"
        )


if __name__ == "__main__":
    main()
