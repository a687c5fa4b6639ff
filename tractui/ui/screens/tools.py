"""``/tools``: each MCP server (starting, ready or failed, with the reason) and its tools.

A tool is switched off or on with Space or a click: the next request offers
the tools left on. A failed server's tools are listed as unavailable, and
``r`` starts the failed (or stopped) servers again. Names and descriptions
come from the servers: sanitised and drawn without markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from tractui.tools.server import McpConnection
from tractui.tools.toolbox import Toolbox
from tractui.ui.format import duration
from tractui.ui.sanitize import sanitize
from tractui.ui.screens.overlay import ReadingOverlay
from tractui.ui.widgets.tool_call import one_line

DESCRIPTION = 70  # characters of a tool's description on its line


def server_line(connection: McpConnection) -> str:
    match connection.state:
        case "ready":
            took = connection.ready_after
            after = "" if took is None else f" in {took:.1f}s" if took < 10 else f" in {duration(took)}"
            plural = "" if len(connection.tools) == 1 else "s"
            state = f"ready{after} · {len(connection.tools)} tool{plural}"
        case "failed":
            state = f"failed: {connection.reason}"
        case _:
            state = connection.state
    return sanitize(f"{connection.name}  {state}")


class ToolsScreen(ReadingOverlay):
    """Its keys: Space, ``r``, the arrows, Esc; any other character closes it and is typed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("r", "restart", "Restart the failed servers"),
    ]

    def __init__(
        self,
        toolbox: Toolbox,
        *,
        enabled: bool = True,
        changed: Callable[[], None] = lambda: None,
        keep: Callable[[events.Key], None] | None = None,
    ) -> None:
        """``changed``: told when a tool is switched off or on (the gauge counts what the next request
        offers); ``keep``: takes a character typed over it (the prompt's)."""
        super().__init__(keep)
        self.toolbox = toolbox
        self.enabled = enabled
        self._changed = changed

    def compose(self) -> ComposeResult:
        with Vertical(id="tools-box", classes="overlay-box"):
            yield Static("MCP servers", id="tools-title")
            yield Static(id="tools-servers", markup=False)
            yield SelectionList[tuple[str, str]](id="tools-list")
            yield Static(self._hint(), id="tools-hint", classes="overlay-hint", markup=False)

    def _hint(self) -> str:
        off = "" if self.enabled else "tools are off for this session (/set tools.enabled true) · "
        failed = self.toolbox.restartable
        restart = f"r restarts {', '.join(failed)} · " if failed else ""
        return f"{off}Space switches a tool off or on · {restart}Esc to close · logs: the data folder's mcp/"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``r`` only while a server can be restarted (shown disabled otherwise)."""
        if action == "restart" and not self.toolbox.restartable:
            return None
        return True

    def action_restart(self) -> None:
        """Start the failed (or stopped) servers again; their tools come back once they are ready."""
        for name in self.toolbox.restartable:
            self.toolbox.restart(name)
        self.refresh_servers()

    def on_mount(self) -> None:
        self.refresh_servers()
        self.query_one("#tools-list").focus()

    def refresh_servers(self) -> None:
        """Redraw after a server changed state; what the user switched stays as it is."""
        box = self.toolbox
        lines = [server_line(c) for c in box.connections.values()]
        self.query_one("#tools-servers", Static).update("\n".join(lines) or "no servers")
        self.query_one("#tools-hint", Static).update(self._hint())
        self.refresh_bindings()
        listing = self.query_one("#tools-list", SelectionList)
        highlighted = listing.highlighted
        listing.clear_options()
        for connection in box.connections.values():
            ready = connection.state == "ready"
            for tool in connection.tools:
                configured = connection.config.tools.offers(tool.name)
                label = Text(sanitize(f"{connection.name}.{tool.name}"), style="bold")
                if not configured:
                    label.append("  excluded in config.toml", style="dim")
                elif not ready:  # a failed server's tools are kept to be named, and offered to no one
                    label.append(sanitize(f"  unavailable: {connection.name} {connection.state}"), style="dim")
                elif tool.description:
                    label.append(sanitize(f"  {one_line(tool.description, DESCRIPTION)}"), style="dim")
                value = (connection.name, tool.name)
                on = box.offered(*value) and ready
                listing.add_option(Selection(label, value, on, disabled=not (configured and ready)))
        if highlighted is not None and highlighted < listing.option_count:
            listing.highlighted = highlighted

    def on_selection_list_selection_toggled(self, event: SelectionList.SelectionToggled[tuple[str, str]]) -> None:
        server, tool = event.selection.value
        pair = (server, tool)
        if pair in self.toolbox.switched_off:
            self.toolbox.switched_off.discard(pair)
        else:
            self.toolbox.switched_off.add(pair)
        self._changed()
