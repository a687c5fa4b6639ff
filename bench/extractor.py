"""Throughput of the think-tag extractor beside a plain ``str.find`` scan.

Run: ``uv run python bench/extractor.py``. Prints MB/s and chunks/s per chunk
size; the goals are >= 50 MB/s at 64-character chunks and >= 1M chunks/s at
1-character chunks.
"""

from __future__ import annotations

import time

from tractui.core.tags import ThinkTagExtractor

SIZES = (1, 8, 64, 4096)


def sample_text(total: int = 2_000_000) -> str:
    """A think block then an answer, with the occasional '<' as real answers have."""
    thought = "Let me work through this step by step; 3 < 4 holds, so the bound is fine.\n" * 200
    answer = "Here is the answer with some `code <T>` and prose that goes on for a while.\n"
    body = "<think>\n" + thought + "</think>\n\n"
    return body + answer * ((total - len(body)) // len(answer))


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    text = sample_text()
    mb = len(text.encode()) / 1e6
    print(f"text: {len(text):,} chars ({mb:.1f} MB), one think block then the answer")
    print(
        f"{'chunk':>6} {'extractor MB/s':>15} {'chunks/s':>12} {'str.find MB/s':>14} {'find chunks/s':>14} {'ratio':>6}"
    )
    for size in SIZES:
        chunks = [text[i : i + size] for i in range(0, len(text), size)]

        def extract(chunks: list[str] = chunks) -> None:
            ex = ThinkTagExtractor()
            feed = ex.feed
            for chunk in chunks:
                feed(chunk)
            ex.close()

        def scan(chunks: list[str] = chunks) -> None:
            hits = 0
            for chunk in chunks:
                if chunk.find("<") >= 0:
                    hits += 1

        t_ex, t_find = best_of(extract), best_of(scan)
        print(
            f"{size:>6} {mb / t_ex:>15.1f} {len(chunks) / t_ex:>12,.0f} "
            f"{mb / t_find:>14.1f} {len(chunks) / t_find:>14,.0f} {t_ex / t_find:>6.1f}"
        )


if __name__ == "__main__":
    main()
