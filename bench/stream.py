"""Streaming throughput: our OpenAI-compatible pipeline against a bare httpx-sse loop.

A loopback server streams 100,000 Chat Completions chunks (reasoning, then
answer text, then usage) as fast as it can. The same bytes are read twice per
round: by a bare ``httpx-sse`` + ``json.loads`` loop, and by
``OpenAIChatProvider.stream`` (SSE parse, JSON, field dispatch, tag
extraction, events). Prints events per second for both and the ratio
(goal: at least 0.6). Run: ``uv run python bench/stream.py [chunks]``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import httpx
from httpx_sse import EventSource

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from loopback import LoopbackServer, sse

from tractui.core.content import Content
from tractui.core.settings import Settings
from tractui.providers import ProviderConfig, make_provider

ROUNDS = 3


def make_body(chunks: int) -> bytes:
    base = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":%s,"finish_reason":null}]}'
    half = chunks // 2
    lines = []
    for i in range(chunks):
        field = "reasoning_content" if i < half else "content"
        delta = json.dumps({field: f" word{i % 97}"})
        lines.append(f"data: {base % delta}\n\n")
    usage = {"prompt_tokens": 10, "completion_tokens": chunks, "total_tokens": chunks + 10}
    lines.append(f"data: {json.dumps({'id': 'chatcmpl-bench', 'choices': [], 'usage': usage})}\n\n")
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


async def bare(server: LoopbackServer, client: httpx.AsyncClient) -> int:
    count = 0
    async with client.stream("POST", f"{server.url}/v1/chat/completions", json={}) as response:
        async for event in EventSource(response).aiter_sse():
            if event.data == "[DONE]":
                break
            json.loads(event.data)
            count += 1
    return count


async def ours(server: LoopbackServer, client: httpx.AsyncClient) -> int:
    provider = make_provider(
        ProviderConfig("openai", "bench", base_url=f"{server.url}/v1", api_key_env=""), client=client
    )
    count = 0
    async for _ in provider.stream([Content.human("go")], Settings()):
        count += 1
    return count


async def main(chunks: int) -> None:
    body = make_body(chunks)
    async with LoopbackServer() as server, httpx.AsyncClient(timeout=60) as client:
        server.default = lambda request: sse(body, seed=None)
        best = {"bare": 0.0, "ours": 0.0}
        for _ in range(ROUNDS):
            for name, run in (("bare", bare), ("ours", ours)):
                start = time.perf_counter()
                events = await run(server, client)
                rate = events / (time.perf_counter() - start)
                best[name] = max(best[name], rate)
    print(f"chunks streamed:            {chunks:,} ({len(body) / 1e6:.1f} MB), best of {ROUNDS}")
    print(f"bare httpx-sse + json.loads: {best['bare']:>12,.0f} events/s")
    print(f"tractui openai pipeline:     {best['ours']:>12,.0f} events/s")
    print(f"ratio:                       {best['ours'] / best['bare']:>12.2f}  (goal >= 0.6)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))
