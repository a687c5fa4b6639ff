"""Slash-command completion shown above the prompt as you type."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

MAX_SHOWN = 8


@dataclass(frozen=True, slots=True)
class Suggestion:
    text: str  # the whole input line after accepting
    label: str  # what is shown in the list
    help: str


class CompletionPopup(OptionList):
    can_focus = False

    def __init__(self) -> None:
        super().__init__(id="completion")
        self.suggestions: list[Suggestion] = []
        self.display = False

    def show(self, suggestions: list[Suggestion]) -> None:
        self.suggestions = suggestions
        self.clear_options()
        width = max((len(s.label) for s in suggestions), default=0)
        for suggestion in suggestions:
            line = Text(suggestion.label.ljust(width + 2), style="bold")
            line.append(suggestion.help, style="dim")
            self.add_option(Option(line))
        self.highlighted = None
        self.styles.height = min(len(suggestions), MAX_SHOWN) + 2
        self.display = bool(suggestions)

    def hide(self) -> None:
        self.display = False
        self.suggestions = []

    def move(self, step: int) -> None:
        if not self.suggestions:
            return
        if self.highlighted is None:
            self.highlighted = 0 if step > 0 else len(self.suggestions) - 1
        else:
            self.highlighted = (self.highlighted + step) % len(self.suggestions)

    def chosen(self, *, default_first: bool) -> Suggestion | None:
        if not self.suggestions:
            return None
        if self.highlighted is None:
            return self.suggestions[0] if default_first else None
        return self.suggestions[self.highlighted]
