"""The toolbox a run starts with: config.toml's servers (or the built-in demo server for the demo),
the profile's choice among them, the consent in force, and where the servers' logs go."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection

from tractui.config.app_config import load_app_config, save_app_config
from tractui.config.mcp import McpConfig, McpServer
from tractui.config.paths import data_dir
from tractui.providers.config import DEFAULT_KEY_ENV, ProviderConfig, key_env_name
from tractui.tools.consent import ConsentPolicy
from tractui.tools.server import McpConnection
from tractui.tools.toolbox import Toolbox

DEMO_SERVER = "demo"


def demo_server() -> McpServer:
    """The shipped offline server, run with this interpreter (no PATH lookup, the same packages)."""
    return McpServer(command=sys.executable, args=["-m", "tractui.tools.demo_server"])


def build_toolbox(
    mcp: McpConfig,
    provider: ProviderConfig,
    servers: Collection[str] | None = None,
    *,
    allow: Collection[str] = (),
    allow_all: bool = False,
    on_change: Callable[[McpConnection], None] | None = None,
) -> Toolbox | None:
    """The session's toolbox running the servers of ``servers`` (all when ``None``) for ``provider``,
    or ``None`` when there is no server it could ever run.

    With no server configured, the shipped demo server is there for the demo
    provider only: a first run shows a whole tool loop offline, and so does a
    switch to the demo profile later (``Toolbox.use``).
    """
    configured = dict(mcp.servers)
    implicit = not configured
    if implicit:
        configured = {DEMO_SERVER: demo_server()}
    if not any(s.enabled for s in configured.values()):
        return None
    keys = {*DEFAULT_KEY_ENV.values(), *([name] if (name := key_env_name(provider)) else [])}
    consent = ConsentPolicy(
        saved={name: dict(server.allowed) for name, server in configured.items()},
        allow=allow,
        allow_all=allow_all,
        remember=remember_always if mcp.servers else None,
    )
    box = Toolbox(
        McpConfig(servers=configured),
        log_dir=data_dir() / "mcp",
        consent=consent,
        forbidden_env=frozenset(keys),
        on_change=on_change,
        only_provider="demo" if implicit else None,
    )
    box.use(servers, provider)
    return box


def remember_always(server: str, tool: str, fingerprint: str) -> None:
    """Save an "always allow" choice in config.toml, with the definition it was given for."""
    app = load_app_config()
    entry = app.mcp.servers.get(server)
    if entry is None:
        return
    entry.allowed[tool] = fingerprint
    save_app_config(app)
