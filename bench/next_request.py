"""How long pressing Enter takes to become a request, by the length of the session.

For sessions of 10 to 10,000 messages (long replies with thinking, as
``bench/resume.py`` builds them) in a real SQLite file, opens the session as
``tractui -c`` does (the gauge read, then ``Conversation.prepare`` while the
user types), sends a message through the real OpenAI-compatible provider and
times ``send`` until the loopback server has the request: the store's reads,
the pre-flight gauge, the compile, the request body and its JSON, the HTTP
round to the socket. Then once more in the same session (the reply now in the
history). Goal: the same figure at every length.
Run: uv run python bench/next_request.py
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
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import resume  # noqa: E402
from loopback import LoopbackServer, openai_chat_reply  # noqa: E402

from tractui.conversation.conversation import Conversation  # noqa: E402
from tractui.core.settings import Settings  # noqa: E402
from tractui.providers import ProviderConfig  # noqa: E402
from tractui.store.history import HistoryStore  # noqa: E402

LENGTHS = (5, 100, 1_000, 5_000)  # turns: user + answer = 10 to 10,000 messages
RUNS = 5


async def until_requested(server: LoopbackServer, conversation: Conversation, text: str) -> float:
    """Seconds from ``send`` to the server holding the request; the reply is then read to its end."""
    before = len(server.requests)
    start = time.perf_counter()
    events = conversation.send(text)
    requested = 0.0
    async for _ in events:
        if not requested and len(server.requests) > before:
            requested = time.perf_counter() - start
    return requested or time.perf_counter() - start


async def one(path: Path, sid: str, server: LoopbackServer) -> tuple[float, float]:
    settings = Settings()
    settings.set("context-limit", 10_000_000)  # every message fits: no compaction, the whole chain is sent
    config = ProviderConfig("openai", "loop-model", base_url=f"{server.url}/v1", api_key_env="")
    server.add(openai_chat_reply(text="fine"), openai_chat_reply(text="again"))
    with HistoryStore(path) as store:
        conversation = Conversation(store, settings, config, session_id=sid)
        conversation.gauge()  # the footer, on start-up
        await conversation.prepare()  # while the user types
        first = await until_requested(server, conversation, "one more question")
        second = await until_requested(server, conversation, "and another")
        await conversation.aclose()
    return first, second


async def main() -> None:
    server = LoopbackServer()
    await server.start()
    print(f"send → request at the loopback server; median (min–max) of {RUNS} runs")
    try:
        for turns in LENGTHS:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "history.db"
                resume.TURNS = turns
                with HistoryStore(path) as store:
                    sid = resume.build_session(store)
                firsts, seconds = [], []
                for _ in range(RUNS):
                    first, second = await one(path, sid, server)
                    firsts.append(first * 1000)
                    seconds.append(second * 1000)
            print(
                f"  {turns * 2:>6,} messages: first send {statistics.median(firsts):6.1f} "
                f"({min(firsts):.1f}–{max(firsts):.1f}) ms, next {statistics.median(seconds):6.1f} "
                f"({min(seconds):.1f}–{max(seconds):.1f}) ms"
            )
    finally:
        await server.stop()


if __name__ == "__main__":
    os.environ.setdefault("TRACTUI_CONFIG_DIR", tempfile.mkdtemp())
    asyncio.run(main())
