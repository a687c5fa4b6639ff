"""``/sessions``: find a past session to resume, or delete one.

The search box keeps focus the whole time, so every character typed is search text; the list's
keys (arrows, Page Up/Down) and the dialog's (Ctrl+D, and y/n while a delete is asked) are the
screen's bindings, taken before the box sees them."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tractui.errors import StoreError
from tractui.store.history import HistoryStore, SessionInfo
from tractui.ui.sanitize import sanitize
from tractui.ui.widgets.in_order import TextField

SHOWN = 200  # rows listed at most: the newest that match; typing narrows the rest in
HINT = "↑ ↓ move · Enter opens · Ctrl+D deletes · Esc closes"
CURRENT = "• "


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _title(info: SessionInfo) -> str:
    return sanitize(info.title or "(untitled)")


def _row(info: SessionInfo, current: bool) -> Text:
    line = Text(CURRENT if current else " " * len(CURRENT), style="bold")
    line.append(f"{_when(info.updated_at)}  ", style="dim")
    line.append(_title(info)[:60], style="bold" if current else "")
    line.append(f"  {info.message_count} msgs · {sanitize(info.model or '')}", style="dim")
    return line


class SearchBox(TextField):
    """While the dialog asks to confirm a delete, y and n are its answer, not text."""

    asking = False

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return not (self.asking and key in ("y", "n")) and super().check_consume_key(key, character)


class SessionsScreen(ModalScreen[str | None]):
    """Dismisses with the chosen session id, or ``None``. Deletes go straight to ``store``."""

    # all priority, so they are taken in the order pressed (a key the box gets first is handled a turn
    # later): the box has no use for the list's keys, and would take Ctrl+D, y, n and Enter for itself
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", priority=True),
        Binding("up", "move('cursor_up')", show=False, priority=True),
        Binding("down", "move('cursor_down')", show=False, priority=True),
        Binding("pageup", "move('page_up')", show=False, priority=True),
        Binding("pagedown", "move('page_down')", show=False, priority=True),
        Binding("ctrl+d", "ask_delete", "Delete", priority=True),
        Binding("y,enter", "confirm_delete", show=False, priority=True),
        Binding("n", "cancel_delete", show=False, priority=True),
    ]

    def __init__(self, store: HistoryStore, current: str | None) -> None:
        super().__init__(classes="overlay")
        self.store = store
        self.current = current
        self.sessions: list[SessionInfo] = []  # the rows listed, in order
        self._doomed: SessionInfo | None = None
        self.said = ""  # the status line

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box", classes="overlay-box"):
            yield Static(Text("Sessions", style="bold"))
            yield SearchBox(placeholder="search titles, or an id's first characters", id="sessions-search")
            yield OptionList(id="sessions-list")
            yield Static(id="sessions-status")
            yield Static(HINT, id="sessions-hint", classes="overlay-hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).can_focus = False  # the search box keeps the keys
        self.query_one(Input).focus()
        self._refresh()

    def _refresh(self) -> None:
        """List what the search box matches, the newest highlighted."""
        text = self.query_one(Input).value
        try:
            found = self.store.search_sessions(text, limit=SHOWN + 1)
        except StoreError as exc:  # another process holding the file too long, a damaged disk
            self._say(str(exc), error=True)
            return
        self.sessions = found[:SHOWN]
        picker = self.query_one(OptionList)
        picker.clear_options()
        picker.add_options(Option(_row(info, info.id == self.current), id=info.id) for info in self.sessions)
        picker.highlighted = 0 if self.sessions else None
        picker.display = bool(self.sessions)
        if not self.sessions:
            self._say(f"no session matches '{sanitize(text.strip())}'" if text.strip() else "No sessions yet.")
        elif len(found) > SHOWN:
            self._say(f"the newest {SHOWN} shown; type to narrow")
        else:
            self._say("")

    def _say(self, line: str, *, error: bool = False) -> None:
        self.said = line
        status = self.query_one("#sessions-status", Static)
        status.update(line)
        status.set_class(error, "-error")
        status.display = bool(line)

    @property
    def doomed(self) -> SessionInfo | None:
        """The session a delete is being asked for."""
        return self._doomed

    @doomed.setter
    def doomed(self, info: SessionInfo | None) -> None:
        self._doomed = info
        self.query_one(SearchBox).asking = info is not None

    def _highlighted(self) -> SessionInfo | None:
        index = self.query_one(OptionList).highlighted
        return self.sessions[index] if index is not None and index < len(self.sessions) else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """y, n and Enter answer the question only while it is asked; otherwise they are the box's."""
        if action in ("confirm_delete", "cancel_delete"):
            return self.doomed is not None
        return True

    def on_input_changed(self, event: Input.Changed) -> None:
        self.doomed = None  # typing on is a no to the question
        self._refresh()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if (chosen := self._highlighted()) is not None:
            self.dismiss(chosen.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_move(self, how: str) -> None:
        if self.doomed is not None:  # moving on is a no to the question
            self.action_cancel_delete()
        picker = self.query_one(OptionList)
        match how:
            case "cursor_up":
                picker.action_cursor_up()
            case "cursor_down":
                picker.action_cursor_down()
            case "page_up":
                picker.action_page_up()
            case "page_down":
                picker.action_page_down()

    def action_close(self) -> None:
        if self.doomed is not None:
            self.action_cancel_delete()
        else:
            self.dismiss(None)

    def action_ask_delete(self) -> None:
        info = self._highlighted()
        if info is None:
            self._say("no session to delete", error=True)
        elif info.id == self.current:
            self._say("this is the session you are in; it cannot be deleted (/new first)", error=True)
        else:
            self.doomed = info
            self._say(f"delete '{_title(info)[:30]}' with all its messages? y/Enter deletes · n/Esc keeps", error=True)

    def action_confirm_delete(self) -> None:
        doomed, self.doomed = self.doomed, None
        if doomed is None:
            return
        try:
            self.store.delete_session(doomed.id)
        except StoreError as exc:
            self._say(str(exc), error=True)
            return
        index = self.query_one(OptionList).highlighted or 0
        self._refresh()
        deleted = f"deleted '{_title(doomed)[:40]}'"
        if self.sessions:
            self.query_one(OptionList).highlighted = min(index, len(self.sessions) - 1)  # the next row moves up
            self._say(deleted)
        else:
            self._say(f"{deleted}; {self.said}")

    def action_cancel_delete(self) -> None:
        self.doomed = None
        self._say("not deleted")
