"""The conversation loop: store, compile, provider and gauge tied together, UI-agnostic.

Both the app and print mode drive a ``Conversation``: ``send`` appends the
user's message, streams the reply's events to the caller, writes what has
arrived to the store at least every ``FLUSH_INTERVAL`` seconds (marked
interrupted until it completes, so a killed process leaves a readable
partial reply) and commits reasoning then answer with usage and provenance.
A reply that calls tools is followed by a round of calls (``tool_loop``) and
the next reply, until the model answers without calls or ``tools.maxSteps``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, get_args

from tractui.conversation.compaction.preflight import Preflight, trim_for_retry
from tractui.conversation.reply_writer import ReplyWriter
from tractui.conversation.tool_loop import CUT_SHORT, Approver, ToolRound, ToolRunner
from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content, ToolCallBlock, Usage
from tractui.core.events import (
    OUTPUT_LIMIT,
    Notice,
    StepLimit,
    StreamError,
    StreamEvent,
    TurnEvent,
    cut_at_output_limit,
)
from tractui.core.gauge import CallBasis, ContextReading, Gap, ThinkingTokens, measure_context
from tractui.core.reasoning import StripPolicy, remove_thinking, thinking_policy
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.core.urls import public_url
from tractui.errors import ConversationError, SessionGone, StoreError
from tractui.providers import make_provider
from tractui.providers.config import ProviderConfig
from tractui.providers.errors import unreadable
from tractui.providers.thinking_back import current_turn_start
from tractui.store.compile import Compiler, answered_nothing
from tractui.store.history import Commit, HistoryStore, Status

if TYPE_CHECKING:
    from tractui.providers.transport import Provider

FLUSH_INTERVAL = 0.25  # seconds; half the 0.5 s promise, so a write is never late
# Anthropic's refusal of thinking blocks made under another system prompt, tool list or history
STALE_THINKING = re.compile(r"bound to a different conversation|invalid .?signature.? in .?thinking", re.IGNORECASE)
SERVER_WAIT = 30.0  # seconds a request waits for MCP servers still starting
AHEAD = 1024  # stream events read ahead of the consumer; beyond that the socket waits
COUNT_STEP = 50  # messages counted between two pauses of ``counting``
GAP_CALLS = 64  # the latest calls whose gap calibrates the estimate after a compaction


class _End:
    """Marks the end of the provider's stream on the internal queue."""


_END = _End()


