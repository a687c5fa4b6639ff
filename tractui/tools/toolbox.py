"""The MCP servers of a session and the tools they offer, as the conversation's tool loop uses them.

Servers start in the background (``start``); their tools are offered under
provider-safe names (``names``), less the ones the configuration filters out
or the user switched off. A call goes to the server behind its name and comes
back as the text the model receives; every failure is a result too (an
unknown tool, a server that died, a timeout), so each call id gets one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tractui.config.mcp import McpConfig
from tractui.core.content import ToolCallBlock
from tractui.core.events import ToolStatus
from tractui.core.surrogates import loads
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.config import ProviderConfig, key_env_name
from tractui.tools.consent import ConsentPolicy, ToolRequest, fingerprint
from tractui.tools.names import ToolNames
from tractui.tools.results import capped, result_text
from tractui.tools.server import McpConnection, leaf, not_ready, one_line


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    status: ToolStatus  # done | error | not_run | timeout | unknown (denied and cancelled are the loop's)
    text: str  # what the model receives
    duration: float = 0.0


class Toolbox:
    """Every server the session may run (``config``); the ones in use, as ``use`` chose, are ``connections``."""

    def __init__(
        self,
        config: McpConfig,
        *,
        log_dir: Path,
        consent: ConsentPolicy,
        forbidden_env: frozenset[str] = frozenset(),
        on_change: Callable[[McpConnection], None] | None = None,
        only_provider: str | None = None,
    ) -> None:
        self.config = config
        self.consent = consent
        self.on_change = on_change  # told of every server's state change; the app sets it once built
        self.only_provider = only_provider
        self.names = ToolNames()
        self.switched_off: set[tuple[str, str]] = set()
        self._log_dir = log_dir
        self._forbidden_env = forbidden_env  # grows with each provider's key variable (``use``)
        self.connections: dict[str, McpConnection] = {
            name: self._connection(name) for name, server in config.servers.items() if server.enabled
        }  # every enabled one, until a profile chooses
        self._running = False
        self._tasks: list[asyncio.Task[None]] = []  # each running server's owner
        self._stopping: list[asyncio.Task[None]] = []  # servers a switch left out, being stopped

    def _changed(self, connection: McpConnection) -> None:
        if self.on_change is not None:
            self.on_change(connection)

    def serves(self, provider: str) -> bool:
        return self.only_provider is None or provider == self.only_provider

    # -- lifecycle -----------------------------------------------------------
    def use(self, servers: Collection[str] | None, provider: ProviderConfig, *, restart_failed: bool = False) -> None:
        """Run the enabled servers a profile names (all when ``None``) for ``provider``'s model.

        Those not running yet start (once ``start`` has been called) and the others
        stop, so the session runs what a fresh start with this profile would run:
        a server a profile leaves out is not offered, and no longer runs either.
        With ``restart_failed`` (a profile loaded by name), one of them that failed
        or stopped starts again, as that fresh start would start it.
        A server started from now on never gets this provider's key variable.
        """
        if (env := key_env_name(provider)) is not None:
            self._forbidden_env |= {env}
        wanted = [
            name
            for name, server in self.config.servers.items()
            if server.enabled and (servers is None or name in servers) and self.serves(provider.provider)
        ]
        self._stopping = [t for t in self._stopping if not t.done()]
        for name in [n for n in self.connections if n not in wanted]:
            connection = self.connections.pop(name)
            connection.on_change = None  # its end is no failure to report
            connection.retired = "a profile switch"  # a call it cuts short says so
            if self._running:
                self._stopping.append(asyncio.create_task(connection.stop(), name=f"mcp-stop:{name}"))
        for name in wanted:
            if name not in self.connections:
                self.connections[name] = connection = self._connection(name)
                if self._running:
                    self._run(connection)
        self.connections = {name: self.connections[name] for name in wanted}  # in config.toml's order
        if restart_failed:
            for name in wanted:
                self.restart(name)

    def restart(self, name: str) -> bool:
        """Start again the server ``name`` if it is in use and failed or stopped; whether it did.

        A new connection takes its place (its tools are listed afresh); the
        user's choices (tools switched off, consent for the session) stay."""
        old = self.connections.get(name)
        if old is None or old.state not in ("failed", "stopped") or not self._running:
            return False
        old.on_change = None
        self.connections[name] = connection = self._connection(name)  # same key: the order stays
        self._run(connection)
        self._changed(connection)  # starting
        return True

    @property
    def restartable(self) -> list[str]:
        """The servers in use that failed or stopped: ``restart`` starts them again."""
        return [c.name for c in self.connections.values() if c.state in ("failed", "stopped")]

    def _connection(self, name: str) -> McpConnection:
        server = self.config.servers[name]
        return McpConnection(name, server, self._log_dir / f"{name}.log", self._forbidden_env, self._changed)

    def start(self) -> None:
        """Start every server in use in the background (each in its owner task)."""
        if self._running:
            return
        self._running = True
        for connection in self.connections.values():
            self._run(connection)

    def _run(self, connection: McpConnection) -> None:
        self._tasks = [t for t in self._tasks if not t.done()]
        self._tasks.append(asyncio.create_task(connection.run(), name=f"mcp:{connection.name}"))

    async def settled(self, timeout: float | None = None) -> bool:
        """Until every server is ready or failed (at most ``timeout`` s); whether all settled."""
        waits = [c.wait_settled() for c in self.connections.values()]
        if not waits:
            return True
        try:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
        except TimeoutError:
            return False
        return True

    @property
    def starting(self) -> list[str]:
        return [c.name for c in self.connections.values() if c.state == "starting"]

    async def aclose(self) -> None:
        """Stop every server at once (each shutdown is bounded); called before the app exits."""
        await asyncio.gather(*(c.stop() for c in self.connections.values()), *self._stopping)
        for task in self._tasks:
            if not task.done():
                task.cancel()
        self._tasks.clear()

    # -- what is offered -----------------------------------------------------
    def definitions(self) -> list[ToolSpec]:
        """The tools offered to the model now, under their provider names."""
        specs: list[ToolSpec] = []
        for connection in self.connections.values():
            if connection.state != "ready":
                continue
            for tool in connection.tools:
                if not self.offered(connection.name, tool.name):
                    continue
                specs.append(
                    ToolSpec(
                        name=self.names.name_for(connection.name, tool.name),
                        description=tool.description or "",
                        parameters=_object_schema(tool.input_schema),
                    )
                )
        return specs

    def offered(self, server: str, tool: str) -> bool:
        connection = self.connections.get(server)
        if connection is None:
            return False
        return connection.config.tools.offers(tool) and (server, tool) not in self.switched_off

    def request(self, call: ToolCallBlock) -> ToolRequest | None:
        """What the model asked for, as the user sees it; ``None`` for a name tractui never offered.

        A tool offered once and not now (switched off, its server failed or
        stopped by a profile switch) still makes a request: ``refusal`` says why
        it is not run."""
        pair = self.names.pair_for(call.name)
        if pair is None:
            return None
        server, name = pair
        connection = self.connections.get(server)
        tool = next((t for t in connection.tools if t.name == name), None) if connection else None
        if tool is None:
            return ToolRequest(call_id=call.id, name=call.name, server=server, tool=name, arguments=call.arguments)
        definition = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        annotations = tool.annotations
        return ToolRequest(
            call_id=call.id,
            name=call.name,
            server=server,
            tool=name,
            arguments=call.arguments,
            description=tool.description or "",
            fingerprint=fingerprint(definition),
            read_only=bool(annotations and annotations.read_only_hint),
        )

    # -- calling -------------------------------------------------------------
    def refusal(self, request: ToolRequest) -> ToolOutcome | None:
        """Why the call cannot be run now (before anyone is asked), or ``None``: its tool is not
        offered any more or its server is not ready (not run), or its arguments cannot be run
        (the model's error). The model reads why."""
        if (why := self.unavailable(request.server, request.tool)) is not None:
            return ToolOutcome("not_run", why)
        parsed = parsed_arguments(request.arguments)
        return ToolOutcome("error", parsed) if isinstance(parsed, str) else None

    def unavailable(self, server: str, tool: str) -> str | None:
        """Why ``tool`` of ``server``, offered at some point, cannot run now; ``None`` when it can."""
        connection = self.connections.get(server)
        if connection is None:  # only a profile switch takes a server out of use
            return f"not run: the MCP server {server} was stopped by a profile switch"
        if connection.state != "ready":
            return not_ready(connection)
        if (server, tool) in self.switched_off:
            return f"not run: the user switched the tool {server}.{tool} off (/tools)"
        if not connection.config.tools.offers(tool) or not any(t.name == tool for t in connection.tools):
            return f"not run: the MCP server {server} no longer offers a tool named {tool}"
        return None

    async def call(self, request: ToolRequest, *, counter: TokenCounter, max_tokens: int) -> ToolOutcome:
        """Run the call; any failure comes back as an error result. Cancelling the caller cancels the call."""
        started = time.monotonic()
        if (refused := self.refusal(request)) is not None:  # its server or tool changed while the user was asked
            return refused
        arguments = parsed_arguments(request.arguments)
        assert not isinstance(arguments, str)  # refusal() said why
        connection = self.connections[request.server]
        try:
            result = await connection.call(request.tool, arguments)
        except Exception as exc:  # protocol failures, timeouts, malformed results: one line for the model
            took = time.monotonic() - started
            if connection.retired:  # the SDK says "Connection closed": say who closed it
                why = f"not finished: the MCP server {request.server} was stopped by {connection.retired} while the call ran"
                return ToolOutcome("error", why, took)
            if (reason := connection.failed_under_call()) is not None:  # it exited or crashed under the call
                return ToolOutcome(
                    "error", f"not finished: the MCP server {request.server} exited while the call ran ({reason})", took
                )
            return _failure(leaf(exc), took)
        text, _ = capped(result_text(result), max_tokens, counter)
        return ToolOutcome("error" if result.is_error else "done", text, time.monotonic() - started)


def parsed_arguments(text: str) -> dict[str, Any] | str:
    """The call's arguments as the tool gets them (none: an empty object), or why they cannot be."""
    try:
        arguments = loads(text) if text.strip() else {}
    except ValueError as err:
        return f"the arguments are not JSON ({err}); nothing was run"
    if not isinstance(arguments, dict):
        return "the arguments must be a JSON object; nothing was run"
    return arguments


def _failure(exc: BaseException, duration: float) -> ToolOutcome:
    code = getattr(getattr(exc, "error", None), "code", getattr(exc, "code", None))
    if code == -32001 or isinstance(exc, TimeoutError):
        return ToolOutcome("timeout", f"the tool did not answer in time: {one_line(str(exc))}", duration)
    return ToolOutcome("error", f"the tool call failed: {type(exc).__name__}: {one_line(str(exc))}", duration)


def _object_schema(schema: Any) -> dict[str, Any]:
    """The input schema as the providers take it: a JSON object schema, whatever the server sent."""
    if isinstance(schema, dict) and schema.get("type") == "object":
        return dict(schema)
    return {"type": "object", "properties": {}}
