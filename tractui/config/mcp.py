"""MCP servers in ``config.toml``: ``[mcp.servers.NAME]``, and the ``mcpServers`` JSON other clients use.

A server is a command to run (``command``, ``args``, ``env``, ``cwd``) or a URL
to reach over streamable HTTP (``url``, ``headers``). ``env`` and ``headers``
values may name environment variables as ``${VAR}``; they are read when the
server starts and never written back. ``allowed`` records the tools the user
chose to always allow, each with the fingerprint of the definition approved.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tractui.errors import ProfileError

_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
DEFAULT_TIMEOUT = 60.0  # seconds a tool call may take before it counts as timed out
CONNECT_TIMEOUT = 30.0


class ToolFilter(BaseModel):
    """Which of a server's tools are offered: ``include`` (all when absent) minus ``exclude``."""

    model_config = ConfigDict(extra="forbid")

    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)

    def offers(self, tool: str) -> bool:
        return (self.include is None or tool in self.include) and tool not in self.exclude


class McpServer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, le=3600)
    enabled: bool = True
    tools: ToolFilter = Field(default_factory=ToolFilter)
    allowed: dict[str, str] = Field(default_factory=dict)  # tool name -> fingerprint approved "always"

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program to run) or url (a streamable HTTP server)")
        if self.url is not None and not re.match(r"^https?://", self.url):
            raise ValueError(f"url must start with http:// or https://, got '{self.url}'")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: dict[str, McpServer] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServer]) -> dict[str, McpServer]:
        for name in servers:
            if not _SERVER_NAME.match(name):
                raise ValueError(f"server name '{name}': letters, digits, '-' and '_', at most 32")
        return servers


_STDIO_TYPES = {"stdio", "local"}
_HTTP_TYPES = {"http", "streamable-http", "streamablehttp", "streamable_http", "remote"}


def server_name(raw: str) -> str:
    """A key from another client's config as a server name tractui accepts."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-_")[:32]
    return name or "server"


def import_mcp_servers(data: Any) -> tuple[dict[str, McpServer], list[str]]:
    """Servers from the ``mcpServers`` JSON shape (Claude Desktop, Cursor, Cline, …), VS Code's
    ``servers`` and opencode's ``mcp``; and one note per thing not imported.

    Auto-approval lists (``alwaysAllow``, ``autoApprove``, ``trust``) are consent, which
    tractui asks for itself: they are reported, not imported.
    """
    if not isinstance(data, dict):
        raise ProfileError("not an MCP configuration: expected a JSON object")
    table = next((data[k] for k in ("mcpServers", "servers", "mcp") if isinstance(data.get(k), dict)), None)
    if table is None:
        raise ProfileError("no MCP servers found: expected an 'mcpServers', 'servers' or 'mcp' object")
    servers: dict[str, McpServer] = {}
    notes: list[str] = []
    for raw_name, entry in table.items():
        name = server_name(str(raw_name))
        if not isinstance(entry, dict):
            notes.append(f"{raw_name}: not an object, skipped")
            continue
        try:
            servers[name] = _one(entry, notes, str(raw_name))
        except (ValueError, TypeError) as err:
            notes.append(f"{raw_name}: {str(err).splitlines()[0]}, skipped")
    return servers, notes


def _one(entry: dict[str, Any], notes: list[str], label: str) -> McpServer:
    kind = str(entry.get("type", "")).lower()
    fields: dict[str, Any] = {}
    command: Any = entry.get("command")
    if isinstance(command, list):  # opencode: the whole command line as one array
        command, args = (command[0] if command else None), [str(a) for a in command[1:]]
    else:
        args = [str(a) for a in entry.get("args", []) or []]
    url = entry.get("url") or entry.get("httpUrl") or entry.get("serverUrl")
    if kind == "sse":
        raise ValueError("an SSE server (the deprecated transport); tractui speaks streamable HTTP")
    if command and kind not in _HTTP_TYPES:
        fields.update(command=str(command), args=args)
        env = entry.get("env") or entry.get("environment") or {}
        fields["env"] = {str(k): str(v) for k, v in dict(env).items()}
        if entry.get("cwd"):
            fields["cwd"] = str(entry["cwd"])
    elif url and kind not in _STDIO_TYPES:
        fields["url"] = str(url)
        fields["headers"] = {str(k): str(v) for k, v in dict(entry.get("headers") or {}).items()}
    else:
        raise ValueError("neither a command nor a URL")
    if entry.get("disabled") is True or entry.get("enabled") is False:
        fields["enabled"] = False
    include = entry.get("includeTools")
    exclude = entry.get("excludeTools") or entry.get("disabledTools")
    if include is not None or exclude is not None:
        fields["tools"] = ToolFilter(
            include=[str(t) for t in include] if include is not None else None,
            exclude=[str(t) for t in exclude or []],
        )
    for key in ("alwaysAllow", "autoApprove", "trust"):
        if entry.get(key):
            notes.append(f"{label}: '{key}' not imported: tractui asks before a tool runs (/tools)")
    return McpServer(**fields)
