"""Slash-command completion shown above the prompt as you type."""

from __future__ import annotations

from collections.abc import Callable
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


Completer = Callable[[str], list[Suggestion]]


class Offer:
    """The completion list for a text, kept by the prompt: its keys act on the list for the text
    as it is when each key comes, not as the screen last drew it (keys typed fast run ahead of
    the screen)."""

    def __init__(self) -> None:
        self.completer: Completer = lambda text: []
        self._moved: tuple[str, int] | None = None  # the text Up/Down moved in, and the row they reached
        self._closed: str | None = None  # the text Esc closed the list for, until the text is seen changed

    def suggestions(self, text: str) -> list[Suggestion]:
        if text != self._closed:
            self._closed = None  # typing on opens the list again, also back to the text it was closed for
        if self._closed is not None or not text.startswith("/") or "\n" in text:
            return []
        found = self.completer(text)
        if len(found) == 1 and found[0].text.rstrip() == text.rstrip():
            return []  # the text is already what the list would give
        return found

    def shown(self, text: str) -> tuple[list[Suggestion], int | None]:
        """The list for ``text`` and the row Up/Down reached in it, as the popup draws them."""
        found = self.suggestions(text)
        return found, self._row(text, found)

    def move(self, text: str, step: int) -> bool:
        found = self.suggestions(text)
        if not found:
            return False
        row = self._row(text, found)
        if row is None:  # the first step lands on the first row (Down) or the last (Up)
            row = -1 if step > 0 else 0
        self._moved = (text, (row + step) % len(found))
        return True

    def close(self, text: str) -> bool:
        if not self.suggestions(text):
            return False
        self._closed = text
        return True

    def chosen(self, text: str, *, first: bool) -> Suggestion | None:
        """The row Up/Down reached, or else (for Tab) the first."""
        found = self.suggestions(text)
        row = self._row(text, found)
        if row is None:
            return found[0] if first and found else None
        return found[row]

    def _row(self, text: str, found: list[Suggestion]) -> int | None:
        """The row Up/Down reached, while the text is the one they moved in."""
        if self._moved is None or self._moved[0] != text or self._moved[1] >= len(found):
            return None
        return self._moved[1]


class CompletionPopup(OptionList):
    """Draws the prompt's ``Offer``; it decides nothing."""

    can_focus = False

    def __init__(self) -> None:
        super().__init__(id="completion")
        self.suggestions: list[Suggestion] = []
        self.display = False

    def show(self, suggestions: list[Suggestion], highlighted: int | None) -> None:
        if suggestions != self.suggestions:
            self.suggestions = suggestions
            self.clear_options()
            width = max((len(s.label) for s in suggestions), default=0)
            for suggestion in suggestions:
                line = Text(suggestion.label.ljust(width + 2), style="bold")
                line.append(suggestion.help, style="dim")
                self.add_option(Option(line))
            self.styles.height = min(len(suggestions), MAX_SHOWN) + 2
        self.highlighted = highlighted
        self.display = bool(suggestions)
