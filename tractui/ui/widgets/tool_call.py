"""A tool call inside a reply: what was called, with what, and what came back.

One line while folded (name, arguments, status, the result's first line);
a click or Ctrl+O opens the whole arguments and result. Everything shown
came from the model or a server: it is sanitised by the caller and drawn
without markup.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.widgets import Static

from tractui.core.events import ToolStatus
from tractui.core.surrogates import loads
from tractui.ui.format import duration
from tractui.ui.widgets.column import Column

PREVIEW = 60  # characters of the arguments and of the result shown on the folded line

_STATUS: dict[ToolStatus, str] = {
    "waiting": "waiting for your consent",
    "running": "running…",
    "done": "✓",
    "error": "✗ failed",
    "denied": "⊘ denied",
    "cancelled": "⊘ cancelled",
    "not_run": "⊘ not run",
    "timeout": "✗ timed out",
    "unknown": "✗ not offered",
    "interrupted": "✗ interrupted",
}


def as_status(value: object, fallback: ToolStatus) -> ToolStatus:
    """A status read back from the store, which may hold anything."""
    for status in _STATUS:
        if value == status:
            return status
    return fallback


def tool_label(server: str, tool: str) -> str:
    """A call's name as the user sees it, ``server.tool``, whatever the call's state: not the
    provider-safe name the model is offered (``server__tool``, sometimes shortened with a hash)."""
    return f"{server}.{tool}"


def one_line(text: str, limit: int = PREVIEW) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def pretty_arguments(arguments: str) -> str:
    """The arguments as indented JSON when they parse, else exactly as the model wrote them."""
    try:
        return json.dumps(loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


class ToolCallView(Column):
    """One call; ``update_state`` moves it through waiting, running and its result."""

    def __init__(
        self, name: str, *, arguments: str = "", call_id: str = "", clock: Callable[[], float] | None = None
    ) -> None:
        super().__init__(classes="tool-call")
        self._clock = clock  # live calls: how long one has been running is shown, once a second
        self._running_since: float | None = None
        self.call_id = call_id
        self.label = name
        self.arguments = arguments
        self.status: ToolStatus | None = None
        self.result = ""
        self.took = 0.0
        self.open = False

    def compose(self) -> ComposeResult:
        yield Static(self._header(), markup=False, classes="tool-header")
        yield Static(self._details(), markup=False, classes="tool-details")

    def _header(self) -> str:
        arrow = "▾" if self.open else "▸"
        args = one_line(self.arguments)
        parts = [f"{arrow} ⚙ {self.label}" + (f" {args}" if args else "")]
        if self.status is not None:
            state = _STATUS[self.status]
            if self.status not in ("waiting", "running") and self.took:
                state += f" {duration(self.took)}"
            elif self.status == "running" and self._clock is not None and self._running_since is not None:
                state = f"running {duration(self._clock() - self._running_since)}"
            parts.append(state)
        if self.result and not self.open:
            parts.append(f"→ {one_line(self.result)}")
        return " · ".join(parts)

    def _details(self) -> str:
        shown = f"arguments:\n{pretty_arguments(self.arguments) or '{}'}"
        if self.status is not None and self.status not in ("waiting", "running"):
            shown += f"\nresult:\n{self.result}"
        return shown

    def _refresh_text(self) -> None:
        for header in self.query_children(".tool-header"):  # none before compose
            assert isinstance(header, Static)
            header.update(self._header())
        for details in self.query_children(".tool-details"):
            assert isinstance(details, Static)
            details.update(self._details())

    def tick(self) -> None:
        """Once a second while running: the time it has taken so far."""
        if self.status == "running":
            self._refresh_text()

    def add_arguments(self, piece: str) -> None:
        self.arguments += piece
        self._refresh_text()

    def update_state(self, status: ToolStatus, *, label: str = "", result: str = "", took: float = 0.0) -> None:
        if status == "running" and self.status != "running" and self._clock is not None:
            self._running_since = self._clock()
        self.status = status
        if label:
            self.label = label
        self.result = result
        self.took = took
        for name in _STATUS:
            self.set_class(name == status, f"-{name}")
        self._refresh_text()

    def toggle(self) -> None:
        self.open = not self.open
        self.set_class(self.open, "-open")
        self._refresh_text()

    def on_mount(self) -> None:
        if self.status is not None:
            self.update_state(self.status, result=self.result, took=self.took)

    def on_click(self, event: events.Click) -> None:
        if not self.screen.get_selected_text():  # selecting text is not a click on the call
            self.toggle()
