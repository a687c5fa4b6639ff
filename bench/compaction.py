"""What compaction costs apart from the model call, on a 10,000-message session.

Builds a session of 5,000 turns (10,000 messages) in a real SQLite file,
then runs one compaction with the offline demo provider as the summariser
and prints the time of each step beside the total minus the model calls:
load the chain, compile + count the live turns (cold and warm tokenizer
cache), plan and render the summary parts, write the summary commit, and
the gauge reading after it. Run: ``uv run python bench/compaction.py``.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from tractui.conversation.compaction import plan
from tractui.conversation.compaction.run import Summarizer, compact, live_turns, transcript_parts
from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage
from tractui.core.gauge import measure_context
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.providers import ProviderConfig
from tractui.providers.demo import DemoProvider
from tractui.store.compile import merge_commits
from tractui.store.history import HistoryStore, new_id
from tractui.store.imports import EXPORT_FORMAT, EXPORT_VERSION

TURNS = 5_000


def build(store: HistoryStore) -> str:
    """A 10,000-message session, written in one import (appending one by one is the store bench's job)."""
    sid, commits, parent, now = new_id(), [], None, time.time()
    for i in range(TURNS):
        user = Content.human(f"question {i}: how does module_{i % 97}.py handle the cache when the index is stale?")
        reply = Content(
            speaker="ai",
            blocks=[
                ThinkingBlock(thought=f"The user asks about module_{i % 97}.py; check the invalidation path first."),
                TextBlock(
                    text=f"In module_{i % 97}.py the cache is rebuilt when `stale()` returns true; see line {i % 400}."
                ),
            ],
        )
        for kind, content, usage in (
            ("user", user, None),
            ("assistant", reply, Usage(input_tokens=100, output_tokens=60)),
        ):
            cid = new_id()
            commits.append(
                {
                    "id": cid,
                    "parent_id": parent,
                    "kind": kind,
                    "content": content.model_dump(mode="json"),
                    "usage": usage.model_dump(mode="json") if usage else None,
                    "created_at": now,
                    "metadata": {},
                }
            )
            parent = cid
    store.import_session(
        {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "commits": commits,
            "session": {"id": sid, "created_at": now, "updated_at": now, "head": parent, "title": "bench"},
        }
    )
    return sid


class TimedSummarizer(Summarizer):
    """Counts the time spent inside model calls, so it can be subtracted."""

    model_time = 0.0
    calls = 0

    async def summarise(self, text: str, *, roomy: bool = False) -> str:
        start = time.perf_counter()
        try:
            return await super().summarise(text, roomy=roomy)
        finally:
            self.model_time += time.perf_counter() - start
            self.calls += 1


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


async def main() -> None:
    settings = Settings({"context-limit": 128_000, "max-tokens": 8192, "reasoning.includeInContext": True})
    with tempfile.TemporaryDirectory() as tmp:
        store = HistoryStore(Path(tmp) / "history.db")
        sid = build(store)
        counter = TokenCounter("gpt-4o")
        counter.count("load the encoding before timing")

        t = time.perf_counter()
        chain = store.chain(sid)
        load = time.perf_counter() - t
        t = time.perf_counter()
        turns = live_turns(chain, settings, counter)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        turns = live_turns(chain, settings, counter)
        warm = time.perf_counter() - t
        summarizer = TimedSummarizer(
            DemoProvider(ProviderConfig("demo", "demo"), pace=0), settings.copy(), counter, "demo/demo"
        )
        t = time.perf_counter()
        count = plan.choose_split([x.tokens for x in turns], keep_turns=4, keep_fraction=None, limit=128_000)
        parts = transcript_parts(turns[:count], summarizer, True)
        planning = time.perf_counter() - t
        tokens = sum(x.tokens for x in turns)

        t = time.perf_counter()
        events = [e async for e in compact(store, sid, settings, summarizer, counter)]
        total = time.perf_counter() - t
        result = events[-1]
        t = time.perf_counter()
        after = store.chain(sid)
        reading = measure_context(merge_commits(after), settings, counter=counter)
        gauge = time.perf_counter() - t

        print(
            f"session: {len(chain):,} messages, {tokens:,} tokens as sent; {count:,} turns summarised in {len(parts)} parts"
        )
        print(f"result: {result.message}")
        print(f"load chain            {ms(load)}")
        print(f"compile + count cold  {ms(cold)}")
        print(f"compile + count warm  {ms(warm)}")
        print(f"plan + render parts   {ms(planning)}")
        print(f"gauge after compaction{ms(gauge)}  (effective {reading.effective:,}, estimated={reading.estimated})")
        print(f"compact() total       {ms(total)}  of which {summarizer.calls} model calls {ms(summarizer.model_time)}")
        print(
            f"added by compaction   {ms(total - summarizer.model_time)}  (compile, count, plan, store; warm tokenizer cache)"
        )
        store.close()


if __name__ == "__main__":
    os.environ.setdefault("TRACTUI_DATA_DIR", tempfile.gettempdir())
    asyncio.run(main())
