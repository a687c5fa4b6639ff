"""The conversation's screen: the view, the prompt and the footer gauge.

It owns no conversation logic: it feeds the user's text to a ``Conversation``,
has the frame loop (``ui/streaming``) draw the events it yields, shows the
gauge the conversation computes, and hands slash commands to its
``CommandHost``. The conversation is built here after the first frame; what
is typed before waits in order. A message typed while a reply streams is
held (``ui/outbox``) and sent when the reply ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, TextArea
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from tractui.conversation.commands import is_command
from tractui.errors import ProfileError
from tractui.ui.draft import SAVE_AFTER, load_draft, save_draft
from tractui.ui.heap import Heap
from tractui.ui.host import COMPACTION_RUNNING, STILL_STREAMING, CommandHost
from tractui.ui.internals import paints_all_of, watch_painted
from tractui.ui.outbox import JOIN, Ended, Outbox, as_message
from tractui.ui.paging import HistoryPager
from tractui.ui.palette import PrefillPrompt, RunSlashCommand
from tractui.ui.pending import PendingConversation
from tractui.ui.sanitize import sanitize
from tractui.ui.streaming.frames import FrameLoop
from tractui.ui.streaming.renderer import ReplyRenderer
from tractui.ui.widgets.chat_log import ChatLog
from tractui.ui.widgets.completion import CompletionPopup, Suggestion
from tractui.ui.widgets.earlier import EarlierMessages
from tractui.ui.widgets.footer import GaugeFooter, Totals, Where
from tractui.ui.widgets.input_box import InputBox
from tractui.ui.widgets.message import AssistantMessage, UserMessage
from tractui.ui.widgets.new_below import NewContentHint
from tractui.ui.widgets.queued import QueuedView
from tractui.ui.widgets.thinking import ThinkingView
from tractui.ui.widgets.tool_call import ToolCallView

STEP_PAUSE = 0.001  # seconds between steps of start-up work: a real pause lets a key's hops all run
HELD_PAGE = 0.05  # seconds between tries of a Page Down held for the messages below the view
PAINT_WAIT = 0.5  # seconds a page down not seen painted holds the keys after it, at most
SETTLE_RETRY = 1.0  # seconds before settling the heap is tried again while a reply streams or a dialog is up
COMPACT_CANCELLED = "Compaction cancelled; the history is unchanged."
SCREEN_CLEARED = "Screen cleared; the history is kept (/sessions, --continue)."

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tractui.conversation.compaction.run import CompactionEvent, CompactionResult
    from tractui.conversation.conversation import Conversation
    from tractui.core.events import TurnEvent
    from tractui.core.settings import Settings
    from tractui.store.history import Commit
    from tractui.tools.consent import Decision, ToolRequest
    from tractui.tools.server import McpConnection
    from tractui.tools.toolbox import Toolbox


class ChatScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+t", "fold_thinking", "Fold thinking", show=False),
        Binding("ctrl+o", "open_tool_call", "Open the newest tool call", show=False),
        Binding("ctrl+end", "follow", "Follow", priority=True, show=False),
        Binding("pageup", "scroll_chat('page_up')", "Scroll up", priority=True, show=False),
        Binding("pagedown", "scroll_chat('page_down')", "Scroll down", priority=True, show=False),
        Binding("ctrl+home", "scroll_chat('home')", "Oldest", priority=True, show=False),
    ]

    def __init__(
        self,
        conversation: Conversation | PendingConversation,
        *,
        notices: list[str],
        clock: Callable[[], float],
        count_tokens: Callable[[str], int],
        heap: Heap | None = None,
    ) -> None:
        super().__init__()
        self.heap = heap or Heap(enabled=False)
        # a pending conversation is built after the first frame; until then input waits in _queued
        self._pending = conversation if isinstance(conversation, PendingConversation) else None
        self._conversation: Conversation | None = (
            conversation if not isinstance(conversation, PendingConversation) else None
        )
        self._queued: list[str] = []
        self._outbox = Outbox()  # messages typed while a reply streams, sent when it ends
        self._sending_held = False  # ``_send_held`` runs: it sends what the outbox holds
        self._handing_over = False  # the held messages are being sent: the next reply is not under way yet
        # what the latest reply or /compact is, and how it ended, to be asked once it has
        self._ending: tuple[str, Callable[[], Ended]] = ("reply", lambda: "ended")
        self._streaming_note: Static | None = None  # "a reply is still streaming", until it ends
        self._draining = True  # until the history is drawn: a line sent before would be drawn twice
        self._notices = notices
        self.clock = clock
        self.count = count_tokens
        self.frames = FrameLoop(self, drawn=self._show_new_below, gauge=self.refresh_gauge)
        self._counting = False  # the tokenizer is loaded (after the first frame)
        self.pager = HistoryPager(self._count_when_ready, clock)
        self._history_shown = asyncio.Event()  # the session's newest messages are drawn: the pager has a view
        self._worker: Worker[None] | None = None
        self._compacting: asyncio.Future[CompactionResult] | None = None  # /compact's steps, which Esc cancels
        self.totals = Totals()
        self.editing = False
        self._draft = ""  # the prompt's text when /edit replaced it, given back after
        self._unsent = ""  # the prompt's text as last changed: kept on disk for the next start
        self._gauged = False  # start-up drew the first gauge: later changes may redraw it at once
        self._unsent_timer: Timer | None = None
        self._prompt: InputBox | None = None  # kept to read its text when the app ends, its widgets gone
        self.host = CommandHost(self)
        self._profile_named: str | None = None  # the active profile as the footer last named it ...
        self._profile_file: Path | None = None  # ... and the file it was loaded from
        self._watched: Settings | None = None
        self._watch_settings()
        self.thinking_folded = False  # the last Ctrl+T folded all thinking
        self._reacting = False  # settings changes touch widgets only once they are mounted
        self._stopping = False  # the view is being stopped at the messages not drawn (``_scrolled``)
        self._page_waits = False  # a Page Down waits for its page to be painted or drawn (``_page_held``)
        self._unpainted: float | None = None  # when a page down not painted yet was made (``_paging``)

    @property
    def conversation(self) -> Conversation:
        if self._conversation is None:
            raise RuntimeError("the conversation is still being built")
        return self._conversation

    @property
    def ready(self) -> bool:
        """The conversation is built and the input typed meanwhile has been handled."""
        return self._conversation is not None and not self._draining

    @property
    def _shown(self) -> Conversation | PendingConversation:
        """Where config, settings and profile name come from: the pending conversation until it is built."""
        if self._conversation is not None:
            return self._conversation
        assert self._pending is not None  # one of the two is always set
        return self._pending

    @property
    def settings(self) -> Settings:
        return self._shown.settings

    @property
    def renderer(self) -> ReplyRenderer | None:
        """The reply being drawn, if any."""
        return self.frames.renderer

    def _watch_settings(self) -> None:
        """Listen to the live settings object (a profile switch brings a new one)."""
        if self._watched is not self._shown.settings:
            self._watched = self._shown.settings
            self._watched.subscribe(self._setting_changed)

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat")
        yield NewContentHint()
        yield QueuedView()
        yield CompletionPopup()
        yield InputBox(self.clock)
        yield GaugeFooter()

    async def on_mount(self) -> None:
        self._reacting = True
        self._apply_thinking_visibility()
        self.refresh_where()
        box = self._prompt = self.query_one(InputBox)
        box.offer.completer = self._complete
        box.take_back = self._take_back
        box.focus()
        draft = load_draft()
        if draft.strip():
            box.set_text(draft)
            self._notices.append("Your unsent draft from last time is back in the prompt.")
        for notice in self._notices:
            await self.note(notice)
        if self._pending is not None and self._pending.resuming:  # until its messages are drawn
            await self.query_one(ChatLog).mount(Static("Loading this session…", classes="note loading"))
        self.call_after_refresh(self._after_first_frame)
        self.set_interval(1.0, self.frames.tick)
        self.watch(self.query_one(ChatLog), "scroll_y", self._scrolled, init=False)
        watch_painted(self.app, self._painted)

    def _scrolled(self, before: float, after: float) -> None:
        chat = self.query_one(ChatLog)
        if chat.following:
            self.query_one(NewContentHint).display = False
        if self._stopping:
            return
        if after < before:
            self._page_waits = False  # the user turned back: the page held is not wanted
        stop = self.pager.stop_at(chat, before, after)
        if stop is not None:  # the messages there are drawn first, in view: none is skipped
            self._stopping = True  # a move back up to the line, not the user's: it draws nothing upwards
            try:
                chat.scroll_to(y=stop, animate=False, immediate=True)
            finally:
                self._stopping = False
        down = self.pager.wanted(chat, up=after < before)
        if down is not None:
            self._draw_earlier(down=down)

    @work(group="startup")
    async def _after_first_frame(self) -> None:
        """Draw a resumed session's newest message, build the conversation off the event loop,
        then load the tokenizer, show the gauge, draw the rest of the first screens and handle
        what was typed meanwhile: the first frame never waits, and the newest message neither
        for the conversation's imports nor for the tokenizer."""
        pending = self._pending
        opened = pending.opened if pending is not None else None
        if opened is not None:
            await self.show_history(initial=True, chain=opened)
            await self.frames.painted()  # before the build's imports compete with the paint for the interpreter
        if pending is not None:
            self._conversation = await asyncio.to_thread(pending.build)
            self._watch_settings()
        if opened is None:
            await self.show_history(initial=True)
            await self.frames.painted()  # before the tokenizer's load, as above
        from tractui.core.tokens import encoding_for_model, get_encoding

        await asyncio.to_thread(get_encoding, encoding_for_model(self.conversation.config.model))
        self._counting = True
        for view in self.query(ThinkingView):
            view.recount()
        self._start_tools()
        await self._count_history()
        self._refresh_footer()  # the gauge before the messages above the newest: it is always in view
        self._gauged = True
        await self.show_earlier()
        self._settle_heap()  # the session as read, counted and drawn
        await self._drain()
        self._prepare_next(settle=True)
        self._warm_drawing()

    async def _count_history(self) -> None:
        """Ready the first gauge off the event loop or in steps (keys handled between): the
        provider (its imports) and the session's commits on threads, then its tokens counted
        a few messages at a time. A failure is the gauge's: logged, as ``refresh_gauge`` does."""
        conversation = self.conversation
        try:
            await asyncio.to_thread(lambda: conversation.provider)
            await asyncio.to_thread(conversation.history)  # read and kept: ``counting`` finds it
            for _ in conversation.counting():
                await asyncio.sleep(STEP_PAUSE)
        except Exception as exc:  # the gauge must never take the conversation down
            self.log.error(f"counting the session failed: {exc}")

    @work(group="warm", thread=True)
    def _warm_drawing(self) -> None:
        """Make, while the user types, what the first answer would make on the event loop
        (``answer_segment.warm``), where each held the screen for tens of milliseconds."""
        from tractui.ui.widgets.answer_segment import warm

        warm()

    @work(group="prepare", exclusive=True)
    async def _prepare_next(self, *, settle: bool = False) -> None:
        """The next request readied while the user types (``Conversation.prepare``); then, when
        a session was just loaded (``settle``) or a view replaced, the heap settled, even if a
        later preparation took this one's place."""
        try:
            await self.conversation.prepare()
        except Exception as exc:  # only a head start: the request itself reports what is wrong
            self.log.error(f"readying the next request failed: {exc}")
        finally:
            if settle or self.heap.stale:
                self._settle_heap()

    def _settle_heap(self) -> None:
        """``Heap.settle`` after the next refresh, with this screen in front and no reply
        streaming: until then the last layout still holds the widgets a replaced view
        removed, and a reply's live widgets would be frozen and its stream held."""
        self.app.call_after_refresh(self._settle_when_idle)

    def _view_replaced(self) -> None:
        """Widgets removed from the view may have been frozen with the session: collected at
        the next settle, asked for now."""
        self.heap.replaced()
        self._settle_heap()

    def _settle_when_idle(self) -> None:
        if self.streaming or not self.is_current:
            self.set_timer(SETTLE_RETRY, self._settle_heap)
        else:
            self.heap.settle()

    def _count_when_ready(self, text: str) -> int:
        """Tokens in ``text`` once the tokenizer is loaded, 0 before: history drawn meanwhile
        is counted when it is (``ThinkingView.recount``)."""
        return self.count(text) if self._counting else 0

    async def _drain(self) -> None:
        """Handle the lines typed before the conversation was ready, in order, each reply finished first."""
        while self._queued:
            await self._dispatch(self._queued.pop(0))
            worker = self._worker
            if worker is not None:
                await _ended(worker)
        self._draining = False

    async def aclose(self) -> None:
        """Keep the draft; stop the MCP servers and close the provider's connections."""
        # the prompt's text now: keys it has painted may not have reached ``_input_changed`` yet;
        # the messages held while a reply streamed and not sent go in front of it
        # and in front of them the lines typed during start-up that it had not handled yet
        unsent = self._outbox.in_front_of(self._prompt.text) if self._prompt is not None else self._unsent
        unsent = JOIN.join(line for line in (*self._queued, unsent) if line)
        if self._unsent_timer is not None or unsent != self._unsent:
            if self._unsent_timer is not None:
                self._unsent_timer.stop()
            save_draft(unsent)
        if self._conversation is None:
            return
        box = self.toolbox
        if box is not None:
            box.on_change = None  # the screens are gone
            await box.aclose()
        await self._conversation.aclose()

    # -- tools (their modules imported when used: the first frame has no tools) --
    @property
    def toolbox(self) -> Toolbox | None:
        from tractui.tools.toolbox import Toolbox

        tools = self._conversation.tools if self._conversation is not None else None
        return tools if isinstance(tools, Toolbox) else None

    def _start_tools(self) -> None:
        """Start the MCP servers in the background and ask the user before each call."""
        self.conversation.approve = self.ask_consent
        box = self.toolbox
        if box is not None:
            box.on_change = self._tools_changed
            box.start()

    def _tools_changed(self, connection: McpConnection) -> None:
        from tractui.ui.screens.tools import ToolsScreen

        if not self.is_attached:  # the app is closing: ``aclose`` has not unhooked the toolbox yet
            return
        if isinstance(self.app.screen, ToolsScreen):
            self.app.screen.refresh_servers()
        # its definitions came or went: the gauge counts what the next request offers, once start-up has
        # counted the session in steps (``_count_history``; the gauge's own count would hold the screen)
        if not self.streaming and self._gauged:
            self.refresh_gauge()
        if connection.state == "failed":
            why = f"MCP server {connection.name} failed: {connection.reason} (/tools, then r, starts it again)"
            # during a reply, in it at once, where the failure came: after the call it failed under,
            # above the replies made without its tools
            line, placed = self._note_line(why, error=True, in_reply=True)
            self.call_later(self._show_note, line, placed)

    async def ask_consent(self, request: ToolRequest) -> Decision:
        """The user's choice for one call; Esc stops the whole reply."""
        from tractui.ui.screens.consent import ConsentScreen

        chosen: asyncio.Future[Decision | None] = asyncio.get_running_loop().create_future()
        box = self.query_one(InputBox)
        screen = ConsentScreen(request, clock=self.clock, typed_at=box.keyed_at, keep=self.prompt_takes)
        await self.app.push_screen(screen, callback=lambda decision: _resolve(chosen, decision))
        try:
            decision = await chosen
        finally:
            if screen.is_attached and self.app.screen is screen:  # the reply was stopped meanwhile
                screen.dismiss(None)
        if decision is None:  # Esc: the call and the rest of the turn are answered as cancelled
            await self.action_cancel()
            raise asyncio.CancelledError
        return decision

    async def show_tools(self) -> None:
        from tractui.ui.screens.tools import ToolsScreen

        box = self.toolbox
        if box is None or (not box.connections and box.only_provider is not None):  # only the demo's, not in use
            await self.note(
                "no MCP servers configured: add [mcp.servers.NAME] to config.toml or run "
                "`tractui mcp import FILE` (docs/tools.md)"
            )
            return
        if not box.connections:
            named = ", ".join(self.conversation.mcp_servers or ()) or "none"
            await self.note(f"no MCP servers in use: the profile's mcp_servers ({named}) names no enabled server")
            return
        # the tools switched on or off there change what the next request carries: the gauge counts it
        screen = ToolsScreen(
            box, enabled=self.settings.view.tools_enabled, changed=self.refresh_gauge, keep=self.prompt_takes
        )
        await self.app.push_screen(screen, callback=lambda _: self._refresh_footer())

    # -- notes in the conversation -----------------------------------------
    async def still_streaming(self, *, keep: str | None = None) -> None:
        """Say why a line was not acted on while a reply streams: once, under the reply (a line
        said before is taken away), gone when the reply ends. The line (``keep``) goes back in
        the prompt; what was typed after its Enter (a burst) on a line of its own below it."""
        text = COMPACTION_RUNNING if self._compacting is not None else STILL_STREAMING
        if keep is not None:  # the Enter that was not acted on is a line break: what comes next goes below
            box = self.query_one(InputBox)
            box.set_text(f"{keep}\n{box.text}")
            text += f"; your {'command' if _is_command_line(keep) else 'message'} stays in the prompt"
        if self._streaming_note is not None:
            await self._streaming_note.remove()
        self._streaming_note = await self.note(text, error=True)

    async def _drop_streaming_note(self) -> None:
        """The reply (or /compact) the "still streaming" line spoke of has ended."""
        if self._streaming_note is not None:
            await self._streaming_note.remove()
            self._streaming_note = None

    async def note(self, text: str, *, error: bool = False, in_reply: bool = False) -> Static:
        """A line from tractui itself (command output, notices), not from the model; ``in_reply``
        (something that took effect in the conversation): while a reply streams, in the reply
        where it has got to, in the order things happened (``ReplyRenderer.note``)."""
        widget, placed = self._note_line(text, error=error, in_reply=in_reply)
        await self._show_note(widget, placed)
        return widget

    def _note_line(self, text: str, *, error: bool, in_reply: bool) -> tuple[Static, bool]:
        """A note's line, and whether it went into the streaming reply (drawn with its next frame)."""
        widget = Static(sanitize(text), markup=False, classes="note -error" if error else "note")
        renderer = self.frames.renderer
        return widget, in_reply and renderer is not None and renderer.note(widget)

    async def _show_note(self, widget: Static, placed: bool) -> None:
        if not placed:
            await self.query_one(ChatLog).mount(widget)
        self._show_new_below()  # read further up: the bar says something came

    # -- history -----------------------------------------------------------
    async def show_history(
        self,
        *,
        initial: bool = False,
        chain: Callable[[int | None], list[Commit]] | None = None,
        fresh: bool = False,
    ) -> None:
        """Show the current session's branch (``chain``, before the conversation is built):
        on start-up above the notices and anything typed meanwhile; after /new or /sessions
        (``fresh``: a session opened, every message of it shown) or a compaction in place of
        the view, which leaves off what /clear took off it, under the line /clear wrote.

        The newest message is drawn first and painted on its own; the messages above it,
        to a few screens, come after (on start-up, once the tokenizer is loaded)."""
        chat = self.query_one(ChatLog)
        # one redraw at a time, the batch under way stopped: a second one (a setting set twice, /new
        # after it) comes after the first, and the view is the second's
        async with self.pager.replacing():
            if fresh:
                self.pager.show_all()
            with self.app.batch_update():  # no frame of an empty log between the old view and the new
                if not initial:
                    await chat.remove_children()
                await chat.query(".loading").remove()
                await self.pager.show(
                    chat,
                    chain or self.conversation.history,
                    batch=0,
                    folded=self.thinking_folded,
                    public=self._public_markdown,
                )
                if self.pager.cleared:  # at the top, above what is drawn later further up
                    await chat.mount(Static(SCREEN_CLEARED, markup=False, classes="note"), before=chat.children[0])
                chat.jump_to_end()
        self._history_shown.set()
        if not initial:
            self.refresh_totals()  # one query: the session's own totals with its newest message, not after the batch
            await self.show_earlier()
            self.call_after_refresh(self._refresh_footer)  # the messages first: the gauge reads the whole chain
            self.heap.replaced()  # the view frozen with the session is gone: settled once readied
            self._prepare_next()  # another session (/sessions), or this one compacted

    def _refresh_footer(self) -> None:
        self.refresh_gauge()
        self.refresh_totals()

    @property
    def _public_markdown(self) -> bool:
        """Answers drawn with public Textual only (``ui.markdown public``)."""
        return self.settings.view.ui_markdown == "public"

    def _batch_chars(self) -> int:
        """Text drawn per batch of history: enough to fill the screen a few times over."""
        from tractui.ui.history import BATCH_CHARS

        return max(BATCH_CHARS, 3 * self.size.width * self.size.height)

    async def show_earlier(self, *, down: bool = False) -> None:
        """A batch of the messages not drawn yet: see ``HistoryPager.show_earlier``."""
        # after Ctrl+T folded all thinking, older thinking comes folded too
        await self.pager.show_earlier(
            self.query_one(ChatLog),
            batch=self._batch_chars(),
            folded=self.thinking_folded,
            public=self._public_markdown,
            down=down,
        )

    @on(EarlierMessages.Pressed)
    def _earlier_pressed(self) -> None:
        """At the top: the messages just above the ones drawn; between the first messages and
        the newer ones: those that follow the first (read on from the top)."""
        self._draw_earlier(down=not self.pager.at_top(self.query_one(ChatLog)))

    @on(ChatLog.ScrolledPastTop)
    def _past_top(self) -> None:
        if self.pager.at_top(self.query_one(ChatLog)):  # else the session's first message is at the top
            self._draw_earlier(down=False)

    @work(group="earlier")
    async def _draw_earlier(self, *, down: bool) -> None:
        """Off the screen's own queue: drawing above waits for a layout pass, which the
        screen's queue performs."""
        await self.show_earlier(down=down)
        self.call_after_refresh(self._earlier_still_wanted, down)

    @work(group="earlier")
    async def _to_oldest(self) -> None:
        """Ctrl+Home: the session's first message at the top of the view, drawn first if it is
        not (after the batch being drawn, and after the newest messages of a session being
        opened: the key is never lost)."""
        await self._history_shown.wait()
        await self.pager.show_oldest(
            self.query_one(ChatLog),
            batch=self._batch_chars(),
            folded=self.thinking_folded,
            public=self._public_markdown,
        )
        self.call_after_refresh(self._earlier_still_wanted, True)

    def _earlier_still_wanted(self, down: bool) -> None:
        """Once a batch is laid out: the messages not drawn may still be within a screen of the
        view (a short batch), where no scroll will come to ask for them."""
        if self.is_attached:
            wanted = self.pager.wanted(self.query_one(ChatLog), up=not down)
            if wanted is not None:
                self._draw_earlier(down=wanted)

    # -- sending -----------------------------------------------------------
    @on(InputBox.Submitted)
    async def _submitted(self, event: InputBox.Submitted) -> None:
        box = self.query_one(InputBox)  # emptied by Enter; it may hold keys typed since
        text = event.text.rstrip("\n")  # a line break left at the end (a refused Enter's) ends nothing
        if not text.strip():
            return
        if self.busy and (self.editing or self.app.screen is not self):
            # another screen in front: the consent question opened as this was typed, and its burst went
            # on into the prompt; an Enter in it may have been meant for the question: nothing is queued
            await self.still_streaming(keep=text)
            return
        box.remember(text)
        if self.busy and not _is_command_line(text):
            self._hold(text)
            return
        if not self.ready:
            self._queued.append(text)
            return
        await self._dispatch(text)

    async def _dispatch(self, text: str) -> None:
        """A submitted line: the edited message, a slash command or a message to send."""
        if self.editing:
            self.editing = False
            await self.resend_edited(text)
            self.prefill(self._draft)  # what was in the prompt before /edit
            return
        if _is_command_line(text):
            await self.host.run(text.strip())
            return
        await self.send(as_message(text))

    async def resend_edited(self, text: str) -> None:
        asked_at = time.perf_counter()
        if self.streaming:
            await self.still_streaming()
            return
        await self._drop_last_reply(keep_user=False)
        await self.query_one(ChatLog).mount(UserMessage(sanitize(text)))
        await self.start_reply(lambda: self.conversation.edit_last(text), asked_at)

    async def send(self, text: str) -> None:
        asked_at = time.perf_counter()
        if self.streaming:
            await self.still_streaming()
            return
        await self.query_one(ChatLog).mount(UserMessage(sanitize(text)))
        await self.start_reply(lambda: self.conversation.send(text), asked_at)

    async def start_reply(self, stream: Callable[[], AsyncIterator[TurnEvent]], asked_at: float) -> None:
        """Mount a reply and stream into it in a worker; ``asked_at``: see ``FrameLoop.begin``."""
        chat = self.query_one(ChatLog)
        message = AssistantMessage(self.count, self.clock, public_markdown=self._public_markdown)
        await chat.mount(message)
        chat.jump_to_end()
        renderer = ReplyRenderer(message, self.clock, tool_named=self.conversation.tool_named)
        self.frames.begin(renderer, asked_at)
        self._ending = "reply", lambda: "cancelled" if renderer.cancelled else "failed" if renderer.failed else "ended"
        self._worker = self._stream(stream, renderer)

    @property
    def streaming(self) -> bool:
        return self._worker is not None and not self._worker.is_finished

    @property
    def busy(self) -> bool:
        """A reply streams, or the messages held meanwhile are still to be sent: a message is
        held, a command that would change the view waits."""
        return self.streaming or bool(self._outbox) or self._handing_over

    # -- messages held while a reply streams (``ui/outbox``) -------------------
    @property
    def holding(self) -> bool:
        """Messages are held: quitting now keeps them in the draft, not sent."""
        return bool(self._outbox)

    def _hold(self, text: str) -> None:
        self._outbox.hold(text)
        self._held_changed()
        if not self._sending_held:
            self._sending_held = True
            self._send_held()

    def _held_changed(self) -> None:
        self.query_one(QueuedView).show(self._outbox.messages, after=f"the {self._ending[0]}")
        self._keep_unsent(self.query_one(InputBox).text)

    @work(group="held")
    async def _send_held(self) -> None:
        """When the reply (or /compact) under way ends: the held messages sent as the next
        message if it ended well, else given back to the prompt; then the same for those held
        while that message's reply streams."""
        try:
            while self._outbox:
                worker, (what, ended) = self._worker, self._ending
                if worker is not None:
                    await _ended(worker)  # how it ended is told below, as the reply drew it
                if not self.is_attached:  # the app is closing: ``aclose`` keeps them in the draft
                    return
                how = "cancelled" if worker is not None and worker.state is WorkerState.CANCELLED else ended()
                if not self._outbox:  # taken back meanwhile (Up, Esc)
                    return
                if how != "ended":
                    await self._give_back(f"The {what} {'was cancelled' if how == 'cancelled' else 'failed'}")
                elif not self.ready:  # start-up's lines are still handled one by one: after them, in order
                    self._queued.append(self._outbox.take())
                    self._held_changed()
                else:
                    self._handing_over = True
                    text = self._outbox.take()
                    self._held_changed()
                    try:
                        await self.send(as_message(text))
                    finally:
                        self._handing_over = False
        finally:
            self._sending_held = False

    async def _give_back(self, why: str) -> None:
        """The held messages back in the prompt, in front of what was typed since, and a line saying ``why``."""
        box = self.query_one(InputBox)
        count = len(self._outbox.typed)
        box.set_text(self._outbox.take(box.text))
        box.focus()
        self._held_changed()
        them = "your queued message is" if count == 1 else f"your {count} queued messages are"
        await self.note(f"{why}: {them} back in the prompt, not sent.")

    def _take_back(self) -> str | None:
        """Up on an empty prompt: the held messages, unqueued, to edit (None when none are held)."""
        if not self._outbox:
            return None
        text = self._outbox.take()
        self._held_changed()
        return text

    @work(exclusive=True, group="stream")
    async def _stream(self, stream: Callable[[], AsyncIterator[TurnEvent]], renderer: ReplyRenderer) -> None:
        compacted = _compactions(self.conversation)

        async def ended() -> None:
            if not self.is_attached:  # the app is closing: its widgets are going or gone
                return
            await self._drop_streaming_note()
            if _compactions(self.conversation) != compacted:
                await self._show_compacted(renderer.message)
            self.refresh_gauge()
            self.refresh_totals()
            self._show_new_below()

        await self.frames.run(stream, renderer, then=ended)

    async def _show_compacted(self, live: AssistantMessage) -> None:
        """The reply compacted the history first: redraw as a resume would (the summary marker,
        the originals dimmed), keeping the reply's lines: its notices are not stored, its error
        is stored without the live hint, and a request still over the limit after the compaction
        was not sent, so nothing of it is stored: its lines go under a reply of their own."""
        lines = live.told()
        await self.show_history()
        chat = self.query_one(ChatLog)
        reply = _newest_reply(chat)
        if reply is None:
            reply = AssistantMessage(self.count, self.clock, public_markdown=self._public_markdown)
            await chat.mount(reply)
        await reply.tell(lines)

    def refresh_totals(self) -> None:
        usage = self.conversation.totals()
        self.totals = Totals(usage.reasoning_tokens, usage.output_tokens, _compactions(self.conversation))
        self.query_one(GaugeFooter).totals = self.totals

    def _show_new_below(self) -> None:
        if not self.query_one(ChatLog).following:
            self.query_one(NewContentHint).display = True

    # -- footer ------------------------------------------------------------
    def refresh_where(self) -> None:
        """Provider · model · profile; a profile whose file has gone since it was loaded is
        marked "(deleted)": its settings are still the ones in use (docs/profiles.md)."""
        shown = self._shown
        name = shown.profile_name
        if name != self._profile_named:  # the file it loads from, read when it becomes the active one
            self._profile_named, self._profile_file = name, self._profile_path(name)
        gone = self._profile_file is not None and not self._profile_file.is_file()
        profile = f"{name} (deleted)" if name and gone else name
        self.query_one(GaugeFooter).where = Where(shown.config.provider, shown.config.model, profile)

    def _profile_path(self, name: str | None) -> Path | None:
        try:
            return self.host.profiles.path_for(name) if name else None
        except ProfileError:  # not a name a file can have
            return None

    def refresh_gauge(self) -> None:
        """The conversation's reading, the streaming partial reply included."""
        try:
            reading = self.conversation.gauge()
        except Exception as exc:  # the gauge must never take the conversation down
            self.log.error(f"gauge failed: {exc}")
            return
        self.query_one(GaugeFooter).reading = reading

    # -- settings that apply at once -----------------------------------------
    def _setting_changed(self, key: str) -> None:
        if not self._reacting:
            return
        if key == "reasoning.includeInResponse":
            self._apply_thinking_visibility()
        elif key == "ui.markdown" and self._conversation is not None and not self.streaming:
            self.run_worker(self.show_history(), group="redraw")  # every answer drawn the new way
        elif self._conversation is not None and not self.streaming:
            self.refresh_gauge()  # limit, threshold, reserve and policy all move the gauge

    def _apply_thinking_visibility(self) -> None:
        chat = self.query_one(ChatLog)
        show = self.settings.view.reasoning_include_in_response
        if chat.has_class("-hide-thinking") == (not show):
            return
        with chat.reading_kept():
            chat.set_class(not show, "-hide-thinking")

    def profile_switched(self) -> None:
        """A profile or model switch: new settings object, new footer, thinking visibility."""
        self._watch_settings()
        self._apply_thinking_visibility()
        self._profile_named = self._profile_file = None  # loaded again: its file is read again
        self.refresh_where()
        self.refresh_gauge()
        self._prepare_next()

    # -- keys --------------------------------------------------------------
    def on_key(self, event: events.Key) -> None:
        """A key no widget used: the prompt had lost focus (a click elsewhere); it takes it
        back, and a typed character goes into it instead of nowhere."""
        box = self.query_one(InputBox)
        if box.has_focus:
            return
        box.focus()
        if event.is_printable and event.character:
            box.insert(event.character)
            event.stop()

    async def action_cancel(self) -> None:
        box = self.query_one(InputBox)
        box.focus()  # Esc always brings the keys back to the prompt
        if box.offer.close(box.text):
            self._show_offer()
            return
        if self.editing:
            self.editing = False
            box.set_text(self._draft)
            return
        if self._compacting is not None:  # /compact: its steps, never the redraw after them
            self._compacting.cancel()
            return
        if not self.streaming:
            if self._outbox:  # the reply just ended, and they are still to go: they do not
                await self._give_back("Esc")
            return
        self.conversation.cancel()
        renderer = self.frames.renderer
        if renderer is not None:
            renderer.interrupted()
        if self._worker is not None:
            self._worker.cancel()

    async def action_fold_thinking(self) -> None:
        from tractui.ui.widgets.thinking import ThinkingView

        views = list(self.query(ThinkingView))
        fold = not all(v.folded for v in views) if views else not self.thinking_folded
        self.thinking_folded = fold
        if not views:  # the key still does something: say what
            await self.note(
                f"no thinking on screen; thinking drawn from now on comes {'folded' if fold else 'unfolded'}"
            )
            return
        with self.query_one(ChatLog).reading_kept():
            for view in views:
                if view.folded != fold:
                    view.toggle_fold()

    async def action_open_tool_call(self) -> None:
        """Open (or close) the newest tool call's arguments and result."""
        views = self.query(ToolCallView)
        if not views:  # the key does something a user can see, as "nothing to retry" does
            await self.note("no tool call on screen to open (Ctrl+O opens the newest)")
            return
        with self.query_one(ChatLog).reading_kept():
            views.last().toggle()

    def action_follow(self) -> None:
        self._page_waits = False
        self.query_one(ChatLog).jump_to_end()
        self.query_one(NewContentHint).display = False

    def action_scroll_chat(self, where: str) -> None:
        """Page Up/Down and Ctrl+Home scroll the conversation while the prompt keeps focus;
        Page Up at the very top asks for the earlier messages, as the wheel does there;
        Ctrl+Home goes to the session's first message (``_to_oldest``). Page Down stops where
        messages are not drawn yet, above the newest: the key waits for them (``_page_held``)."""
        chat = self.query_one(ChatLog)
        if where != "page_down":
            self._page_waits = False
        if where == "home":
            self._to_oldest()
        elif where == "page_up" and chat.scroll_y <= 0:
            chat.post_message(ChatLog.ScrolledPastTop())
        elif where == "page_up":
            chat.scroll_to(y=chat.scroll_y - chat.scrollable_content_region.height, animate=False, immediate=True)
        elif not (self._page_waits or self._paging()) and not self._page_down(chat):
            self._page_waits = True
            self._page_held()

    def _page_down(self, chat: ChatLog) -> bool:
        """A page down, unless the view must wait for messages to be drawn below it; the keys that
        come before it is painted are for a page the user has not seen yet, and are taken by it."""
        if not self.pager.page_down(chat):
            return False
        self._unpainted = time.monotonic()
        return True

    def _paging(self) -> bool:
        """A page down is not painted yet (for a moment at most: a key is never held for long)."""
        return self._unpainted is not None and time.monotonic() - self._unpainted < PAINT_WAIT

    def _painted(self, screen: Screen[object], update: RenderableType | None) -> None:
        """The app handed the terminal a frame of this screen that draws the whole conversation
        view again: the last page down is on it. A frame of a few changed lines may not be, nor
        one that draws a sliver of every row: the scrollbar's thumb, moved by the page, is often
        painted before the view is laid out at its new place."""
        if (
            self._unpainted is not None
            and screen is self
            and update is not None
            and paints_all_of(update, self.query_one(ChatLog).scrollable_content_region)
        ):
            self._unpainted = None

    def _page_held(self) -> None:
        """A Page Down that could not move waits, and takes the keys pressed meanwhile: tried again
        a moment later while the messages below the view are drawn, which it asks for, as the
        view stands still."""
        if not self._page_waits or not self.is_attached:
            return
        chat = self.query_one(ChatLog)
        if not self._paging() and self._page_down(chat):  # the page before it is on screen: it goes on
            self._page_waits = False
            return
        down = self.pager.wanted(chat, up=False)
        if down is not None:
            self._draw_earlier(down=down)
        self.set_timer(HELD_PAGE, self._page_held)

    @on(NewContentHint.Pressed)
    def _hint_pressed(self) -> None:
        self.action_follow()

    # -- the prompt ----------------------------------------------------------
    async def run_command(self, line: str) -> None:
        """Run a slash command not typed in the prompt (the palette, F1) now, or after the lines
        queued before it once the conversation is ready."""
        if not self.ready:
            self._queued.append(line)
            return
        await self.host.run(line, typed=False)

    @on(RunSlashCommand)
    def _palette_run(self, event: RunSlashCommand) -> None:
        event.stop()
        self.run_worker(self.run_command(event.line), group="command")

    @on(PrefillPrompt)
    def _palette_prefill(self, event: PrefillPrompt) -> None:
        event.stop()
        self.prefill(event.text)

    def prefill(self, text: str) -> None:
        box = self.query_one(InputBox)
        box.set_text(text)
        box.focus()

    def prompt_takes(self, key: events.Key) -> None:
        """A key typed into an overlay (the burst the consent question opened in, a character
        typed over ``/context``): the prompt handles it, in order."""
        self.query_one(InputBox).post_message(events.Key(key.key, key.character))

    @on(TextArea.Changed, "#input")
    def _input_changed(self, event: TextArea.Changed) -> None:
        self._keep_unsent(event.text_area.text)
        self._show_offer()

    def _keep_unsent(self, prompt: str) -> None:
        """Write what is not sent (the messages held, then the prompt) to the draft, in a moment."""
        self._unsent = self._outbox.in_front_of(prompt)
        if self._unsent_timer is not None:
            self._unsent_timer.stop()
        self._unsent_timer = self.set_timer(SAVE_AFTER, lambda: save_draft(self._unsent))

    @on(InputBox.OfferChanged)
    def _show_offer(self) -> None:
        """Draw the prompt's completion list for its text as it is now."""
        box = self.query_one(InputBox)
        self.query_one(CompletionPopup).show(*box.offer.shown(box.text))

    def _complete(self, text: str) -> list[Suggestion]:
        return [Suggestion(c.text, c.label or c.text, c.help) for c in self.host.complete(text)]

    # -- what commands do to the view ------------------------------------------
    async def show_context(self) -> None:
        from tractui.ui.screens.context import ContextScreen

        reading = self.conversation.gauge()
        await self.app.push_screen(ContextScreen(reading, _compactions(self.conversation), keep=self.prompt_takes))

    async def compact(self, instructions: str | None) -> None:
        # loaded with the first /compact, not at start-up
        from tractui.conversation.compaction.preflight import compact_conversation

        line = await self.note("Compacting…")
        steps = self._compacting = asyncio.ensure_future(
            _outcome(compact_conversation(self.conversation, instructions), line)
        )
        self._ending = "compaction", lambda: _compaction_ended(steps)
        self._worker = self._compact(steps, line)

    @work(exclusive=True, group="stream")
    async def _compact(self, steps: asyncio.Future[CompactionResult], line: Static) -> None:
        """Say how ``steps`` (the compaction) ended on their line, and redraw the view after a
        summary. Esc cancels the steps alone (``action_cancel``): nothing is written until their
        end, and a redraw cut short would leave the view half drawn."""
        try:
            try:
                result = await steps
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():  # this worker's own (the app closing), not Esc
                    raise
                line.update(COMPACT_CANCELLED)
                return
            if result.ok:
                await self.show_history()  # the line goes with the old view: said again under the new one
                await self.note(result.message)
            else:
                line.update(sanitize(result.message))
                line.set_class(True, "-error")
        finally:
            self._compacting = None
            if self.is_attached:  # said while it ran: no longer so
                await self._drop_streaming_note()
            self.refresh_gauge()
            self.refresh_totals()

    async def retry(self) -> None:
        asked_at = time.perf_counter()
        if not any(c.kind == "user" for c in self.conversation.history()):
            await self.note("nothing to retry: no message sent yet in this session", error=True)
            return
        await self._drop_last_reply(keep_user=True)
        await self.start_reply(self.conversation.retry, asked_at)

    async def begin_edit(self) -> None:
        users = [c for c in self.conversation.history() if c.kind == "user"]
        if not users:
            await self.note("nothing to edit: no message sent yet in this session", error=True)
            return
        if not self.editing:  # from the palette the prompt may hold a draft; a second /edit keeps the first's
            self._draft = self.query_one(InputBox).text
        self.editing = True
        self.prefill(users[-1].content.text)
        self.notify("Editing your last message: Enter resends it, Esc cancels", timeout=4)

    async def _drop_last_reply(self, *, keep_user: bool) -> None:
        """Remove the newest exchange from view (it stays in the history as another branch);
        tractui's own notes since (a profile switch before a /retry) stay."""
        chat = self.query_one(ChatLog)
        async with self.pager.replacing():  # not while the view is redrawn, nor the batch drawn above
            children = list(chat.children)
            users = [i for i, w in enumerate(children) if isinstance(w, UserMessage)]
            if not users:
                return
            start = users[-1] + (1 if keep_user else 0)
            for widget in children[start:]:
                if isinstance(widget, AssistantMessage) and (said := list(widget.query(".note").results(Static))):
                    # the notes said while it streamed stay too, where it stood
                    await chat.mount_all([_copy(note) for note in said], before=widget)
                if not widget.has_class("note"):
                    await widget.remove()
        self._view_replaced()

    def last_answer(self) -> str:
        for commit in reversed(self.conversation.history()):
            if commit.kind == "assistant" and commit.content.text:
                return commit.content.text
        return ""

    async def clear_view(self) -> None:
        """Take the session so far off the screen (not out of the history, nor of what is sent):
        a redraw of the session after a compaction leaves it off too."""
        async with self.pager.replacing():
            self.pager.forget(commit.id for commit in self.conversation.history())
            await self.query_one(ChatLog).remove_children()
        self.action_follow()  # nothing is left to read further up: no bar, the next note in view
        await self.note(SCREEN_CLEARED)
        self._view_replaced()


