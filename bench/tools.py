"""What a tool round trip costs tractui itself, apart from the tool and the model; and MCP server start.

A loopback OpenAI-compatible model (Kimi-style: thinking, then a tool call, every
step) drives a turn of ROUNDS tool calls against the shipped demo MCP server over
stdio. For each round, tractui's own time is: from the end of the model's reply to
the call going out (parsing, consent check, the tool commit's bookkeeping), plus
from the tool's result to the next request reaching the server (storing the
result, compiling the history, building and sending the request). The MCP SDK's
round trip (the call itself) is reported apart. Goal: tractui's part < 20 ms median,
the same after a long history (the turn then goes on from 2,000 messages of long
replies with thinking, as ``bench/resume.py`` builds them).

Run: uv run python bench/tools.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import resume  # noqa: E402
from loopback import LoopbackServer, Reply, Request  # noqa: E402
from strict_servers import Step, StrictChat  # noqa: E402

from tractui.config.mcp import McpConfig  # noqa: E402
from tractui.conversation.conversation import Conversation  # noqa: E402
from tractui.core.events import Done, ToolCallState  # noqa: E402
from tractui.core.settings import Settings  # noqa: E402
from tractui.providers.config import ProviderConfig  # noqa: E402
from tractui.store.history import HistoryStore  # noqa: E402
from tractui.tools.consent import ConsentPolicy  # noqa: E402
from tractui.tools.setup import demo_server  # noqa: E402
from tractui.tools.toolbox import Toolbox  # noqa: E402

ROUNDS = 30
TURNS = 3
STARTS = 5
HISTORY = 1_000  # question-and-answer pairs before the turn in the long case: 2,000 messages


async def server_start() -> list[float]:
    """Spawn → connected → tools listed, for the demo server, STARTS times."""
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(STARTS):
            box = Toolbox(McpConfig(servers={"demo": demo_server()}), log_dir=Path(tmp), consent=ConsentPolicy())
            box.start()
            await box.settled(60)
            connection = box.connections["demo"]
            assert connection.state == "ready", connection.reason
            times.append(connection.ready_after or 0.0)
            await box.aclose()
    return times


async def round_trips(history: int = 0) -> tuple[list[float], list[float]]:
    """Each round's own part and the MCP calls' times; ``history`` pairs of messages come first."""
    overheads: list[float] = []
    calls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        box = Toolbox(
            McpConfig(servers={"demo": demo_server()}), log_dir=Path(tmp), consent=ConsentPolicy(allow_all=True)
        )
        box.start()
        await box.settled(60)
        server = LoopbackServer()
        await server.start()
        arrivals: list[float] = []
        for turn in range(TURNS):
            steps = [Step(f"step {i}: add", calls=[("demo__add", {"a": i, "b": 1})]) for i in range(ROUNDS)]
            model = StrictChat([*steps, Step("done", text="done")])

            def timed(request: Request, model: StrictChat = model) -> Reply:
                arrivals.append(time.perf_counter())
                return model(request)

            server.default = timed
            config = ProviderConfig("openai", "kimi-k2.6", base_url=f"{server.url}/v1", api_key_env="")
            store = HistoryStore(Path(tmp) / f"history-{turn}.db")
            settings = Settings({"tools.maxSteps": ROUNDS + 1, "context-limit": 10_000_000})
            sid = None
            if history:
                resume.TURNS = history
                sid = resume.build_session(store)
            conv = Conversation(store, settings, config, session_id=sid)
            conv.tools = box
            await conv.prepare()  # as while the user types
            arrivals.clear()
            reply_end = running = 0.0
            parts: list[tuple[float, float]] = []  # per round: tractui's time up to the result, the result's time
            async for event in conv.send("count up"):
                now = time.perf_counter()
                if isinstance(event, Done):
                    reply_end = now
                elif isinstance(event, ToolCallState) and event.status == "running":
                    running = now
                elif isinstance(event, ToolCallState) and event.status == "done":
                    calls.append(event.duration)
                    parts.append(((running - reply_end) + (now - running - event.duration), now))
            for k, (before, result_at) in enumerate(parts):
                overheads.append(before + (arrivals[k + 1] - result_at))
            assert not model.refusals, model.refusals
            await conv.aclose()
            store.close()
        await server.stop()
        await box.aclose()
    return overheads, calls


async def main() -> None:
    starts = await server_start()
    print(
        f"demo MCP server start (spawn → tools listed), {STARTS} runs: median {statistics.median(starts) * 1000:.0f} ms"
    )
    print(f"{TURNS} turns × {ROUNDS} tool rounds against a loopback model and the demo server over stdio:")
    for history in (0, HISTORY):
        overheads, calls = await round_trips(history)
        where = f"after {history * 2:,} messages" if history else "in a new session"
        print(
            f"  {where}: tractui's own part of a round (reply end → call sent, result → next request): "
            f"median {statistics.median(overheads) * 1000:.2f} ms, "
            f"p95 {sorted(overheads)[int(len(overheads) * 0.95)] * 1000:.2f} ms; "
            f"the MCP call itself (SDK round trip): median {statistics.median(calls) * 1000:.2f} ms"
        )


if __name__ == "__main__":
    asyncio.run(main())
