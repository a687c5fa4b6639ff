"""What every provider shares: configuration, keys, and the retrying SSE transport.

A provider module only builds its request body and parses its stream
(``StreamParser``); ``Provider.stream`` does the rest the same way for all of
them: key lookup, retries with backoff honouring ``Retry-After`` (each wait
reported as ``RetryWait`` so the UI can count down), error mapping, stall and
cut detection. It never raises: a failure is a ``StreamError`` event after
which the stream ends, and what arrived before it stands.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import random
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any, ClassVar, Protocol

import anyio
import httpx

from tractui.core.content import Content
from tractui.core.events import (
    KEPT,
    Done,
    Notice,
    RetryWait,
    StreamError,
    StreamEvent,
)
from tractui.core.heap import gc_paused
from tractui.core.settings import Settings
from tractui.core.surrogates import loads
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.core.urls import public_url
from tractui.errors import RequestError
from tractui.providers.config import DEFAULT_KEY_ENV, ProviderConfig, key_env_name
from tractui.providers.errors import error_from_body, make_error, parse_error_body, redact, unreadable
from tractui.providers.models import ModelInfo, ModelListError, ModelPageParser, openai_models
from tractui.providers.sse import aiter_events
from tractui.providers.wire import WireMemo

RETRY_AFTER_CAP = 60.0  # seconds; a server asking for longer still gets retried after this
BACKOFF_CAP = 30.0
CONNECT_TIMEOUT = 15.0
MODELS_TIMEOUT = httpx.Timeout(15.0, connect=10.0)
MAX_MODEL_PAGES = 20  # a server that pages forever is cut off here
UNFINISHED = "the stream ended before the reply finished (no finish reason from the server)" + KEPT


class StreamParser(Protocol):
    """Turns one provider's SSE events into stream events.

    ``feed`` raises ``json.JSONDecodeError`` for a data line that is not JSON
    (the transport skips and counts it) and ``ChunkShapeError`` for JSON of a
    shape the protocol does not allow (the stream ends there, what arrived is
    kept). ``close`` flushes what is pending (tag extractor, final usage) at
    the end of the stream or when it is cut.
    """

    finish_reason: str | None
    response_model: str | None

    def feed(self, event: str, data: str) -> list[StreamEvent]: ...

    def close(self) -> list[StreamEvent]: ...

    def reply_metadata(self) -> dict[str, Any]:
        """What the protocol wants kept with the reply and sent back unchanged (OpenRouter's
        ``reasoning_details``); empty for most."""
        ...


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """``Retry-After`` (seconds or HTTP date) or ``retry-after-ms``, capped; ``None`` if absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return min(RETRY_AFTER_CAP, max(0.0, float(ms) / 1000))
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        date = email.utils.parsedate_to_datetime(value) if value else None
        if date is None:
            return None
        seconds = date.timestamp() - time.time()
    return min(RETRY_AFTER_CAP, max(0.0, seconds))


def system_text(system: str | None, settings: Settings, found: Sequence[str] = ()) -> str:
    """The one system prompt for a request: the caller's or the setting's, then system messages from the history."""
    return "\n\n".join(t for t in [system or settings.view.system_prompt or "", *found] if t)


def add_turn(turns: list[dict[str, Any]], turn: dict[str, Any], key: str) -> None:
    """Add ``turn``, merged with the last turn when it has the same role; an empty one is skipped.

    Anthropic and Gemini expect alternating roles; two user messages in a row
    (a compaction summary, then the next question) become one turn. A merge
    makes a new turn: ``turn`` may be a kept form (``WireMemo``), never changed.
    """
    if not turn[key]:
        return
    last = turns[-1] if turns else None
    if last is not None and last["role"] == turn["role"]:
        turns[-1] = {"role": turn["role"], key: [*last[key], *turn[key]]}
    else:
        turns.append(turn)


