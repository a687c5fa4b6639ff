"""One MCP server: started, listed, called and stopped by the task that owns it.

The SDK's client opens task groups and cancel scopes that must be entered and
left by one task, so each server has an owner task that connects, lists the
tools, holds the session until asked to stop (or the server dies), and
leaves. Calls come from any task once it is connected; cancelling the caller
cancels the call (the SDK tells the server with ``notifications/cancelled``).

The SDK is imported lazily (it costs over half a second), and only by this
module: nothing is paid when no server is configured. The server's stderr
goes to a log file, never to the terminal; its environment is the SDK's
minimal one plus the configured ``env``, never tractui's API keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tractui.config.mcp import CONNECT_TIMEOUT, McpServer
from tractui.errors import UserError

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult, Tool

State = Literal["starting", "ready", "failed", "stopped"]
MAX_PAGES = 50  # a server that paginates forever is cut off here
STOP_WAIT = 6.5  # the SDK's own shutdown escalates over at most 2 + 2 + 2 s
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ServerConfigError(UserError):
    """A server whose configuration cannot be used as it is (a key variable in its env, a missing folder)."""


def expand(value: str, forbidden: frozenset[str], where: str) -> str:
    """``${VAR}`` references in a configured value, read from tractui's environment now.

    A reference to a variable holding an API key of tractui's is refused: a
    server's environment and the headers sent to it never carry the keys
    tractui talks to models with.
    """

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in forbidden:
            raise ServerConfigError(f"{where} names ${{{name}}}, an API key variable; servers never get tractui's keys")
        return os.environ.get(name, "")

    return _REFERENCE.sub(one, value)


def leaf(exc: BaseException) -> BaseException:
    """The first plain exception inside the SDK's (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def load_sdk() -> None:
    """Import the SDK off the event loop (it would freeze the screen for half a second)."""
    await asyncio.to_thread(_import_sdk)


def _import_sdk() -> None:
    import jsonschema  # type: ignore[import-untyped]  # noqa: F401  # the SDK imports it at the first call of a tool with an output schema
    import mcp  # noqa: F401


