"""``--allow-tool NAME`` checked against the tools the servers listed: one line for each name that
allows nothing, so a mistyped name is not silently a denial.

A name allows a tool when it is ``SERVER.TOOL``, the name the model is offered
(``SERVER__TOOL``) or the bare tool name (``ConsentPolicy.preapproved``); no
patterns. A name is only called wrong once the server it could belong to has
listed its tools: one that did not start is said to have not started instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection

from tractui.tools.names import SEPARATOR
from tractui.tools.server import McpConnection
from tractui.tools.toolbox import Toolbox

PATTERN = frozenset("*?[")
LISTED = 6  # tools named in a line before "…"
INSTEAD = "name each tool as SERVER.TOOL (or SERVER__TOOL, or the bare tool name), or use --allow-all-tools"


def unmatched_allows(toolbox: Toolbox | None, allow: Collection[str]) -> list[str]:
    """One line for each of ``allow`` that lets no tool run (checked against the servers' state now)."""
    lines: list[str] = []
    for name in dict.fromkeys(allow):
        problem = _problem(toolbox, name)
        if problem is not None:
            lines.append(" ".join(f"--allow-tool {name!r} {problem}".split()))  # on one line, however named
    return lines


def _forms(toolbox: Toolbox) -> dict[str, str]:
    """Every accepted spelling of every tool offered now -> its ``SERVER.TOOL``."""
    forms: dict[str, str] = {}
    for spec in toolbox.definitions():  # the names exactly as requests offer them
        pair = toolbox.names.pair_for(spec.name)
        if pair is None:
            continue
        server, tool = pair
        full = f"{server}.{tool}"
        for form in (full, spec.name, tool):
            forms.setdefault(form, full)
    return forms


def _problem(toolbox: Toolbox | None, name: str) -> str | None:
    connections = toolbox.connections if toolbox is not None else {}
    if toolbox is None or not connections:
        return "allows nothing: no MCP server is in use"
    forms = _forms(toolbox)
    if name in forms:
        return None
    owner = _owner(toolbox, name)
    connection = connections.get(owner[0]) if owner is not None else connections.get(name)
    listed = _tools_of(connection) if connection is not None else ""
    if PATTERN & set(name):
        return f"is a pattern, which --allow-tool does not read: {INSTEAD}{listed}"
    if name in connections:
        return f"names a server, not a tool: allow its tools as {name}.TOOL, or use --allow-all-tools{listed}"
    if owner is not None:
        server, tool = owner
        if connection is None:
            return f"matches no tool: the server {server} is not in use (disabled, or not in the profile's mcp_servers)"
        if connection.state != "ready":
            return f"cannot be checked: {_not_started(connection)}"
        if any(t.name == tool for t in connection.tools):
            return f"matches no tool offered: {server} does not offer {tool} (config.toml's tools filter)"
        return f"matches no tool: {server} has no tool {tool!r}{_guess(name, forms) or listed}"
    ready = [c.name for c in connections.values() if c.state == "ready"]
    unknown = "; ".join(_not_started(c) for c in connections.values() if c.state != "ready")
    if not ready:
        return f"cannot be checked: {unknown}"
    told = f"matches no tool of {', '.join(ready)}{_guess(name, forms)}"
    return f"{told}; {unknown}" if unknown else f"{told}; {INSTEAD}"


def _owner(toolbox: Toolbox, name: str) -> tuple[str, str] | None:
    """The configured server ``name`` is spelt under (``SERVER.TOOL`` or ``SERVER__TOOL``), and the tool part."""
    for server in sorted(toolbox.config.servers, key=len, reverse=True):  # the longest name that fits
        for joint in (".", SEPARATOR):
            if name.startswith(server + joint) and len(name) > len(server + joint):
                return server, name[len(server + joint) :]
    return None


def _not_started(connection: McpConnection) -> str:
    if connection.state == "starting":
        return f"the server {connection.name} has not started yet, so its tools are not known"
    reason = f" ({connection.reason})" if connection.reason else ""
    ended = "did not start" if connection.ready_after is None else connection.state
    return f"the server {connection.name} {ended}{reason}, so its tools are not known"


def _tools_of(connection: McpConnection) -> str:
    if connection.state != "ready":
        return f" ({_not_started(connection)})"
    names = [t.name for t in connection.tools]
    if not names:
        return f" ({connection.name} has no tools)"
    shown = ", ".join(names[:LISTED]) + (", …" if len(names) > LISTED else "")
    return f" ({connection.name} has {shown})"


def _guess(name: str, forms: dict[str, str]) -> str:
    close = difflib.get_close_matches(name, list(forms), n=1, cutoff=0.75)
    return f" (did you mean {forms[close[0]]}?)" if close else ""
