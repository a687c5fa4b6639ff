"""The tractui Textual app: themes, the screen stack and the keys that work everywhere.

The conversation itself is on its screen, ``ui/screens/chat.py``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import termios
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from tractui.ui.heap import Heap
from tractui.ui.internals import (
    mend_terminal_input,
    remember_line_breaks,
    resume_only_after_suspend,
    uncycle_painted_strips,
)
from tractui.ui.palette import PrefillPrompt, RunSlashCommand, SlashCommands
from tractui.ui.pending import PendingConversation
from tractui.ui.screens.chat import ChatScreen
from tractui.ui.themes import DEFAULT_THEME, OUR_VARIABLES, load_themes, variable_defaults
from tractui.ui.widgets.input_box import InputBox

if TYPE_CHECKING:
    from tractui.conversation.conversation import Conversation
    from tractui.core.settings import Settings

QUIT_WINDOW = 2.0  # a second Ctrl+C within this many seconds quits
TERMINAL_CHECK = 1.0  # seconds between two looks at whether the terminal is still there


class TractApp(App[int]):
    CSS_PATH = "styles/app.tcss"
    TITLE = "tractui"
    COMMANDS = App.COMMANDS | {SlashCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "copy_or_quit", "Copy / quit", priority=True, show=False),
        Binding("f1", "help", "Help", show=False),
    ]

    def __init__(
        self,
        conversation: Conversation | PendingConversation,
        *,
        notices: list[str] | None = None,
        theme: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        count_tokens: Callable[[str], int] | None = None,
        theme_dirs: list[Path] | None = None,
        heap: Heap | None = None,
    ) -> None:
        super().__init__()
        remember_line_breaks()
        uncycle_painted_strips()
        mend_terminal_input()
        self.clock = clock
        self._quit_armed = -1e9
        notices = list(notices or [])
        loaded = load_themes(theme_dirs)
        for extra in loaded.themes:
            self.register_theme(extra)
        notices.extend(loaded.problems)
        self._wanted_theme = theme or DEFAULT_THEME
        if self._wanted_theme not in self.available_themes:
            notices.append(f"unknown theme '{self._wanted_theme}', using {DEFAULT_THEME}")
            self._wanted_theme = DEFAULT_THEME
        self.chat = ChatScreen(
            conversation, notices=notices, clock=clock, count_tokens=count_tokens or _count_tokens, heap=heap
        )

    @property
    def conversation(self) -> Conversation:
        return self.chat.conversation

    @property
    def settings(self) -> Settings:
        return self.chat.settings

    def get_default_screen(self) -> Screen[Any]:
        return self.chat

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own commands, less those that misbehave here: its theme picker (``/theme``
        switches and remembers), Maximize (it blew the prompt up over the conversation), a
        Screenshot that said nothing of where it went, and a Keys panel of the prompt's editing
        keys that Esc did not close; tractui's own help takes its place."""
        for command in super().get_system_commands(screen):
            if command.title == "Keys":
                yield SystemCommand("Keys", "tractui's keys and commands (F1)", self.action_help)
            elif command.title not in _DROPPED:
                yield command

    def on_mount(self) -> None:
        """The theme; and SIGTERM (``kill``, a shutdown) and SIGHUP (the terminal closed) end the
        app as quitting does, where by default they kill it on the spot: the reply so far is saved
        and marked interrupted, the draft kept, the MCP servers stopped, the terminal given back."""
        self.theme = self._wanted_theme
        if not self.is_headless:
            loop = asyncio.get_running_loop()
            for ending in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(ending, self.exit)
            stdin = sys.__stdin__
            terminal = stdin.fileno() if stdin is not None and stdin.isatty() else None
            # the SIGCONT that follows a hangup is not a resumption
            resume_only_after_suspend(self, lambda: terminal is not None and _alive(terminal))
            if terminal is not None:
                self.set_interval(TERMINAL_CHECK, lambda: self._check_terminal(terminal))

    def _check_terminal(self, terminal: int) -> None:
        """A terminal gone without a hangup (the app had none to get one from: started
        detached) leaves it reading nothing forever at full CPU; it ends as on SIGHUP."""
        if not _alive(terminal):
            self.exit()

    def get_css_variables(self) -> dict[str, str]:
        variables = super().get_css_variables()
        defaults = variable_defaults(variables, self.current_theme.dark)
        merged = {**defaults, **{k: v for k, v in variables.items() if k in OUR_VARIABLES}}
        variables.update(merged)
        self.theme_variables = variables
        return variables

    async def on_event(self, event: events.Event) -> None:
        if isinstance(
            event, (events.Key, events.Paste, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)
        ):
            self.chat.frames.input_came()  # the reply's next frame paints it first
        await super().on_event(event)

    @on(RunSlashCommand)
    def _palette_run(self, event: RunSlashCommand) -> None:
        """Chosen in the palette over another screen: the conversation's screen runs it."""
        self.chat.post_message(RunSlashCommand(event.line))

    @on(PrefillPrompt)
    def _palette_prefill(self, event: PrefillPrompt) -> None:
        self.chat.post_message(PrefillPrompt(event.text))

    async def on_unmount(self) -> None:
        """Keep the draft and close the conversation's connections before the loop ends."""
        await self.chat.aclose()

    def action_copy_or_quit(self) -> None:
        selected = self.screen.get_selected_text()
        box = self.chat.query_one(InputBox)
        if not selected and box.has_focus:
            selected = box.selected_text
        if selected:
            self.copy_to_clipboard(selected)
            self.notify("Copied selection", timeout=1.5)
            return
        now = self.clock()
        if now - self._quit_armed <= QUIT_WINDOW:
            self.exit(0)
            return
        self._quit_armed = now
        if self.chat.holding:
            kept = " (your queued message is not sent: it is kept as your draft for next time)"
        else:
            kept = " (your draft is kept for next time)" if box.text.strip() else ""
        self.notify(f"Press Ctrl+C again to quit{kept}", timeout=QUIT_WINDOW)

    async def action_help(self) -> None:
        await self.chat.run_command("/help")


_DROPPED = frozenset({"Theme", "Maximize", "Minimize", "Screenshot"})  # Textual's, misbehaving here


def _count_tokens(text: str) -> int:
    # tiktoken: imported on first use, which comes after the first frame
    from tractui.core.tokens import count_tokens

    return count_tokens(text)


def _alive(terminal: int) -> bool:
    """Whether the terminal on file descriptor ``terminal`` is still there (not hung up, not gone)."""
    try:
        termios.tcgetattr(terminal)
    except (termios.error, OSError):
        return False
    return True