async def _ended(worker: Worker[None]) -> None:
    """Wait for ``worker`` (a reply, /compact) to end, however it ends. Textual's ``Worker.wait``
    takes a cancel of the task waiting for the cancel of the worker awaited: the screen's workers,
    cancelled together as the app closes, would go on to run what waits behind the reply against
    a screen being taken down. That cancel is raised again here."""
    with contextlib.suppress(WorkerCancelled, WorkerFailed):  # Esc, or an error its own worker reports
        await worker.wait()
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _copy(note: Static) -> Static:
    return Static(note.content, markup=False, classes=" ".join(note.classes))


def _resolve(future: asyncio.Future[Decision | None], decision: Decision | None) -> None:
    if not future.done():
        future.set_result(decision)


async def _outcome(events: AsyncIterator[CompactionEvent], line: Static) -> CompactionResult:
    """A compaction's result, each step said on ``line``. Once the result is in, the summary is
    written: a cancel that lands after it (the summariser being closed) does not undo that."""
    from tractui.conversation.compaction.run import CompactionProgress

    result: CompactionResult | None = None
    try:
        async for event in events:
            if isinstance(event, CompactionProgress):
                line.update(f"Compacting… {event.message}")
            else:
                result = event
    except asyncio.CancelledError:
        if result is None:
            raise
    assert result is not None  # a compaction always ends with one
    return result


def _newest_reply(chat: ChatLog) -> AssistantMessage | None:
    """The reply drawn under the newest message of yours, if the history holds one."""
    for widget in reversed(chat.children):
        if isinstance(widget, AssistantMessage):
            return widget
        if isinstance(widget, UserMessage):
            return None
    return None


def _compaction_ended(steps: asyncio.Future[CompactionResult]) -> Ended:
    if steps.cancelled():
        return "cancelled"
    if not steps.done() or steps.exception() is not None or not steps.result().ok:
        return "failed"
    return "ended"


def _compactions(conversation: Conversation) -> int:
    """How often this session was compacted (the footer's and /context's "compacted N×")."""
    from tractui.conversation.compaction.run import compaction_count  # not needed for the first frame

    return compaction_count(conversation.history())


def _is_command_line(text: str) -> bool:
    """A slash command (one line); ``//`` starts a message that begins with a slash."""
    line = text.strip()
    return is_command(line) and "\n" not in line
