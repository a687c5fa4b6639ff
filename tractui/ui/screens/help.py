"""``/help`` and F1: the commands and the keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from tractui.ui.screens.overlay import ReadingOverlay

KEYS = (
    ("Enter", "send"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Up / Down", "walk the input history"),
    ("Tab", "complete a command"),
    ("Esc", "cancel the reply (what arrived is kept)"),
    ("Ctrl+T", "fold / unfold long thinking"),
    ("Ctrl+O", "open / close the newest tool call"),
    ("Page Up / Page Down", "scroll the conversation"),
    ("Ctrl+Home", "scroll to the oldest message"),
    ("Ctrl+End", "follow the newest content"),
    ("Ctrl+C", "copy the selection; twice to quit"),
    ("Ctrl+Q", "quit (the prompt's text is kept as a draft)"),
    ("Ctrl+P", "command palette"),
    ("F1", "this help"),
)


class HelpScreen(ReadingOverlay):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,f1", "dismiss", "Close")]

    def __init__(self, commands: list[tuple[str, str]], keep: Callable[[events.Key], None] | None = None) -> None:
        super().__init__(keep)
        self.commands = commands

    def compose(self) -> ComposeResult:
        commands = Table.grid(padding=(0, 2))
        for name, text in self.commands:
            commands.add_row(Text(name, style="bold"), text)
        keys = Table.grid(padding=(0, 2))
        for key, text in KEYS:
            keys.add_row(Text(key, style="bold"), text)
        with VerticalScroll(id="help-box", classes="overlay-box") as box:
            box.border_subtitle = "Esc to close · ↑ ↓ scroll"  # on the border: in view on any terminal height
            yield Static(Text("Commands", style="bold underline"))
            yield Static(commands)
            yield Static(Text("\nKeys", style="bold underline"))
            yield Static(keys)