class Conversation:
    """One session's conversation with the active provider; the history stays across profile switches."""

    def __init__(
        self,
        store: HistoryStore,
        settings: Settings,
        config: ProviderConfig,
        *,
        session_id: str | None = None,
        profile_name: str | None = None,
        mcp_servers: tuple[str, ...] | None = None,
        provider: Provider | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.config = config
        self.profile_name = profile_name
        self.mcp_servers = mcp_servers  # the profile's MCP servers; all configured ones when None
        self._provider = provider
        self._retired: list[Provider] = []  # replaced by a profile switch; closed in aclose()
        self.session_id = store.resolve_session(session_id) if session_id else None
        if self.session_id is not None and store.seen_head(self.session_id) is None:  # the head the app drew from stays
            store.see_head(self.session_id)
        self._producer: asyncio.Task[None] | None = None
        self._cancelled = False
        self._streaming_parent: str | None = None
        self._before_reply: tuple[tuple[str | None, str], list[Commit], list[Content]] | None = None
        self._counter = TokenCounter(config.model)
        self._compiler = Compiler()  # the chain's messages, kept from one send to the next
        self.assembler: MessageAssembler | None = None  # the reply streaming now, or the last one
        self.replies: list[MessageAssembler] = []  # the last turn's replies, one per request, in order
        self.tools: ToolRunner | None = None  # the MCP tools offered to the model, when any are configured
        self.approve: Approver | None = None  # asks the user before a tool runs; none: calls needing consent are denied
        self._round: ToolRound | None = None
        self._writer: ReplyWriter | None = None  # the last reply's
        self._in_turn = False
        self._tool_tokens: tuple[str, int] | None = None  # the definitions' text and its count
        self._offered: list[ToolSpec] = []  # what the last request offered
        self._unsaved: ReplyWriter | None = None  # a finished reply the store could not take (disk full)
        self._told_unsaved = False  # said once per spell of failed writes

    # -- sessions ----------------------------------------------------------
    @property
    def session_id(self) -> str | None:
        """The session this window is in (``None``: a new one, made with the first message)."""
        return self._session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self._session_id = value
        self.store.hold(value)  # no other window may delete it meanwhile

    def new_session(self) -> None:
        """Start afresh; the session is created with the first message, so no empty sessions pile up."""
        self.session_id = None
        self.assembler = None

    def open_session(self, ref: str | None = None) -> str:
        """Switch to session ``ref`` (a unique id prefix; latest when empty)."""
        self.session_id = self.store.resolve_session(ref)
        self.store.see_head(self.session_id)
        self.assembler = None
        return self.session_id

    def history(self, last: int | None = None) -> list[Commit]:
        """This window's branch, root → head: where it last wrote or what it opened, even when
        another tractui on the same session has written since; only its ``last`` commits when given."""
        if self.session_id is None:
            return []
        return self.store.seen_chain(self.session_id, last)

    def messages(self) -> list[Content]:
        """What would be sent now (reasoning policy applied)."""
        return self._compiler.compiled(self.history(), self.settings)

    def totals(self) -> Usage:
        """Tokens spent in this session, every branch included."""
        return self.store.totals(self.session_id) if self.session_id else Usage()

    # -- provider ----------------------------------------------------------
    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = make_provider(self.config)
        return self._provider

    async def prepare(self) -> None:
        """Ready the next request while the user types: the provider's HTTP client, each
        reply of the history merged as it is sent (remembered per reply, see ``compile``) and
        each message's wire form and JSON (``Provider.ready``), so pressing Enter costs only
        what changed since."""
        provider = self.provider
        await provider.warm()
        if self.session_id is not None:  # off the event loop: the chain compiled, its messages kept
            # the settings as they are now: a /set meanwhile must not reach a form half made
            await asyncio.to_thread(self._ready, provider, self.settings.copy())

    def _ready(self, provider: Provider, settings: Settings) -> None:
        provider.ready(self._compiler.compiled(self.history(), settings), settings)

    def switch_profile(
        self,
        config: ProviderConfig,
        settings: Settings,
        name: str | None,
        mcp_servers: tuple[str, ...] | None = None,
        *,
        restart_failed: bool = False,
    ) -> None:
        """Use ``config``, ``settings`` and the MCP servers ``mcp_servers`` names (all when ``None``)
        from the next request on; the history stays. ``restart_failed`` (a profile loaded by name):
        a server among them that failed starts again."""
        if config != self.config:
            if self._provider is not None:
                self._provider.retire()
                self._retired.append(self._provider)
            self._provider = None
            counter = TokenCounter(config.model)
            if counter.encoding_name != self._counter.encoding_name:  # its counts hold for its encoding only
                self._counter = counter
        self.config, self.settings, self.profile_name = config, settings, name
        self.mcp_servers = mcp_servers
        if self.tools is not None:
            self.tools.use(mcp_servers, config, restart_failed=restart_failed)

    async def aclose(self) -> None:
        """Close the providers' HTTP clients."""
        for provider in [*self._retired, *([self._provider] if self._provider else [])]:
            await provider.aclose()
        self._retired.clear()

    # -- turns -------------------------------------------------------------
    def _session(self) -> str:
        if self.session_id is None:
            self.session_id = self.store.create_session()
        return self.session_id

    def _retried(self) -> Commit:
        """What ``/retry`` answers again: the last user message, or the summary a compaction wrote
        under it before its reply, which still stands (answering the message itself compacted the
        same turns again, paying for every summary call twice)."""
        chain = self.history()
        at = _last_user_at(chain)
        while at + 1 < len(chain) and chain[at + 1].kind == "summary":
            at += 1
        return chain[at]

    def _last_user(self) -> Commit:
        chain = self.history()
        return chain[_last_user_at(chain)]

    async def send(self, text: str) -> AsyncIterator[TurnEvent]:
        """Append ``text`` as the user's message and stream the reply."""
        if not text.strip():
            raise ConversationError("nothing to send: the message is empty")
        if self.streaming:
            raise ConversationError("a reply is already streaming; cancel it first")
        if (saved := self._write_unsaved()) is not None:
            yield saved
            if isinstance(saved, StreamError):
                return
        try:
            session_id = self._session()
            mine = self.store.seen_head(session_id)
            if mine is not None and self.store.head(session_id) != mine:
                yield Notice(
                    "another tractui has written to this session since this window last did; this window goes "
                    "on from its own last message (the other branch stays in the history: /sessions, tractui log)"
                )
            parent: str | None = mine if mine is not None else "head"
            user = self.store.append(
                session_id, "user", Content.human(text), parent_id=parent, profile=self.profile_name
            )
        except StoreError as exc:
            yield _not_sent(exc)
            return
        async for event in self._turn(user.id):
            yield event

    async def retry(self) -> AsyncIterator[TurnEvent]:
        """Answer the last user message again on a sibling branch; the old answer stays reachable."""
        if (saved := self._write_unsaved()) is not None:
            yield saved
            if isinstance(saved, StreamError):
                return
        async for event in self._turn(self._retried().id):
            yield event

    def _write_unsaved(self) -> Notice | StreamError | None:
        """Before the next turn, write the reply the store could not take; if it still cannot, nothing is sent
        (the history must not skip a reply the user saw)."""
        writer = self._unsaved
        if writer is None:
            return None
        if not writer.write_unsaved():
            assert writer.unsaved is not None
            return _not_sent(writer.unsaved)
        self._unsaved, self._told_unsaved = None, False
        return Notice("the history can be written again: the reply kept in memory is now saved")

    def _unsaved_notice(self, writer: ReplyWriter) -> Notice | None:
        if writer.unsaved is None or self._told_unsaved:
            return None
        self._told_unsaved = True
        return Notice(
            f"the history cannot be written ({writer.unsaved}); the reply goes on, kept in memory, "
            "and is written once there is room"
        )

    @property
    def unsaved(self) -> StoreError | None:
        """Why the last reply is not in the history (the store could not be written), or None."""
        return self._unsaved.unsaved if self._unsaved is not None else None

    def write_unsaved(self) -> bool:
        """Try once more to write a reply the store could not take; whether the history is complete now."""
        self._write_unsaved()
        return self._unsaved is None

    async def edit_last(self, text: str) -> AsyncIterator[TurnEvent]:
        """Resend an edited last user message as a new branch beside the original."""
        if not text.strip():
            raise ConversationError("nothing to send: the message is empty")
        if (saved := self._write_unsaved()) is not None:
            yield saved
            if isinstance(saved, StreamError):
                return
        old = self._last_user()
        try:
            user = self.store.append(
                old.session_id, "user", Content.human(text), parent_id=old.parent_id, profile=self.profile_name
            )
        except StoreError as exc:
            yield _not_sent(exc)
            return
        async for event in self._turn(user.id):
            yield event

    def cancel(self) -> None:
        """Stop the turn now: the reply streaming (what arrived is kept, marked interrupted) or the
        tool call waiting or running (it and the calls after it are answered as cancelled)."""
        self._cancelled = True
        if self._producer is not None:
            self._producer.cancel()
        if self._round is not None:
            self._round.cancel()

    @property
    def streaming(self) -> bool:
        """A turn is under way: a reply streaming, or its tool calls."""
        return self._streaming_parent is not None or self._in_turn

    # -- the tool loop -------------------------------------------------------
    async def _turn(self, parent_id: str) -> AsyncIterator[TurnEvent]:
        """Replies and rounds of tool calls until the model answers without calling a tool."""
        if self.streaming:
            raise ConversationError("a reply is already streaming; cancel it first")
        self._in_turn = True
        self.replies = []
        try:
            rounds = 0
            while True:
                self._writer = None
                async for event in self._reply(parent_id):
                    yield event
                writer, assembler = self._writer, self.assembler
                if writer is None or writer.assistant is None or assembler is None:
                    return
                calls = assembler.content().tool_calls
                if not calls:
                    return
                round_ = self._round = ToolRound(
                    self.store,
                    writer.session_id,
                    writer.assistant.id,
                    # all of them, also switched off or left by a profile switch since the reply was asked
                    # for: a call is told why it is not run, not that it was never offered
                    self.tools,
                    self.approve,
                    self._counter,
                    self.settings.view.tools_max_result_tokens,
                    enabled=lambda: self.settings.view.tools_enabled,
                )
                error = assembler.error
                if self._cancelled or (error is not None and error.kind == "cancelled"):
                    round_.cancel()  # Esc as the reply ended: its calls are answered, none is run
                elif error is not None:
                    round_.cancel(CUT_SHORT)  # a reply cut short by an error: the same, told so
                try:
                    async for state in round_.run(calls):
                        yield state
                except StoreError as exc:  # a tool's result cannot be stored: the loop cannot go on
                    yield StreamError(kind="storage", message=f"the history cannot be written ({exc}); tools stopped")
                    return
                finally:
                    self._round = None
                if round_.cancelled:
                    return
                rounds += 1
                if rounds >= self.settings.view.tools_max_steps:
                    yield StepLimit(
                        f"stopped after {rounds} rounds of tool calls (tools.maxSteps); send a message to go on",
                        rounds=rounds,
                    )
                    return
                parent_id = round_.parent_id
        finally:
            self._in_turn = False

    def tool_named(self, name: str) -> tuple[str, str] | None:
        """The server and tool a call of the provider name ``name`` runs, as its round will
        name them; ``None`` when tractui never offered that name (the round answers it as not
        offered). The app draws a call waiting in a round under these names."""
        tools = self.tools
        request = tools.request(ToolCallBlock(id="", name=name)) if tools is not None else None
        return (request.server, request.tool) if request is not None else None

    def next_tools(self) -> list[ToolSpec]:
        """The tools the next request will offer, as far as is known now."""
        tools = self._tools()
        return tools.definitions() if tools is not None else []

    def _tools(self) -> ToolRunner | None:
        """The tools in force: none when switched off or not meant for this provider."""
        tools = self.tools
        if tools is None or not self.settings.view.tools_enabled or not tools.serves(self.config.provider):
            return None
        return tools

    def tool_tokens(self, specs: list[ToolSpec]) -> int:
        """Tokens of the tool definitions as the active provider sends them (``tools`` in /context)."""
        if not specs:
            return 0
        text = json.dumps(self.provider.tool_definitions(specs), ensure_ascii=False)
        if self._tool_tokens is None or self._tool_tokens[0] != text:
            self._tool_tokens = (text, self._counter.count(text))
        return self._tool_tokens[1]

    async def _pump(
        self,
        provider: Provider,
        messages: list[Content],
        settings: Settings,
        system: str | None,
        queue: asyncio.Queue[StreamEvent | _End],
        room: asyncio.Semaphore,
        tools: list[ToolSpec],
    ) -> None:
        """Read the provider into ``queue``, at most ``AHEAD`` events ahead of the consumer:
        a consumer slower than the stream (a display) slows the reading, not the memory.
        The closing events never wait for room, so the consumer always learns the end."""
        try:
            async for event in provider.stream(messages, settings, system=system, tools=tools):
                await room.acquire()
                queue.put_nowait(event)
        except asyncio.CancelledError:
            queue.put_nowait(StreamError(kind="cancelled", message="cancelled"))
        except (
            Exception
        ) as exc:  # a provider must not raise (see Provider._read); if one does, the reply still ends cleanly
            queue.put_nowait(unreadable(exc))
        finally:
            queue.put_nowait(_END)

    async def _flush_loop(self, writer: ReplyWriter, assembler: MessageAssembler) -> None:
        """Flush on a timer too, so a stream that pauses still has its last words on disk."""
        while True:
            await asyncio.sleep(FLUSH_INTERVAL)
            writer.flush(assembler)

    async def _reply(self, parent_id: str) -> AsyncIterator[StreamEvent]:
        if self._streaming_parent is not None:
            raise ConversationError("a reply is already streaming; cancel it first")
        session_id = self._session()
        tools = self._tools()
        if tools is not None and tools.starting:
            yield Notice(f"waiting for MCP servers to start: {', '.join(tools.starting)}")
            await tools.settled(SERVER_WAIT)
        self._offered = tools.definitions() if tools is not None else []
        # compaction pre-flight: measure, compact at most once, refuse what cannot fit
        preflight = Preflight(self, parent_id)
        async for event in preflight.run():
            yield event
        if preflight.blocked is not None:
            yield preflight.blocked
            return
        parent_id = preflight.parent_id
        retry: list[Content] | None = None  # trimmed messages after a context-length error
        trimmed_once = False
        # --
        settings, config = self.settings, self.config
        chain = self.store.chain(session_id, head=parent_id)
        messages = self._compiler.compiled(chain, settings)
        system = settings.view.system_prompt or None
        provider = self.provider
        stamps = {  # where the reply came from, for a resume to go on there (a variable's name, never a key)
            "provider": config.provider,
            "model": config.model,
            "base_url": public_url(provider.base_url),
            "api_key_env": config.api_key_env,
        }
        stored = self._compiler.merged(chain)  # the gauge counts the stored form; the reply will be one more message
        pure = self._estimate(stored, system)  # the tokenizer alone: calibrates later estimates
        basis: dict[str, Any] | None = {
            "message_count": len(stored) + 1,
            # the reading the user saw before sending: its error against the reported input is the gauge's
            "estimated_input": preflight.reading.effective if preflight.reading else pure,
            "pure_input": pure,
            "policy": thinking_policy(settings),
            "tools_tokens": self.tool_tokens(self._offered),  # the next reading offsets a change of tools
        }
        writer = self._writer = ReplyWriter(self.store, session_id, parent_id, stamps, self.profile_name)
        assembler = self.assembler = MessageAssembler()
        self.replies.append(assembler)
        queue: asyncio.Queue[StreamEvent | _End] = asyncio.Queue()
        room = asyncio.Semaphore(AHEAD)
        self._cancelled = False
        self._streaming_parent = parent_id
        pump = self._pump(provider, messages, settings, system, queue, room, self._offered)
        self._producer = _started(pump, queue)
        flusher = asyncio.create_task(self._flush_loop(writer, assembler))
        try:
            while True:
                item = await queue.get()
                room.release()
                if isinstance(item, _End):
                    if retry is None:
                        break
                    messages, retry, basis = retry, None, None  # a trimmed request is no basis for the gauge
                    pump = self._pump(provider, messages, settings, system, queue, room, self._offered)
                    self._producer = _started(pump, queue)
                    continue
                event = item
                if (
                    isinstance(event, StreamError)
                    and event.kind == "context_length"
                    and not trimmed_once
                    and not assembler.content().blocks
                ):
                    trimmed_once, trimmed = True, trim_for_retry(messages, self._counter, preflight.reading)
                    if trimmed is not None:
                        retry, notice = trimmed
                        yield notice
                        continue
                if (
                    isinstance(event, StreamError)
                    and event.kind == "bad_request"
                    and STALE_THINKING.search(event.message)
                    and not trimmed_once
                    and not assembler.content().blocks
                ):
                    trimmed_once = True
                    unsigned = without_earlier_thinking(messages)
                    if unsigned != messages:
                        retry = unsigned
                        yield Notice(
                            "the provider no longer accepts earlier turns' thinking (it was made under another "
                            "system prompt, tool list or history): retrying once without it"
                        )
                        continue
                assembler.feed(event)
                yield event
                if time.monotonic() - writer.last_flush >= FLUSH_INTERVAL:
                    writer.flush(assembler)
                if (told := self._unsaved_notice(writer)) is not None:
                    yield told
        except (asyncio.CancelledError, GeneratorExit):
            self._cancelled = True
            raise
        finally:
            self._producer.cancel()
            flusher.cancel()
            self._producer = None
            self._streaming_parent = None
            self._finish(writer, assembler, basis)
            if writer.unsaved is not None:
                self._unsaved = writer
        if writer.unsaved is not None:
            if (told := self._unsaved_notice(writer)) is not None:
                yield told
        elif self._told_unsaved:  # room again before the reply ended: all of it is written
            self._told_unsaved = False
            yield Notice("the history can be written again: the whole reply is saved")
        if cut_at_output_limit(assembler.finish_reason) and assembler.error is None:
            yield Notice(OUTPUT_LIMIT)

    def _finish(self, writer: ReplyWriter, assembler: MessageAssembler, basis: dict[str, Any] | None) -> None:
        error = assembler.error
        cancelled = self._cancelled or (error is not None and error.kind == "cancelled")
        status: Status = "interrupted" if cancelled else "error" if error is not None else "complete"
        metadata: dict[str, Any] = {"base_url": writer.stamps["base_url"]}
        if basis is not None:
            metadata["basis"] = basis
        if assembler.finish_reason is not None:
            metadata["finish_reason"] = assembler.finish_reason
        if error is not None and not cancelled:
            metadata["error"] = {"kind": error.kind, "message": error.message, "status": error.status}
        if assembler.response_model:
            metadata["response_model"] = assembler.response_model
        writer.flush(assembler, status=status, final=True, usage=assembler.usage, metadata=metadata)

    # -- the gauge ---------------------------------------------------------
    def _estimate(self, stored: list[Content], system: str | None) -> int:
        """The tokenizer's estimate of a request's input, with no usage to build on."""
        return measure_context(
            stored,
            self.settings,
            model=self.config.model,
            system_prompt=system or "",
            tools_tokens=self.tool_tokens(self._offered),
            basis=None,
            counter=self._counter,
            thinking_tokens=self._thinking_cost(),
        ).effective

    def _thinking_cost(self) -> ThinkingTokens:
        """The provider's count of a message's thinking as its request carries it: which messages'
        thinking goes is the gauge's to say (its policy, now and at the last call)."""
        provider, settings, counter = self.provider, self.settings, self._counter
        return lambda message, current: provider.thinking_tokens(message, settings, counter, current_turn=current)

    @property
    def counter(self) -> TokenCounter:
        """The tokenizer (with its per-message cache) the gauge uses; compaction counts with it too."""
        return self._counter

    def gauge(self, partial: Content | None = None, *, head: str | None = None) -> ContextReading:
        """The one context number (footer, /context, compaction), the streaming reply included.

        ``head`` measures the chain ending there instead (the pre-flight of a retry).
        """
        if head is not None and self.session_id is not None:
            chain = self.store.chain(self.session_id, head=head)
            messages = self._compiler.merged(chain)
        elif self._streaming_parent is not None and self.session_id is not None:
            chain, messages = self._history_before_reply(self._streaming_parent)
            messages = list(messages)
            if partial is None and self.assembler is not None:
                partial = self.assembler.content()
        else:
            chain = self.history()
            messages = self._compiler.merged(chain)
        if partial is not None:
            messages.append(partial)
        basis, gaps = _basis(chain)
        return measure_context(
            messages,
            self.settings,
            model=self.config.model,
            system_prompt=self.settings.view.system_prompt or "",
            tools_tokens=self.tool_tokens(self.next_tools()),
            basis=basis,
            counter=self._counter,
            thinking_tokens=self._thinking_cost(),
            gaps=gaps,
        )

    def counting(self, step: int = COUNT_STEP) -> Iterator[None]:
        """Count the history the gauge reads, ``step`` messages at a time, pausing (yielding)
        between: the first gauge of a resumed session found nothing counted and counted it
        all in one call, which held the app's event loop (figures: docs/ui.md, "Speed")."""
        messages = self._compiler.merged(self.history())
        for end in range(step, len(messages), step):
            self._counter.totals(messages, end)
            yield

    def _history_before_reply(self, parent: str) -> tuple[list[Commit], list[Content]]:
        """The chain up to the reply being streamed, read once per reply.

        The footer asks for the gauge many times a second while a reply
        streams; that history does not change meanwhile, so re-reading and
        merging it each time would make every update cost the whole session.
        """
        cached = self._before_reply
        if cached is None or cached[0] != (self.session_id, parent):
            chain = self.store.chain(self.session_id or "", head=parent)
            cached = self._before_reply = ((self.session_id, parent), chain, self._compiler.merged(chain))
        return cached[1], cached[2]


def _started(pump: Coroutine[Any, Any, None], queue: asyncio.Queue[StreamEvent | _End]) -> asyncio.Task[None]:
    """``pump`` running, its end always told to the consumer of ``queue``."""
    task = asyncio.create_task(pump)
    task.add_done_callback(partial(_told_if_never_run, queue))
    return task


def _told_if_never_run(queue: asyncio.Queue[StreamEvent | _End], task: asyncio.Task[None]) -> None:
    """A pump cancelled before it first ran (Esc between the task's making and its start) never
    reached its own ``finally``: tell the consumer the end for it, or the reply waits for ever."""
    if task.cancelled():
        queue.put_nowait(StreamError(kind="cancelled", message="cancelled"))
        queue.put_nowait(_END)


def _not_sent(exc: StoreError) -> StreamError:
    """The next step fits the cause: the session deleted elsewhere, another program holding the
    file, or a full disk."""
    if isinstance(exc, SessionGone):
        step = "/new starts a new session, and ↑ brings the message back"
    elif "locked" in str(exc) or "busy" in str(exc):
        step = "send it again once the other program lets go of the file"
    else:
        step = "free some space and send it again"
    return StreamError(
        kind="storage", message=f"the history cannot be written ({exc}): your message was not sent; {step}"
    )


def without_earlier_thinking(messages: list[Content]) -> list[Content]:
    """``messages`` with the thinking of every turn before the one in progress removed (Anthropic
    accepts a history without earlier thinking; a tool loop's own steps keep theirs)."""
    start = current_turn_start(messages)
    return [remove_thinking(m) if i < start else m for i, m in enumerate(messages)]


def _last_user_at(chain: list[Commit]) -> int:
    """Where the chain's last user message is; nothing to retry or edit without one."""
    at = next((i for i in range(len(chain) - 1, -1, -1) if chain[i].kind == "user"), None)
    if at is None:
        raise ConversationError("nothing to retry: no message sent yet in this session")
    return at


def _basis(chain: list[Commit]) -> tuple[CallBasis | None, list[Gap]]:
    """The last call's actual usage; after a summary replaced history behind it, no basis (the gauge
    estimates) but the gaps the chain's last ``GAP_CALLS`` calls give to calibrate it: each one's actual
    input minus the tokenizer's estimate of it (a server's hidden prompt, its template's framing, a
    count that grows faster than ours)."""
    summarised = False
    gaps: list[Gap] = []
    for i in range(len(chain) - 1, -1, -1):
        commit = chain[i]
        if commit.kind == "summary":
            summarised = True
            continue
        if commit.kind == "assistant" and commit.usage is not None and "basis" in commit.metadata:
            usage, basis = commit.usage, commit.metadata["basis"]
            if summarised:
                pure = basis.get("pure_input")
                if isinstance(pure, int) and usage.input_tokens:
                    gaps.append((pure, usage.input_tokens - pure))
                if len(gaps) >= GAP_CALLS:
                    break
                continue
            if answered_nothing(chain, i):
                continue  # its reply is no message (the merge leaves it out): the count it covered is not the history's
            return CallBasis(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                message_count=int(basis["message_count"]),
                estimated_input=int(basis["estimated_input"]),
                policy=policy if (policy := basis.get("policy")) in get_args(StripPolicy) else None,
                tools_tokens=tools if isinstance(tools := basis.get("tools_tokens"), int) else None,
            ), []
    return None, gaps