@dataclass
class McpConnection:
    """One configured server and its owner task's view of it."""

    name: str
    config: McpServer
    log_path: Path
    forbidden_env: frozenset[str] = frozenset()
    on_change: Callable[[McpConnection], None] | None = None
    state: State = "starting"
    reason: str = ""
    tools: list[Tool] = field(default_factory=list)
    started_at: float = 0.0
    ready_after: float | None = None
    retired: str = ""  # why tractui stopped it while in use ("a profile switch"), for a call it cut short
    _client: Client | None = None
    _closed: Any = None  # the server's output ended (anyio.Event), set before the SDK fails its calls
    _heard: str = ""  # the last line the server wrote on stdout that was not JSON-RPC (a usage text, a banner)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _done: asyncio.Event = field(default_factory=asyncio.Event)
    _relist: asyncio.Event = field(default_factory=asyncio.Event)

    # -- the owner task ----------------------------------------------------
    async def run(self) -> None:
        """Connect, list the tools, hold the session until ``stop()`` or the server goes away."""
        self.started_at = time.monotonic()
        try:
            await load_sdk()
            await self._serve()
        except Exception as exc:  # the SDK's failures come in many shapes: one line each
            self._fail(_describe(leaf(exc), self))
        finally:
            self._client = None
            if self.state not in ("failed",):
                self._set("stopped")
            self._done.set()

    async def _serve(self) -> None:
        import anyio
        from mcp import Client
        from mcp.types import Implementation

        from tractui import __version__

        _quiet_sdk()

        closed = self._closed = anyio.Event()
        self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.log_path, "a", encoding="utf-8") as errlog, anyio.fail_after(CONNECT_TIMEOUT) as scope:
            errlog.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} tractui starts {self.name}\n")
            errlog.flush()
            async with Client(
                _Watched(self._transport(errlog), closed, errlog, self._hear),
                cache=None,
                client_info=Implementation(name="tractui", version=__version__),
                message_handler=self._on_message,
            ) as client:
                scope.deadline = math.inf  # connected: from now on only calls have deadlines
                self.tools = await _list_all(client)
                self._client = client
                self.ready_after = time.monotonic() - self.started_at
                self._set("ready")
                await self._hold(client, closed)
                self._client = None
                if closed.is_set() and not self._stop.is_set():
                    self._fail(self.last_words() or "the server exited")  # unless a call said so first

    def _transport(self, errlog: Any) -> Any:
        from mcp import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        config = self.config
        if config.command is not None:
            if config.cwd is not None and not Path(config.cwd).expanduser().is_dir():
                raise ServerConfigError(f"cwd {config.cwd} is not a folder")
            env = {k: expand(v, self.forbidden_env, f"env {k}") for k, v in config.env.items()}
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=env,
                cwd=str(Path(config.cwd).expanduser()) if config.cwd else None,
            )
            return stdio_client(params, errlog=errlog)
        import httpx2

        headers = {k: expand(v, self.forbidden_env, f"header {k}") for k, v in config.headers.items()}
        return _http(streamable_http_client, str(config.url), httpx2.AsyncClient(headers=headers))

    async def _hold(self, client: Client, closed: Any) -> None:
        """Wait for stop or the server's end; re-list the tools when the server says they changed."""
        stop = asyncio.ensure_future(self._stop.wait())
        gone = asyncio.ensure_future(closed.wait())
        try:
            while True:
                relist = asyncio.ensure_future(self._relist.wait())
                done, _ = await asyncio.wait({stop, gone, relist}, return_when=asyncio.FIRST_COMPLETED)
                if relist in done and stop not in done and gone not in done:
                    self._relist.clear()
                    self.tools = await _list_all(client)
                    self._set("ready")
                    continue
                relist.cancel()
                return
        finally:
            stop.cancel()
            gone.cancel()

    async def _on_message(self, message: Any) -> None:
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._relist.set()

    def _set(self, state: State) -> None:
        self.state = state
        if self.on_change is not None:
            self.on_change(self)

    def _fail(self, reason: str) -> None:
        """The first word on a failure stands: a call the server died under may say it before the owner task."""
        if self.state == "failed":
            return
        self.reason = one_line(reason)
        self._set("failed")

    def _hear(self, line: str) -> None:
        if line.strip():
            self._heard = line

    def last_words(self) -> str:
        """The last thing the server said, usually why it stopped: on stderr (its log; tractui's own
        notes there are not its words), else a line on stdout that was not JSON-RPC."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(max(0, os.path.getsize(self.log_path) - 4096))
                lines = [ln for ln in log.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        except OSError:
            lines = []
        for line in reversed(lines):
            if line.startswith("--- "):  # this run's start: what comes before it is an earlier run's
                break
            if not line.startswith("tractui: "):
                return line
        return one_line(self._heard)

    def exited(self) -> bool:
        """Whether the server's process ended its output (it exited or crashed)."""
        return self.config.command is not None and self._closed is not None and self._closed.is_set()

    def failed_under_call(self) -> str | None:
        """Why the server's output ended (it exited or crashed), once a call failed; ``None`` while it
        is there. The output's end is seen before the SDK fails the calls it was waiting on, and the
        server is marked failed at once: the caller goes on to its next call or request before the
        owner task notices."""
        if self._closed is None or not self._closed.is_set():
            return None
        reason = self.last_words() or "the server exited"
        if not self._stop.is_set():  # stopped by tractui: its owner says so
            self._fail(reason)
        return one_line(reason)

    # -- from any task -----------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``tool``; raises on a protocol failure or timeout (the caller turns it into a result)."""
        client = self._client
        if client is None:
            raise ConnectionError(not_ready(self))
        return await client.call_tool(tool, arguments, read_timeout_seconds=self.config.timeout)

    async def stop(self) -> None:
        """Ask the owner to leave the session, and wait (bounded) for the SDK to stop the process."""
        self._stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._done.wait(), STOP_WAIT)

    async def wait_settled(self) -> None:
        """Until the server is ready, failed or stopped."""
        while self.state == "starting" and not self._done.is_set():
            await asyncio.sleep(0.02)


