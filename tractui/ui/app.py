"""The tractui Textual app: conversation, prompt, footer gauge, commands.

The app owns no conversation logic: it feeds the user's text to a
``Conversation`` (tractui/session.py), renders the events it yields through a
per-frame ``ReplyRenderer``, shows the gauge the conversation computes, and
hands slash commands to ``tractui.commands``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static
from textual.worker import Worker

from tractui.core.content import TextBlock, ThinkingBlock, ToolCallBlock
from tractui.core.events import StreamEvent
from tractui.core.settings import Settings
from tractui.session import Conversation
from tractui.ui.render import ReplyRenderer
from tractui.ui.sanitize import sanitize
from tractui.ui.themes import DEFAULT_THEME, OUR_VARIABLES, load_themes, variable_defaults
from tractui.ui.widgets.chat_log import ChatLog
from tractui.ui.widgets.completion import CompletionPopup
from tractui.ui.widgets.footer import GaugeFooter, Totals
from tractui.ui.widgets.input_box import InputBox
from tractui.ui.widgets.message import AssistantMessage, UserMessage
from tractui.ui.widgets.new_below import NewContentHint

FRAME = 1 / 30  # streaming updates are batched to this rate
GAUGE_EVERY = 0.25  # seconds between gauge readings while streaming
QUIT_WINDOW = 2.0  # a second Ctrl+C within this many seconds quits


class TractApp(App[int]):
    CSS_PATH = "styles/app.tcss"
    TITLE = "tractui"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+c", "copy_or_quit", "Copy / quit", priority=True, show=False),
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+t", "fold_thinking", "Fold thinking", show=False),
        Binding("end", "follow", "Follow", show=False),
        Binding("f1", "help", "Help", show=False),
    ]

    def __init__(
        self,
        conversation: Conversation,
        *,
        notices: list[str] | None = None,
        theme: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        count_tokens: Callable[[str], int] | None = None,
        theme_dirs: list[Path] | None = None,
    ) -> None:
        super().__init__()
        self.conversation = conversation
        self.clock = clock
        self._notices = list(notices or [])
        self._count = count_tokens or _default_counter()
        loaded = load_themes(theme_dirs)
        for extra in loaded.themes:
            self.register_theme(extra)
        self._notices.extend(loaded.problems)
        self._wanted_theme = theme or DEFAULT_THEME
        self.renderer: ReplyRenderer | None = None
        self._worker: Worker[None] | None = None
        self._last_gauge = 0.0
        self._quit_armed = -1e9
        self._flushing = False
        self.totals = Totals()
        self._watched: Settings | None = None
        self._watch_settings()

    @property
    def settings(self) -> Settings:
        return self.conversation.settings

    def _watch_settings(self) -> None:
        """Listen to the live settings object (a profile switch brings a new one)."""
        if self._watched is not self.conversation.settings:
            self._watched = self.conversation.settings
            self._watched.subscribe(self._setting_changed)

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat")
        yield NewContentHint()
        yield CompletionPopup()
        yield InputBox()
        yield GaugeFooter()

    async def on_mount(self) -> None:
        if self._wanted_theme in self.available_themes:
            self.theme = self._wanted_theme
        else:
            self._notices.append(f"unknown theme '{self._wanted_theme}', using {DEFAULT_THEME}")
            self.theme = DEFAULT_THEME
        self._apply_thinking_visibility()
        self.refresh_where()
        await self.show_history()
        self.query_one(InputBox).focus()
        for notice in self._notices:
            await self.note(notice)
        self.set_interval(1.0, self._tick)

    def get_css_variables(self) -> dict[str, str]:
        variables = super().get_css_variables()
        defaults = variable_defaults(variables, self.current_theme.dark)
        merged = {**defaults, **{k: v for k, v in variables.items() if k in OUR_VARIABLES}}
        variables.update(merged)
        self.theme_variables = variables
        return variables

    # -- notes in the conversation -----------------------------------------
    async def note(self, text: str, *, error: bool = False) -> Static:
        """A line from tractui itself (command output, notices), not from the model."""
        widget = Static(sanitize(text), markup=False, classes="note -error" if error else "note")
        await self.query_one(ChatLog).mount(widget)
        return widget

    # -- history -----------------------------------------------------------
    async def show_history(self) -> None:
        """Replace the view with the current session's branch (after /new, /sessions, --resume)."""
        chat = self.query_one(ChatLog)
        await chat.remove_children()
        reply: AssistantMessage | None = None
        for commit in self.conversation.history():
            if commit.kind == "user":
                reply = None
                await chat.mount(UserMessage(sanitize(commit.content.text)))
            elif commit.kind in ("reasoning", "assistant"):
                if reply is None:
                    reply = AssistantMessage(self._count, self.clock)
                    await chat.mount(reply)
                await self._show_blocks(reply, commit)
                if commit.kind == "assistant":
                    reply = None
            elif commit.kind == "summary":
                reply = None
                await self.note("── earlier turns were compacted into a summary (originals kept in the history) ──")
        chat.jump_to_end()
        self.refresh_gauge()
        self.refresh_totals()

    async def _show_blocks(self, reply: AssistantMessage, commit: Any) -> None:
        for block in commit.content.blocks:
            if isinstance(block, ThinkingBlock):
                if block.is_hidden:
                    await reply.redacted()
                elif block.thought:
                    await reply.thinking(text=sanitize(block.thought), elapsed=-1.0)
            elif isinstance(block, TextBlock):
                await reply.answer(sanitize(block.text))
            elif isinstance(block, ToolCallBlock):
                await reply.tool_call(f"⚙ tool call: {sanitize(block.name)}")
        if commit.kind != "assistant":
            return
        if commit.status == "interrupted":
            await reply.set_status("⏹ interrupted — what arrived is kept", "interrupted")
        elif commit.status == "error":
            error = commit.metadata.get("error") or {}
            await reply.set_status(f"✗ {error.get('kind', 'error')}: {sanitize(str(error.get('message', '')))}", "error")

    # -- sending -----------------------------------------------------------
    @on(InputBox.Submitted)
    async def _submitted(self, event: InputBox.Submitted) -> None:
        box = self.query_one(InputBox)
        popup = self.query_one(CompletionPopup)
        if popup.display:
            choice = popup.chosen(default_first=False)
            if choice is not None and choice.text.rstrip() != event.text.rstrip():
                box.set_text(choice.text)
                return
        text = event.text
        if not text.strip():
            return
        box.remember(text)
        box.set_text("")
        popup.hide()
        box.completing = False
        if text.lstrip().startswith("/") and "\n" not in text.strip():
            await self.run_command(text.strip())
            return
        await self.send(text)

    async def send(self, text: str) -> None:
        if self.streaming:
            await self.note("a reply is still streaming — Esc cancels it", error=True)
            return
        chat = self.query_one(ChatLog)
        await chat.mount(UserMessage(sanitize(text)))
        await self.start_reply(lambda: self.conversation.send(text))

    async def start_reply(self, stream: Callable[[], AsyncIterator[StreamEvent]]) -> None:
        """Mount a reply and stream into it in a worker."""
        chat = self.query_one(ChatLog)
        message = AssistantMessage(self._count, self.clock)
        await chat.mount(message)
        chat.jump_to_end()
        self.renderer = ReplyRenderer(message, self.clock)
        self._worker = self._stream(stream, self.renderer)

    @property
    def streaming(self) -> bool:
        return self._worker is not None and not self._worker.is_finished

    @work(exclusive=True, group="stream")
    async def _stream(self, stream: Callable[[], AsyncIterator[StreamEvent]], renderer: ReplyRenderer) -> None:
        timer = self.set_interval(FRAME, self._frame)
        try:
            async for event in stream():
                renderer.feed(event)
        finally:
            timer.stop()
            if self.renderer is renderer:
                await renderer.finish()
                self.renderer = None
                self.refresh_gauge()
                self.refresh_totals()
                self._show_new_below()

    async def _frame(self) -> None:
        renderer = self.renderer
        if renderer is None or self._flushing or not renderer.pending:
            return
        self._flushing = True
        try:
            await renderer.flush()
        finally:
            self._flushing = False
        now = self.clock()
        if now - self._last_gauge >= GAUGE_EVERY:
            self._last_gauge = now
            self.refresh_gauge()
        self._show_new_below()

    async def _tick(self) -> None:
        """Once a second: thinking timers and the retry countdown."""
        renderer = self.renderer
        if renderer is None:
            return
        thinking = renderer.message.current_thinking()
        if thinking is not None:
            thinking.refresh_header()
        await renderer.tick()

    def refresh_totals(self) -> None:
        usage = self.conversation.totals()
        compactions = _compactions(self.conversation)
        self.totals = Totals(usage.reasoning_tokens, usage.output_tokens, compactions)
        self.query_one(GaugeFooter).show_totals(self.totals)

    def _show_new_below(self) -> None:
        chat = self.query_one(ChatLog)
        self.query_one(NewContentHint).display = not chat.following

    # -- footer ------------------------------------------------------------
    def refresh_where(self) -> None:
        config = self.conversation.config
        self.query_one(GaugeFooter).show_where(config.provider, config.model, self.conversation.profile_name)

    def refresh_gauge(self) -> None:
        """The conversation's reading, the streaming partial reply included."""
        try:
            reading = self.conversation.gauge()
        except Exception as exc:  # the gauge must never take the conversation down
            self.log.error(f"gauge failed: {exc}")
            return
        self.query_one(GaugeFooter).show_reading(reading)

    # -- settings that apply at once -----------------------------------------
    def _setting_changed(self, key: str) -> None:
        if key == "reasoning.includeInResponse" and self.is_mounted:
            self._apply_thinking_visibility()

    def _apply_thinking_visibility(self) -> None:
        chat = self.query_one(ChatLog)
        show = bool(self.settings.get("reasoning.includeInResponse"))
        if chat.has_class("-hide-thinking") == (not show):
            return
        following = chat.following
        place = None if following else chat.first_visible()
        chat.set_class(not show, "-hide-thinking")
        if following:
            self.call_after_refresh(chat.jump_to_end)
        else:
            self.call_after_refresh(chat.restore, place)

    # -- keys --------------------------------------------------------------
    async def action_cancel(self) -> None:
        popup = self.query_one(CompletionPopup)
        if popup.display:
            popup.hide()
            self.query_one(InputBox).completing = False
            return
        if not self.streaming:
            return
        self.conversation.cancel()
        renderer = self.renderer
        if renderer is not None:
            renderer.interrupted()
        if self._worker is not None:
            self._worker.cancel()

    def action_copy_or_quit(self) -> None:
        selected = self.screen.get_selected_text()
        box = self.query_one(InputBox)
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
        self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def action_fold_thinking(self) -> None:
        from tractui.ui.widgets.thinking import ThinkingView

        views = [v for v in self.query(ThinkingView) if v.long or v.folded]
        fold = not all(v.folded for v in views)
        for view in views:
            if view.folded != fold:
                view.toggle_fold()

    def action_follow(self) -> None:
        self.query_one(ChatLog).jump_to_end()
        self.query_one(NewContentHint).display = False

    @on(NewContentHint.Pressed)
    def _hint_pressed(self) -> None:
        self.action_follow()

    async def action_help(self) -> None:
        await self.run_command("/help")

    async def run_command(self, line: str) -> None:
        await self.note(f"commands are not wired yet: {line}", error=True)


def _compactions(conversation: Conversation) -> int:
    """How often this session was compacted (0 until compaction exists)."""
    try:
        from tractui.compaction import compaction_count
    except ImportError:
        return 0
    return compaction_count(conversation.history())


def _default_counter() -> Callable[[str], int]:
    from tractui.core.tokens import count_tokens

    return count_tokens
