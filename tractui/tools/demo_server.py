"""The offline demo's MCP server: the time, arithmetic, and reading a file under the working folder.

Run by tractui as ``python -m tractui.tools.demo_server`` over stdio; written with
the MCP SDK like any other server, so the demo exercises the real protocol.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

MAX_BYTES = 64_000

server = MCPServer("tractui-demo", instructions="Offline demo tools.", log_level="WARNING")
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def now() -> str:
    """The current date and time in UTC, as ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@server.tool(annotations=_READ_ONLY)
def add(a: int | float, b: int | float) -> int | float:
    """Add two numbers."""
    return a + b


@server.tool(annotations=_READ_ONLY)
def multiply(a: int | float, b: int | float) -> int | float:
    """Multiply two numbers."""
    return a * b


@server.tool(annotations=_READ_ONLY)
def read_file(path: str) -> str:
    """Read a UTF-8 text file under the working folder (at most 64 kB)."""
    root = Path.cwd().resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the working folder")
    if not target.is_file():
        raise ToolError(f"{path!r} is not a file")
    return target.read_bytes()[:MAX_BYTES].decode("utf-8", errors="replace")


if __name__ == "__main__":
    server.run()