class Provider(ABC):
    """One wire protocol. Subclasses give the URL, headers, body and parser."""

    name: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    history_key: ClassVar[str] = "messages"  # the body's list of turns, encoded from each turn's kept JSON
    backoff_base: float = 1.0  # seconds; tests lower it on the instance

    def __init__(self, config: ProviderConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self._client = client
        self._owns_client = client is None
        self._noted: set[str] = set()
        self.wire = WireMemo()

    # -- what a provider module supplies ------------------------------------
    def tool_definitions(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        """``tools`` as this protocol declares them in a request (the gauge counts exactly these)."""
        return [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in tools
        ]

    def thinking_tokens(
        self, message: Content, settings: Settings, counter: TokenCounter, *, current_turn: bool
    ) -> int:
        """Tokens of ``message``'s thinking as this protocol's request carries it and its server reads it
        (the gauge's one question to the provider); by default, all visible thinking as stored."""
        return counter.count_thinking(message)

    @abstractmethod
    def build_request(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        """The JSON body for ``messages`` (already filtered by the reasoning policy), offering ``tools``."""

    def ready(self, messages: list[Content], settings: Settings) -> None:
        """Make ``messages``' forms and their JSON ahead of the request that will send them
        (while the user types): pressing Enter then encodes only what is new. Run on a
        thread, it needs ``settings`` no one changes meanwhile (a copy): a form is kept
        under the settings it was asked for."""
        with gc_paused(), contextlib.suppress(RequestError):  # refused settings: the request says so
            self.wire.encode(self.build_request(messages, settings), self.history_key)

    def retire(self) -> None:
        """Let go of what was kept for a next request: this provider makes none (a profile
        switch replaced it; a reply it is still streaming is not touched)."""
        self.wire = WireMemo()

    def url(self, settings: Settings) -> str:
        """The streaming endpoint (HTTP providers override; the demo has none)."""
        raise NotImplementedError

    def new_parser(self, settings: Settings) -> StreamParser:
        """A fresh parser for one response stream (HTTP providers override)."""
        raise NotImplementedError

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    def extra_headers(self, settings: Settings) -> dict[str, str]:
        """Headers that depend on settings (e.g. Anthropic's beta header while thinking)."""
        return {}

    def notices(self, settings: Settings) -> list[str]:
        """One-time remarks about how settings were applied (e.g. temperature dropped)."""
        return []

    def note_once(self, message: str) -> list[str]:
        """``[message]`` the first time this provider says it, ``[]`` after: a remark, not a nag."""
        if message in self._noted:
            return []
        self._noted.add(message)
        return [message]

    @property
    def base_url(self) -> str:
        return (self.config.base_url or self.default_base_url).rstrip("/")

    async def list_models(self) -> list[ModelInfo]:
        """The models the server offers (OpenAI-compatible ``GET /models``; others override)."""
        return await self.fetch_models(f"{self.base_url}/models", openai_models)

    async def fetch_models(
        self, url: str, parse: ModelPageParser, page_param: str | None = None, params: dict[str, str] | None = None
    ) -> list[ModelInfo]:
        key, missing = self.api_key()
        if missing is not None:
            raise ModelListError(missing.message)
        return await _fetch_pages(self.client, url, self.auth_headers(key), parse, page_param, params)

    # -- shared machinery -----------------------------------------------------
    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient()
        return self._client

    async def warm(self) -> None:
        """Make the HTTP client ahead of the first request, off the event loop: making it
        imports the connection pool and loads the CA bundle, and the pool's first wait for
        a connection loads anyio's asyncio backend; pauses worth taking before the user
        presses Enter rather than after."""
        if self._client is not None:
            return
        client = await asyncio.to_thread(_ready_client)
        if self._client is None:
            self._client = client
        else:  # a request made its own meanwhile
            await client.aclose()

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def api_key(self) -> tuple[str | None, StreamError | None]:
        env = key_env_name(self.config)
        if env is None:
            return None, None
        key = os.environ.get(env, "").strip()
        if not key:
            return None, StreamError(
                kind="missing_key",
                message=f"set the environment variable {env} (or name another with --api-key-env or the profile's api_key_env)",
            )
        return key, None

    async def stream(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one reply as events; never raises (cancellation aside), closes the response on exit."""
        key, missing = self.api_key()
        if missing is not None:
            yield missing
            return
        try:
            with gc_paused():  # a long session's forms and their JSON, made in bulk
                body = self.wire.encode(
                    self.build_request(messages, settings, system=system, tools=tools), self.history_key
                )
            url = self.url(settings)
        except RequestError as exc:
            yield StreamError(kind="bad_request", message=str(exc))
            return
        for note in self.notices(settings):
            yield Notice(note)
        headers = {
            "Accept": "text/event-stream",
            "Content-Type": "application/json",
            **self.extra_headers(settings),
            **self.auth_headers(key),
        }
        retries = settings.view.retries
        timeout = httpx.Timeout(CONNECT_TIMEOUT, read=settings.view.timeout)
        attempt = 0
        while True:
            outcome = _Outcome()
            # Events come in batches (one per network read): fewer generator hops on the hot path.
            async for batch in self._attempt(url, body, headers, timeout, key, settings, outcome):
                for event in batch:
                    yield event
            failure = outcome.failure
            if failure is None:
                return
            if not failure.retryable or attempt >= retries:
                yield failure
                return
            attempt += 1
            delay = outcome.retry_after if outcome.retry_after is not None else self._backoff(attempt)
            yield RetryWait(seconds=delay, attempt=attempt, max_attempts=retries, reason=failure.message)
            await asyncio.sleep(delay)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter, so many clients don't retry in lockstep."""
        ceiling = min(BACKOFF_CAP, self.backoff_base * 2.0 ** (attempt - 1))
        return ceiling * random.uniform(0.5, 1.0)

    async def _attempt(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        timeout: httpx.Timeout,
        key: str | None,
        settings: Settings,
        outcome: _Outcome,
    ) -> AsyncIterator[list[StreamEvent]]:
        """One HTTP exchange; a failure is left in ``outcome`` (retryable only before any content)."""
        env = key_env_name(self.config)
        try:
            async with self.client.stream("POST", url, content=body, headers=headers, timeout=timeout) as response:
                if response.status_code >= 400:
                    error = error_from_body(response.status_code, await response.aread(), key_env=env)
                    if error.retryable:
                        outcome.retry_after = retry_after_seconds(response.headers)
                    outcome.failure = _redacted(error, key)
                    return
                if "json" in response.headers.get("content-type", ""):
                    # Some servers answer an error with HTTP 200 and a JSON body.
                    message, code, _ = parse_error_body(await response.aread())
                    if message:
                        outcome.failure = _redacted(make_error(None, message, code), key)
                    else:
                        outcome.failure = StreamError(
                            kind="protocol", message="expected an event stream, got a JSON body"
                        )
                    return
                async for batch in self._read(response, key, settings, outcome):
                    yield batch
        except httpx.TimeoutException as exc:
            if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)):
                outcome.failure = StreamError(
                    kind="network",
                    message=redact(f"could not connect to {public_url(url)}: timed out", key),
                    retryable=True,
                )
            else:
                outcome.failure = StreamError(
                    kind="stalled", message=f"no data for {timeout.read:g} s before the reply began"
                )
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            retryable = isinstance(exc, httpx.ConnectError)
            outcome.failure = StreamError(
                kind="network",
                message=redact(f"could not connect to {public_url(url)}: {exc}", key),
                retryable=retryable,
            )

    async def _read(
        self, response: httpx.Response, key: str | None, settings: Settings, outcome: _Outcome
    ) -> AsyncIterator[list[StreamEvent]]:
        """Parse the 200 stream; a cut, a stall or a chunk that cannot be read ends it with what arrived flushed first.

        This is the stream boundary: everything that reads the body a server sent (SSE framing,
        the protocol's parser) runs inside it. A cut or a stall has its own line; any other
        exception (``ChunkShapeError`` for a shape the protocol does not allow, or a bug) becomes
        one ``protocol`` error line after the events before it, so nothing a server sends reaches
        the user as a traceback.
        """
        parser = self.new_parser(settings)
        feed = parser.feed
        malformed = 0
        started = False  # once content was yielded, an in-stream error is final (no retry)
        seen = False  # any event at all: a body with none (an HTML page, an empty 200) is no reply
        done = False  # the chat dialect's "[DONE]": the stream's own end, with or without a finish reason
        out: list[StreamEvent] = []  # read but not yet delivered
        try:
            async for sse_batch in aiter_events(response.aiter_bytes()):
                for name, data in sse_batch:
                    seen = True
                    if data == "[DONE]":
                        done = True
                        break
                    try:
                        events = feed(name, data)
                    except json.JSONDecodeError:
                        malformed += 1
                        continue
                    if events:
                        for i, event in enumerate(events):
                            if type(event) is StreamError:
                                out.extend(events[:i])
                                if started or out or not event.retryable:
                                    out.extend(parser.close())
                                yield out
                                retryable = event.retryable and not started and not out
                                outcome.failure = _redacted(event, key, retryable=retryable)
                                return
                        out.extend(events)
                else:
                    if out:
                        started = True
                        batch, out = out, []
                        yield batch
                    continue
                break  # [DONE]: the stream is complete
            closing = [*out, *parser.close()]
        except httpx.ReadTimeout:
            yield [*out, *_closed(parser)]
            outcome.failure = StreamError(kind="stalled", message="no data within the read timeout" + KEPT)
            return
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError) as exc:
            yield [*out, *_closed(parser)]
            outcome.failure = StreamError(
                kind="cut",
                message=redact(f"the connection was cut mid-stream ({exc.__class__.__name__}){KEPT}", key),
            )
            return
        except Exception as exc:  # the documented boundary (see the docstring)
            yield [*out, *_closed(parser)]
            outcome.failure = unreadable(exc, key)
            return
        if not seen:
            kind = response.headers.get("content-type", "") or "no content type"
            outcome.failure = StreamError(kind="protocol", message=f"expected an event stream, got none ({kind})")
            return
        if parser.finish_reason is None and not done:  # a proxy that closed the stream cleanly mid-reply
            yield closing
            outcome.failure = StreamError(kind="cut", message=UNFINISHED)
            return
        yield [
            *closing,
            Done(
                finish_reason=parser.finish_reason,
                malformed_lines=malformed,
                response_model=parser.response_model,
                reply_metadata=parser.reply_metadata(),
            ),
        ]


def _closed(parser: StreamParser) -> list[StreamEvent]:
    """What ``parser`` still holds, when the stream ends early; nothing if it cannot say (it failed itself)."""
    try:
        return parser.close()
    except Exception:  # part of the stream boundary: the failure that ended the stream is reported instead
        return []


def _ready_client() -> httpx.AsyncClient:
    """A client, with anyio's asyncio backend loaded as its first request would load it."""
    anyio.run(anyio.sleep, 0)
    return httpx.AsyncClient()


async def _fetch_pages(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    parse: ModelPageParser,
    page_param: str | None,
    params: dict[str, str] | None = None,
) -> list[ModelInfo]:
    """GET ``url`` (following the protocol's paging) and parse each page; one-line errors."""
    models: list[ModelInfo] = []
    query = dict(params or {})
    for _ in range(MAX_MODEL_PAGES):
        try:
            response = await client.get(url, headers=headers, params=query, timeout=MODELS_TIMEOUT)
        except httpx.HTTPError as exc:
            raise ModelListError(f"cannot reach {url}: {type(exc).__name__}") from None
        if response.status_code >= 400:
            message, _, _ = parse_error_body(response.content)
            raise ModelListError(f"{url} answered HTTP {response.status_code}: {message or 'no details'}")
        try:
            payload = loads(response.text)  # lone surrogate escapes in an id or name read as U+FFFD
        except ValueError:
            raise ModelListError(f"{url} did not answer JSON") from None
        page, token = parse(payload)
        models.extend(page)
        if token is None or page_param is None:
            break
        query[page_param] = token
    return sorted({m.id: m for m in models}.values(), key=lambda m: m.id)


class _Outcome:
    """How one attempt ended: the failure (if any) and the wait the server asked for."""

    __slots__ = ("failure", "retry_after")

    def __init__(self) -> None:
        self.failure: StreamError | None = None
        self.retry_after: float | None = None


def _redacted(error: StreamError, key: str | None, *, retryable: bool | None = None) -> StreamError:
    keep = error.retryable if retryable is None else retryable
    return StreamError(kind=error.kind, message=redact(error.message, key), status=error.status, retryable=keep)


__all__ = [
    "DEFAULT_KEY_ENV",
    "Provider",
    "ProviderConfig",
    "RequestError",
    "StreamParser",
    "key_env_name",
    "retry_after_seconds",
]
