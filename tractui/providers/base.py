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
import email.utils
import os
import random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar, Protocol

import httpx
from httpx_sse import EventSource, SSEError

from tractui.core.content import Content
from tractui.core.events import (
    Done,
    Notice,
    RetryWait,
    StreamError,
    StreamEvent,
)
from tractui.core.settings import Settings
from tractui.providers.errors import error_from_body

DEFAULT_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}
RETRY_AFTER_CAP = 60.0  # seconds; a server asking for longer still gets retried after this
BACKOFF_CAP = 30.0
CONNECT_TIMEOUT = 15.0


@dataclass(frozen=True)
class ProviderConfig:
    """Which endpoint and model; ``api_key_env`` names the variable holding the key.

    ``api_key_env=None`` means the provider's default variable; ``""`` means
    the server needs no key (a local Ollama, llama.cpp or vLLM).
    """

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None


class RequestError(ValueError):
    """``build_request`` refuses settings the API would reject; one line for the user."""


class StreamParser(Protocol):
    """Turns one provider's SSE events into stream events.

    ``feed`` raises ``ValueError`` for an unparseable data line (the transport
    skips and counts it). ``close`` flushes what is pending (tag extractor,
    final usage) at the end of the stream or when it is cut.
    """

    finish_reason: str | None
    response_model: str | None

    def feed(self, event: str, data: str) -> list[StreamEvent]: ...

    def close(self) -> list[StreamEvent]: ...


_SECRETISH = re.compile(
    r"(?i)(bearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?|x-goog-api-key[\"']?\s*[:=]\s*[\"']?|[?&]key=|api[_-]?key[\"']?\s*[:=]\s*[\"']?)"
    r"([A-Za-z0-9._\-]{6,})"
)
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,})")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with API keys removed: the given secrets, every known key variable, and key-shaped tokens."""
    values = {s for s in secrets if s}
    for env in set(DEFAULT_KEY_ENV.values()):
        value = os.environ.get(env)
        if value:
            values.add(value)
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, "[REDACTED]")
    text = _SECRETISH.sub(lambda m: m.group(1) + "[REDACTED]", text)
    return _KEY_SHAPES.sub("[REDACTED]", text)


def key_env_name(config: ProviderConfig) -> str | None:
    """The variable to read the key from, or ``None`` when no key is needed."""
    if config.api_key_env is not None:
        return config.api_key_env or None
    return DEFAULT_KEY_ENV.get(config.provider)


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


