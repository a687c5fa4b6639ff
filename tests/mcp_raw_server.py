"""A stdio MCP server written without the SDK, to send what the SDK would not: JSON-RPC lines
with lone surrogate escapes, and lines on stdout that are not JSON-RPC at all."""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "listing", "description": "Files, one named in Latin-1 (\udce9)", "inputSchema": {"type": "object"}},
    {"name": "chatty", "description": "Prints a line that is not JSON first", "inputSchema": {"type": "object"}},
]


def send(message: dict[str, object]) -> None:
    # ensure_ascii (json's default) writes a lone surrogate as the escape "\udce9", as a Python
    # server listing a file name that is not UTF-8 (os.listdir's surrogateescape) does
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if method == "initialize":
        version = request["params"]["protocolVersion"]
        info = {"name": "raw", "version": "1"}
        send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            }
        )
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
    elif method == "tools/call" and request["params"]["name"] == "listing":
        send(
            {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "caf\udce9.txt notes.md"}]}}
        )
    elif method == "tools/call":
        sys.stdout.write("starting the chatty tool...\n")
        send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "chatted"}]}})