def not_ready(connection: McpConnection) -> str:
    """Why a call to ``connection`` is not run now, as the model reads it."""
    name = connection.name
    match connection.state:
        case "failed":
            return f"not run: the MCP server {name} failed" + (f" ({connection.reason})" if connection.reason else "")
        case "stopped":
            return f"not run: the MCP server {name} is stopped"
        case "starting":
            return f"not run: the MCP server {name} is still starting"
        case _:
            return f"not run: the MCP server {name} is not connected"


def _quiet_sdk() -> None:
    """Give the SDK's logger a handler that drops: with none, Python prints what it logs on stderr
    (a traceback for each line it could not parse, across print mode's output). What it could
    not parse goes to the server's log instead (``_WatchedRead``)."""
    logger = logging.getLogger("mcp")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


async def _list_all(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _describe(exc: BaseException, connection: McpConnection) -> str:
    """A failure to start or a lost server as one line, with the server's last words when useful."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {CONNECT_TIMEOUT:g} s"
    if isinstance(exc, ServerConfigError):
        return str(exc)
    if isinstance(exc, FileNotFoundError) and connection.config.command:
        return f"command not found: {connection.config.command}"
    said = connection.last_words()
    if connection.exited():  # the SDK says "Connection closed", with its parse error of a blank line in the log
        gone = "the server exited" if connection.ready_after is not None else "the server exited before it answered"
        return f"{gone} ({said})" if said else gone
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"{text} ({said})" if said else text


@contextlib.asynccontextmanager
async def _http(open_client: Callable[..., Any], url: str, http: Any) -> AsyncIterator[Any]:
    """A streamable HTTP transport over an HTTP client tractui owns (it carries the headers)."""
    async with http, open_client(url, http_client=http) as streams:
        yield streams


class _Watched:
    """The transport, with its read stream watched: the server's end is noticed at once, not
    at the next call; and what the SDK could not read is mended or logged (``_WatchedRead``)."""

    def __init__(self, transport: Any, closed: Any, errlog: Any, hear: Callable[[str], None]) -> None:
        self._transport = transport
        self._closed = closed
        self._errlog = errlog
        self._hear = hear

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._transport.__aenter__()
        return _WatchedRead(read, self._closed, self._errlog, self._hear), write

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._transport.__aexit__(*exc)


class _WatchedRead:
    """The SDK's read stream. A line it could not parse comes as an exception (and the SDK
    ignores it: a call answered by that line waits for its timeout). One whose only fault is a
    lone surrogate escape (``"\\udce9"``: what Python's ``json.dumps`` writes for a file name
    that is not UTF-8) is read again with each replaced by U+FFFD; any other goes to the
    server's log as one line, and a line that is not JSON is heard as the server's words."""

    def __init__(self, inner: Any, closed: Any, errlog: Any, hear: Callable[[str], None]) -> None:
        self._inner = inner
        self._closed = closed
        self._errlog = errlog
        self._hear = hear

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._closed.set()
            raise
        return self._mended(item) if isinstance(item, Exception) else item

    def _mended(self, failure: Exception) -> Any:
        from mcp import types
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        from tractui.core.surrogates import loads

        errors = failure.errors() if isinstance(failure, ValidationError) else []
        line = errors[0].get("input") if len(errors) == 1 and errors[0]["type"] == "json_invalid" else None
        if isinstance(line, str) and ("\\ud" in line or "\\uD" in line):
            with contextlib.suppress(ValueError):
                return SessionMessage(types.jsonrpc_message_adapter.validate_python(loads(line), by_name=False))
        if isinstance(line, str):
            self._hear(line)
        with contextlib.suppress(OSError, ValueError):
            self._errlog.write(f"tractui: a message from the server could not be read: {one_line(str(failure))}\n")
            self._errlog.flush()
        return failure

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
