"""``/sessions``: pick a past session to resume."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tractui.ui.sanitize import sanitize


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


class SessionsScreen(ModalScreen[str | None]):
    """Dismisses with the chosen session id, or ``None``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, sessions: list[Any], current: str | None) -> None:
        super().__init__(classes="overlay")
        self.sessions = sessions
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for info in self.sessions:
            line = Text(f"{_when(info.updated_at)}  ", style="dim")
            line.append(sanitize(info.title or "(untitled)")[:60], style="bold" if info.id == self.current else "")
            line.append(f"  {info.message_count} msgs · {sanitize(info.model or '')}", style="dim")
            options.append(Option(line, id=info.id))
        with Vertical(id="sessions-box", classes="overlay-box"):
            yield Static(Text("Sessions", style="bold"))
            if options:
                yield OptionList(*options, id="sessions-list")
            else:
                yield Static("No sessions yet.", classes="overlay-hint")
            yield Static("Enter resumes · Esc closes", classes="overlay-hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