class Provider(ABC):
    """One wire protocol. Subclasses give the URL, headers, body and parser."""

    name: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    backoff_base: float = 1.0  # seconds; tests lower it on the instance

    def __init__(self, config: ProviderConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self._client = client
        self._owns_client = client is None

    # -- what a provider module supplies ------------------------------------
    @abstractmethod
    def build_request(self, messages: list[Content], settings: Settings, *, system: str | None = None) -> dict:
        """The JSON body for ``messages`` (already filtered by the reasoning policy)."""

    @abstractmethod
    def url(self, settings: Settings) -> str:
        """The streaming endpoint."""

    @abstractmethod
    def new_parser(self, settings: Settings) -> StreamParser:
        """A fresh parser for one response stream."""

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    def extra_headers(self, settings: Settings) -> dict[str, str]:
        """Headers that depend on settings (e.g. Anthropic's beta header while thinking)."""
        return {}

    def notices(self, settings: Settings) -> list[str]:
        """One-time remarks about how settings were applied (e.g. temperature dropped)."""
        return []

    @property
    def base_url(self) -> str:
        return (self.config.base_url or self.default_base_url).rstrip("/")

    # -- shared machinery -----------------------------------------------------
    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient()
        return self._client

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
                message=f"no API key: set the environment variable {env} (or name another with --api-key-env or the profile's api_key_env)",
            )
        return key, None

    async def stream(
        self, messages: list[Content], settings: Settings, *, system: str | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one reply as events; never raises (cancellation aside), closes the response on exit."""
        key, missing = self.api_key()
        if missing is not None:
            yield missing
            return
        try:
            body = self.build_request(messages, settings, system=system)
            url = self.url(settings)
        except RequestError as exc:
            yield StreamError(kind="bad_request", message=str(exc))
            return
        for note in self.notices(settings):
            yield Notice(note)
        headers = {"Accept": "text/event-stream", **self.auth_headers(key), **self.extra_headers(settings)}
        retries = int(settings.get("retries"))
        read_timeout = float(settings.get("timeout"))
        timeout = httpx.Timeout(CONNECT_TIMEOUT, read=read_timeout)
        attempt = 0
        while True:
            failure: StreamError | None = None
            retry_after: float | None = None
            async for event in self._attempt(url, body, headers, timeout, key, settings):
                if isinstance(event, StreamError):
                    failure = event
                elif isinstance(event, _RetryAfter):
                    retry_after = event.seconds
                else:
                    yield event
            if failure is None:
                return
            if not failure.retryable or attempt >= retries:
                yield failure
                return
            attempt += 1
            delay = retry_after if retry_after is not None else self._backoff(attempt)
            yield RetryWait(seconds=delay, attempt=attempt, max_attempts=retries, reason=failure.message)
            await asyncio.sleep(delay)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter, so many clients don't retry in lockstep."""
        ceiling = min(BACKOFF_CAP, self.backoff_base * 2 ** (attempt - 1))
        return ceiling * random.uniform(0.5, 1.0)

    async def _attempt(
        self, url: str, body: dict, headers: dict[str, str], timeout: httpx.Timeout, key: str | None, settings: Settings
    ) -> AsyncIterator[StreamEvent | _RetryAfter]:
        """One HTTP exchange. Yields a retryable ``StreamError`` only before any content event."""
        env = key_env_name(self.config)
        try:
            async with self.client.stream("POST", url, json=body, headers=headers, timeout=timeout) as response:
                if response.status_code >= 400:
                    raw = await response.aread()
                    error = error_from_body(response.status_code, raw, key_env=env)
                    if error.retryable:
                        seconds = retry_after_seconds(response.headers)
                        if seconds is not None:
                            yield _RetryAfter(seconds)
                    yield _redacted(error, key)
                    return
                async for event in self._read(response, key, settings):
                    yield event
        except httpx.TimeoutException as exc:
            kind = "network" if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)) else "stalled"
            if kind == "stalled":
                yield StreamError(kind="stalled", message=f"no data for {timeout.read:g} s; the stream stalled")
            else:
                yield StreamError(kind="network", message=redact(f"could not connect to {url}: timed out", key), retryable=True)
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            retryable = isinstance(exc, httpx.ConnectError)
            yield StreamError(kind="network", message=redact(f"could not connect to {url}: {exc}", key), retryable=retryable)

    async def _read(self, response: httpx.Response, key: str | None, settings: Settings) -> AsyncIterator[StreamEvent]:
        """Parse the 200 stream; a cut or stall ends it with what arrived flushed first."""
        parser = self.new_parser(settings)
        malformed = 0
        started = False  # once content was yielded, an in-stream error is final (no retry)
        try:
            async for sse in EventSource(response).aiter_sse():
                data = sse.data
                if data == "[DONE]":
                    break
                if not data:
                    continue
                try:
                    events = parser.feed(sse.event, data)
                except ValueError:
                    malformed += 1
                    continue
                for event in events:
                    if isinstance(event, StreamError):
                        if started or not event.retryable:
                            for tail in parser.close():
                                yield tail
                        if started and event.retryable:
                            event = StreamError(kind=event.kind, message=event.message, status=event.status)
                        yield _redacted(event, key)
                        return
                    started = True
                    yield event
        except httpx.ReadTimeout:
            for tail in parser.close():
                yield tail
            yield StreamError(kind="stalled", message="the stream stalled: no data within the read timeout; what arrived is kept")
            return
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError) as exc:
            for tail in parser.close():
                yield tail
            yield StreamError(kind="cut", message=redact(f"the connection was cut mid-stream ({exc.__class__.__name__}); what arrived is kept", key))
            return
        except SSEError as exc:
            yield StreamError(kind="protocol", message=f"not an event stream: {exc}")
            return
        for tail in parser.close():
            yield tail
        yield Done(finish_reason=parser.finish_reason, malformed_lines=malformed, response_model=parser.response_model)


@dataclass(frozen=True, slots=True)
class _RetryAfter:
    """Internal: the server named a wait before retrying."""

    seconds: float


def _redacted(error: StreamError, key: str | None) -> StreamError:
    return StreamError(kind=error.kind, message=redact(error.message, key), status=error.status, retryable=error.retryable)


__all__ = [
    "DEFAULT_KEY_ENV",
    "Provider",
    "ProviderConfig",
    "RequestError",
    "StreamParser",
    "key_env_name",
    "redact",
    "retry_after_seconds",
]
