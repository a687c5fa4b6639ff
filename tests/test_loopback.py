"""The loopback server itself: framing, recording, scripted faults."""

from __future__ import annotations

import httpx
import pytest
from loopback import FIXTURES, LoopbackServer, error, json_body, openai_chat_reply, sse


async def test_replays_body_exactly_across_random_writes_and_records_request(loopback: LoopbackServer) -> None:
    path = FIXTURES / "think_tags" / "azure_deepseek_r1_stream_empty_think_block.sse"
    loopback.add(sse(path, seed=7, max_chunk=5))
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", f"{loopback.url}/v1/chat?x=1", json={"model": "m"}, headers={"X-Test": "a"}) as r,
    ):
        pieces = [p async for p in r.aiter_raw()]
    assert b"".join(pieces) == path.read_bytes()
    req = loopback.requests[0]
    assert (req.method, req.path, req.query, req.json) == ("POST", "/v1/chat", {"x": "1"}, {"model": "m"})
    assert req.headers["x-test"] == "a"


async def test_serves_queue_in_order_then_default_then_599(loopback: LoopbackServer) -> None:
    loopback.add(error(429, {"error": {"message": "slow down"}}, retry_after=2), json_body({"ok": True}))
    async with httpx.AsyncClient() as client:
        first = await client.post(loopback.url)
        second = await client.post(loopback.url)
        third = await client.post(loopback.url)
        loopback.default = lambda req: openai_chat_reply("hello", seed=None)
        fourth = await client.post(loopback.url)
    assert (first.status_code, first.headers["retry-after"], first.json()["error"]["message"]) == (
        429,
        "2",
        "slow down",
    )
    assert second.json() == {"ok": True}
    assert third.status_code == 599
    assert b"hello"[:2] in fourth.content and b"[DONE]" in fourth.content


async def test_cut_leaves_an_incomplete_body(loopback: LoopbackServer) -> None:
    loopback.add(sse(b"data: 1\n\n" * 20, cut_after=30))
    received = bytearray()
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("GET", loopback.url) as r:
                async for piece in r.aiter_raw():
                    received += piece
    assert bytes(received) == (b"data: 1\n\n" * 20)[:30]


async def test_stall_trips_the_read_timeout(loopback: LoopbackServer) -> None:
    loopback.add(sse(b"data: 1\n\n" * 4, stall_after=9, stall=5))
    async with httpx.AsyncClient(timeout=httpx.Timeout(5, read=0.2)) as client:
        with pytest.raises(httpx.ReadTimeout):
            async with client.stream("GET", loopback.url) as r:
                async for _ in r.aiter_raw():
                    pass


async def test_async_callable_builds_reply_from_request(loopback: LoopbackServer) -> None:
    async def echo(req):  # type: ignore[no-untyped-def]
        return json_body({"you_sent": req.json})

    loopback.default = echo
    async with httpx.AsyncClient() as client:
        r = await client.post(loopback.url, json=[1, 2])
    assert r.json() == {"you_sent": [1, 2]}
