"""The gauge and compaction over scripted 40-turn conversations, per shape, policy and window.

Each run talks to a loopback model (``tests/model_server.py``) that counts
every prompt with the real tokenizer, reports usage as its vendor does and
refuses what passes its limit; the conversation is a real one (SQLite store,
provider over HTTP). Printed per run: the gauge's median and max error (the
reading before each request against the prompt the server counted), the max
on the readings right after a compaction (estimates carrying a gap), the
compactions and the most in a row, the server's refusals, requests tractui
did not send, and the turns answered. Run: ``uv run python bench/gauge.py``
(``--quick``: the 2k window only).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from gauge_run import RunStats, conversation, run, settings_for
from loopback import LoopbackServer
from model_server import ModelServer

from tractui.store.history import HistoryStore

TURNS = 40
LIMITS = (2000, 4000, 8000)
SHAPES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "openai field": ("openai", {}, {}),
    "openai native": ("openai", {}, {"reasoning.format": "native"}),
    "openai tags": ("openai", {}, {"reasoning.format": "tags"}),
    "openai no usage": ("openai", {"usage": False}, {}),
    "openai strict template": ("openai", {"strict_template": True}, {}),
    "openai thinking summariser": ("openai", {"summary_thinks": 400}, {}),
    "openai hidden prompt": ("openai", {"hidden_prompt": 300}, {}),
    "anthropic field": ("anthropic", {}, {}),
    "anthropic native": ("anthropic", {}, {"reasoning.format": "native"}),
    "anthropic summarized": ("anthropic", {"display": "summarized"}, {"reasoning.format": "native"}),
    "anthropic omitted": ("anthropic", {"display": "omitted"}, {"reasoning.format": "native"}),
    "gemini field": ("gemini", {"display": "summarized"}, {}),
    "gemini native": ("gemini", {"display": "summarized"}, {"reasoning.format": "native"}),
    "gemini strict template": ("gemini", {"display": "summarized", "strict_template": True}, {}),
    "responses field": ("openai-responses", {"display": "summarized"}, {}),
    "responses native": ("openai-responses", {"display": "summarized"}, {"reasoning.format": "native"}),
    "responses omitted": ("openai-responses", {"display": "omitted"}, {"reasoning.format": "native"}),
}
POLICIES: dict[str, dict[str, Any]] = {
    "not sent": {"reasoning.includeInContext": False},
    "none": {"reasoning.includeInContext": True, "reasoning.stripFromContext": "none"},
    "allButLast": {"reasoning.includeInContext": True, "reasoning.stripFromContext": "allButLast"},
    "all": {"reasoning.includeInContext": True, "reasoning.stripFromContext": "all"},
}


async def one(protocol: str, server_options: dict[str, Any], values: dict[str, Any], limit: int) -> RunStats:
    with tempfile.TemporaryDirectory() as folder:
        os.environ["TRACTUI_CONFIG_DIR"] = f"{folder}/config"
        os.environ["TRACTUI_DATA_DIR"] = f"{folder}/data"
        async with LoopbackServer() as loopback:
            server = ModelServer(protocol=protocol, limit=limit, thinking_words=60, **server_options)  # type: ignore[arg-type]
            loopback.default = server
            with HistoryStore(Path(folder) / "history.db") as store:
                conv = conversation(store, loopback, settings_for(limit, **values), protocol)
                try:
                    return await run(conv, server, turns=TURNS)
                finally:
                    await conv.aclose()


async def main(limits: tuple[int, ...]) -> None:
    print(f"{TURNS} turns per run; error = (reading before the request - prompt the server counted) / counted")
    header = f"{'shape':28} {'policy':11} {'limit':>5} {'median':>7} {'max':>7} {'after c':>7} {'compact':>7} "
    print(header + f"{'in row':>6} {'refused':>7} {'blocked':>7} {'answered':>8}")
    worst = worst_after = 0.0
    for shape, (protocol, server_options, shape_values) in SHAPES.items():
        for policy, policy_values in POLICIES.items():
            for limit in limits:
                stats = await one(protocol, server_options, {**policy_values, **shape_values}, limit)
                worst = max(worst, stats.median_error)
                worst_after = max(worst_after, stats.max_after_compaction)
                print(
                    f"{shape:28} {policy:11} {limit:>5} {stats.median_error:>7.2%} {stats.max_error:>7.2%} "
                    f"{stats.max_after_compaction:>7.2%} {stats.compactions:>7} {stats.most_in_a_row:>6} {stats.refused:>7} {stats.blocked:>7} "
                    f"{stats.answered:>5}/{stats.turns}"
                )
    print(f"worst median error: {worst:.2%}; worst error right after a compaction: {worst_after:.2%}")


if __name__ == "__main__":
    asyncio.run(main(LIMITS[:1] if "--quick" in sys.argv else LIMITS))
