"""``tractui mcp list | import FILE``: the MCP servers from the shell.

``list`` starts each configured server (as the app would), shows whether it
came up — with the reason when it did not — and its tools; ``import`` reads
another client's ``mcpServers`` JSON into ``config.toml``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from tractui.cli.terminal import Terminal, one_line
from tractui.config.app_config import app_config_path, load_app_config, save_app_config
from tractui.config.mcp import import_mcp_servers
from tractui.core.surrogates import surrogate_path
from tractui.errors import ProfileError, UsageError, UserError
from tractui.providers.config import ProviderConfig
from tractui.tools.setup import build_toolbox
from tractui.tools.toolbox import Toolbox

SETTLE = 60.0  # seconds to wait for every server to come up (or fail)


def run_mcp_command(args: argparse.Namespace, *, out: Terminal, err: Terminal) -> int:
    try:
        match args.action:
            case "list":
                return asyncio.run(_list(out))
            case "import":
                return _import(Path(args.file), replace=args.replace, out=out)
            case _:
                raise UsageError("mcp: list or import FILE")
    except UserError as exc:
        err.write(f"tractui: {exc}\n")
        return 2


async def _list(out: Terminal) -> int:
    app = load_app_config()
    if not app.mcp.servers:
        out.write(
            f"no MCP servers configured (add [mcp.servers.NAME] to {app_config_path()}, or `tractui mcp import`)\n"
        )
        return 0
    box = build_toolbox(app.mcp, ProviderConfig("demo", "demo"))
    for name, server in app.mcp.servers.items():
        if not server.enabled:
            out.write(f"{name}  disabled\n")
    if box is None:
        return 0
    box.start()
    await box.settled(SETTLE)
    ready = all(c.state == "ready" for c in box.connections.values())  # before closing stops them all
    try:
        _print(box, out)
    finally:
        await box.aclose()
    return 0 if ready else 1


def _print(box: Toolbox, out: Terminal) -> None:
    for name, connection in box.connections.items():
        config = connection.config
        where = f"{config.command} {' '.join(config.args)}".strip() if config.command else str(config.url)
        state = connection.state if connection.state != "starting" else f"still starting after {SETTLE:g} s"
        reason = f": {one_line(connection.reason)}" if connection.reason else ""
        out.write(f"{name}  {state}{reason}  ({one_line(where)})\n")
        for tool in connection.tools:
            mark = "  " if box.offered(name, tool.name) else "- "
            allowed = "  [always allowed]" if config.allowed.get(tool.name) else ""
            summary = " ".join((tool.description or "").split())[:90]
            out.write(f"  {mark}{one_line(box.names.name_for(name, tool.name))}  {summary}{allowed}\n")


def _import(path: Path, *, replace: bool, out: Terminal) -> int:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ProfileError(f"{path} is not JSON: {exc}") from None
    where = surrogate_path(data)
    if where is not None:
        raise ProfileError(
            f"cannot import {path}: {'.'.join(where)}: holds a lone surrogate escape (\\ud800–\\udfff), "
            "which is not text"
        )
    servers, notes = import_mcp_servers(data)
    app = load_app_config()
    added = []
    for name, server in servers.items():
        if name in app.mcp.servers and not replace:
            notes.append(f"{name}: already configured, kept (--replace to overwrite)")
            continue
        app.mcp.servers[name] = server
        added.append(name)
    if added:
        save_app_config(app)
    for note in notes:
        out.write(f"note: {note}\n")
    out.write(f"imported {len(added)} server{'s' if len(added) != 1 else ''} into {app_config_path()}")
    out.write(f": {', '.join(added)}\n" if added else "\n")
    return 0
