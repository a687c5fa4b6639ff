"""A scriptable HTTP/1.1 server on 127.0.0.1 that speaks whatever a test tells it to.

Providers are tested over real HTTP against this server, never by patching
httpx: the bytes go through a real socket, so chunk boundaries, framing,
cut connections and stalls behave as they do on the internet.

Use the ``loopback`` fixture (tests/conftest.py); it yields a started
``LoopbackServer`` and stops it after the test::

    async def test_something(loopback):
        loopback.add(sse(FIXTURES / "think_tags/x.sse", seed=3))   # replay a recording
        loopback.add(error(429, {"error": {...}}, retry_after=1))   # then a 429
        loopback.add(lambda req: openai_chat_reply("hi"))           # then build from the request
        loopback.default = lambda req: openai_chat_reply("again")   # when the queue is empty
        ... point a provider at loopback.url (e.g. f"{loopback.url}/v1") ...
        assert loopback.requests[0].json["model"] == "m"

Responses (``Reply``) are served in queue order, one per request:

* ``sse(source, **opts)``: a body (``bytes``, ``str`` or a fixture ``Path``)
  served as ``text/event-stream``; ``json_body(obj_or_path, status=200)`` the same
  for JSON; ``error(status, body, retry_after=None, headers=None)`` an error answer.
* Options on any ``Reply``: ``seed`` (random chunk boundaries, seeded, so tags
  and JSON are split across TCP writes; ``None`` = one write), ``max_chunk``
  (largest piece, bytes), ``cut_after`` (close the connection after N body bytes,
  leaving the chunked body incomplete, so the client sees a cut), ``stall_after``
  + ``stall`` (stop sending for ``stall`` seconds after N body bytes; with ``until``, an
  ``asyncio.Event``, the stall ends as soon as the test sets it: a reply that goes on, or is
  cut, when the test says),
  ``pace`` (one write every ``pace`` seconds, on a fixed schedule: a client that
  falls behind finds the stream waiting in its socket, as with a real provider,
  instead of slowing the sender down), ``rate`` (bytes per second, on the same kind
  of schedule: each write is due when the bytes before it would have gone out at
  this rate; ``pace`` wins if both are given; a stall shifts the schedule by its
  length), ``headers``, ``status``.
* A callable ``fn(request) -> Reply`` (sync or async) builds the reply from the
  recorded request: scripted multi-turn conversations, compaction tests.

Every request is recorded in ``server.requests`` as a ``Request`` (``method``,
``path``, ``query`` (dict of first values), ``headers`` (lower-case names),
``body`` bytes, ``json`` parsed body or ``None``); ``server.active`` counts
connections still open (to check that a cancelled client hung up). With nothing queued and no
``default``, the server answers 599 with a message so the test fails loudly.

Bodies are framed with chunked transfer encoding (every piece one HTTP chunk)
and ``Connection: close``; a cut therefore reads as an incomplete body, never
as a clean end. ``encode_sse(events)`` and ``openai_chat_reply(...)`` build
small generated streams; other providers' generators belong beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).parent / "fixtures" / "providers"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    seed: int | None = 0
    max_chunk: int = 48
    cut_after: int | None = None
    stall_after: int | None = None
    stall: float = 0.0
    until: asyncio.Event | None = None
    pace: float = 0.0
    rate: float = 0.0


Handler = Callable[[Request], Reply | Awaitable[Reply]]
Scripted = Reply | Handler


def _bytes(source: bytes | str | Path) -> bytes:
    if isinstance(source, Path):
        return source.read_bytes()
    if isinstance(source, str):
        return source.encode()
    return source


def sse(source: bytes | str | Path, **opts: Any) -> Reply:
    """A ``text/event-stream`` reply replaying ``source`` (a recording or bytes)."""
    return Reply(body=_bytes(source), content_type="text/event-stream", **opts)


def json_body(obj: Any, status: int = 200, **opts: Any) -> Reply:
    """A JSON reply; ``obj`` is a Path, bytes/str (sent as is) or an object to dump."""
    body = _bytes(obj) if isinstance(obj, (bytes, str, Path)) else json.dumps(obj).encode()
    return Reply(status=status, body=body, content_type="application/json", **opts)


def error(
    status: int, body: Any = b"", *, retry_after: float | None = None, headers: dict[str, str] | None = None
) -> Reply:
    """An error answer, e.g. ``error(429, {...}, retry_after=1)``."""
    reply = json_body(body if body != b"" else {"error": {"message": f"HTTP {status}"}}, status=status, seed=None)
    reply.headers = dict(headers or {})
    if retry_after is not None:
        reply.headers["Retry-After"] = f"{retry_after:g}"
    return reply


def encode_sse(events: list[Any], *, done: bool = True, event_names: list[str | None] | None = None) -> bytes:
    """Encode dicts (or raw strings) as SSE ``data:`` events, optionally ending with ``[DONE]``."""
    out: list[str] = []
    for i, event in enumerate(events):
        name = event_names[i] if event_names else None
        if name:
            out.append(f"event: {name}\n")
        data = event if isinstance(event, str) else json.dumps(event)
        out.append(f"data: {data}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def openai_chat_reply(
    text: str,
    *,
    reasoning: str = "",
    reasoning_field: str = "reasoning_content",
    prompt_tokens: int = 10,
    completion_tokens: int | None = None,
    model: str = "loopback-model",
    **opts: Any,
) -> Reply:
    """A small Chat Completions stream: reasoning, then text in two pieces, then usage."""
    base = {"id": "chatcmpl-loop", "object": "chat.completion.chunk", "created": 0, "model": model}
    chunks: list[Any] = []
    if reasoning:
        chunks.append(
            {
                **base,
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", reasoning_field: reasoning}, "finish_reason": None}
                ],
            }
        )
    half = len(text) // 2
    for piece in (text[:half], text[half:]):
        if piece:
            chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    out_tokens = (
        completion_tokens if completion_tokens is not None else max(1, len(text.split()) + len(reasoning.split()))
    )
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": out_tokens,
        "total_tokens": prompt_tokens + out_tokens,
    }
    chunks.append({**base, "choices": [], "usage": usage})
    return sse(encode_sse(chunks), **opts)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
}


class LoopbackServer:
    """See the module docstring."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.default: Scripted | None = None
        self._queue: list[Scripted] = []
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def active(self) -> int:
        """Connections still being served (a client that closed early brings this to 0)."""
        return len(self._tasks)

    def add(self, *replies: Scripted) -> LoopbackServer:
        self._queue.extend(replies)
        return self

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def __aenter__(self) -> LoopbackServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await self._read_request(reader)
            if request is None:
                return
            self.requests.append(request)
            reply = await self._reply_for(request)
            await self._write(writer, reply)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked(reader)
        else:
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        parts = urlsplit(target)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        return Request(method, parts.path, query, headers, body)

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)

    async def _reply_for(self, request: Request) -> Reply:
        scripted = self._queue.pop(0) if self._queue else self.default
        if scripted is None:
            return json_body(
                {"error": {"message": f"loopback: nothing scripted for {request.method} {request.path}"}}, status=599
            )
        if isinstance(scripted, Reply):
            return scripted
        made = scripted(request)
        return await made if inspect.isawaitable(made) else made

    async def _write(self, writer: asyncio.StreamWriter, reply: Reply) -> None:
        reason = _REASONS.get(reply.status, "Status")
        head = [
            f"HTTP/1.1 {reply.status} {reason}",
            f"Content-Type: {reply.content_type}",
            "Transfer-Encoding: chunked",
            "Connection: close",
        ]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        body = reply.body
        sent = 0
        loop = asyncio.get_running_loop()
        start = due = loop.time()
        for piece in _pieces(body, reply.seed, reply.max_chunk, (reply.cut_after, reply.stall_after)):
            if reply.stall_after is not None and sent == reply.stall_after:
                await _stall(reply)
                start, due = start + reply.stall, due + reply.stall  # no burst to catch up after the stall
            if reply.cut_after is not None and sent >= reply.cut_after:
                return  # connection closes with the chunked body incomplete
            writer.write(b"%x\r\n%b\r\n" % (len(piece), piece))
            await writer.drain()
            sent += len(piece)
            if reply.pace or reply.rate:
                due = due + reply.pace if reply.pace else start + sent / reply.rate
                await asyncio.sleep(max(0.0, due - loop.time()))
        if reply.stall_after is not None and sent == reply.stall_after:
            await _stall(reply)
        if reply.cut_after is not None and sent >= reply.cut_after:
            return
        writer.write(b"0\r\n\r\n")
        await writer.drain()


async def _stall(reply: Reply) -> None:
    if reply.until is None:
        await asyncio.sleep(reply.stall)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(reply.until.wait(), reply.stall)


def _pieces(body: bytes, seed: int | None, max_chunk: int, marks: tuple[int | None, ...]) -> list[bytes]:
    """Split ``body`` at random (seeded) boundaries, always also at the cut/stall marks."""
    cuts = {m for m in marks if m is not None and 0 < m < len(body)}
    if seed is not None:
        rng = random.Random(seed)
        pos = 0
        while True:
            pos += rng.randint(1, max(1, max_chunk))
            if pos >= len(body):
                break
            cuts.add(pos)
    edges = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]
