"""Token counting throughput and the context gauge's cost per update.

Run: ``uv run python bench/tokens.py``. The gauge must cost the same per
update on a 10k- and a 100k-token history: only what is new is tokenized.
"""

from __future__ import annotations

import time

from tractui.core.content import Content, TextBlock, ThinkingBlock
from tractui.core.gauge import CallBasis, measure_context
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter, get_encoding

PARAGRAPH = (
    "The gauge anchors on the provider's reported usage and only estimates what was added since. "
    "Reasoning that will be stripped is not counted; 3 < 4 and naïve café tokens are mixed in. "
)


def counting() -> None:
    text = PARAGRAPH * 5000
    mb = len(text.encode()) / 1e6
    for name in ("o200k_base", "cl100k_base"):
        start = time.perf_counter()
        enc = get_encoding(name)
        load = time.perf_counter() - start
        start = time.perf_counter()
        n = len(enc.encode_ordinary(text))
        took = time.perf_counter() - start
        print(
            f"{name}: load {load * 1000:.0f} ms; {mb:.1f} MB -> {n:,} tokens in {took * 1000:.0f} ms ({mb / took:.1f} MB/s, {n / took / 1e6:.2f}M tokens/s)"
        )


def history(tokens: int, counter: TokenCounter) -> list[Content]:
    out: list[Content] = []
    total = 0
    i = 0
    while total < tokens:
        out.append(Content.human(f"Question {i}: " + PARAGRAPH))
        out.append(
            Content(
                speaker="ai",
                blocks=[
                    ThinkingBlock(thought=f"Thinking {i}. " + PARAGRAPH * 2),
                    TextBlock(text=f"Answer {i}. " + PARAGRAPH * 2),
                ],
            )
        )
        total = counter.count_messages(out)
        i += 1
    return out


def gauge(tokens: int, settings: Settings, updates: int = 1000) -> tuple[int, float, float, float]:
    """Seconds per update: a new message after the basis, a streaming reply, a pure estimate."""
    counter = TokenCounter()
    messages = history(tokens, counter)
    basis = CallBasis(tokens, 500, 200, len(messages))
    measure_context(messages, settings, basis=basis, counter=counter)  # the first reading fills the caches
    start = time.perf_counter()
    for i in range(updates):
        measure_context([*messages, Content.human(f"New question {i}?")], settings, basis=basis, counter=counter)
    new_message = (time.perf_counter() - start) / updates
    # a reply streams in: every update is a new partial Content one piece longer
    partial = ""
    start = time.perf_counter()
    for _ in range(updates):
        partial += "tok "
        reply = Content(speaker="ai", blocks=[ThinkingBlock(thought=partial)])
        measure_context([*messages, reply], settings, basis=basis, counter=counter)
    streaming = (time.perf_counter() - start) / updates
    start = time.perf_counter()
    for _ in range(updates):
        measure_context(messages, settings, counter=counter)  # no basis: pure estimate
    estimate = (time.perf_counter() - start) / updates
    return len(messages), new_message, streaming, estimate


def main() -> None:
    counting()
    for label, values in (
        ("thinking sent back (none)", {"reasoning.includeInContext": True}),
        ("thinking stripped (default)", {}),
        ("allButLast", {"reasoning.includeInContext": True, "reasoning.stripFromContext": "allButLast"}),
    ):
        settings = Settings(values)
        print(f"gauge per update, {label}:")
        for size in (10_000, 100_000):
            count, new_message, streaming, estimate = gauge(size, settings)
            print(
                f"  {size:>7,}-token history ({count:>4} messages): {new_message * 1e6:6.1f} µs new message, "
                f"{streaming * 1e6:6.1f} µs streaming reply (re-counted, up to 4k chars), {estimate * 1e6:6.1f} µs pure estimate"
            )


if __name__ == "__main__":
    main()
