"""``tractui -p PROMPT``: one answer on stdout, thinking on stderr, for scripts and pipes.

Exit codes: 0 success, 1 no answer came: a provider (or history store) error,
or a tool loop stopped at ``tools.maxSteps``, 2 bad usage (an unknown or
ambiguous ``--resume`` session included) or output that cannot be written (a
full disk), 130 interrupted by Ctrl+C, 141 a reader that closed its pipe early
(the partial reply is kept, marked interrupted, in all three).
The reply is written to the same history as the app, so ``-c`` continues it,
and ``--resume [SESSION]`` continues any session.

In a tool loop a turn is several replies (one per request): stdout and the
``--json`` object hold them all, each step's text a paragraph of its own, as
the app shows them, and ``usage`` is summed over the turn's requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, assert_never

from tractui.cli.terminal import Terminal, one_line
from tractui.config.options import CliOptions
from tractui.config.paths import history_path
from tractui.config.startup import resolve_startup
from tractui.conversation.conversation import SERVER_WAIT, Conversation
from tractui.core.assemble import MessageAssembler
from tractui.core.content import ThinkingBlock, Usage
from tractui.core.events import (
    Done,
    Notice,
    ReclassifyAsThinking,
    RedactedThinking,
    RetryWait,
    StepLimit,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    ToolCallState,
    UsageEvent,
)
from tractui.core.inert import json_text
from tractui.errors import OutputError, StoreError, UserError
from tractui.providers.demo import DemoProvider
from tractui.store.history import Commit, HistoryStore
from tractui.tools.allow import unmatched_allows
from tractui.tools.setup import build_toolbox
from tractui.tools.toolbox import Toolbox

DIM_ITALIC, DIM = "\x1b[2;3m", "\x1b[2m"
EXIT_OK, EXIT_PROVIDER, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class _Outcome:
    interrupted: bool = False
    error: StreamError | None = None
    step_limit: StepLimit | None = None  # the tool loop stopped at tools.maxSteps before the model answered
    tools: list[dict[str, Any]] = field(default_factory=list)  # each call of the turn, with its result
    spent: list[Usage] = field(default_factory=list)  # the turn's requests besides its replies (compaction)
    started: set[str] = field(default_factory=set)  # the calls whose start (with arguments) is on stderr
    effective: int = 0  # the gauge after the turn, read while the servers still offer their tools

    def stopped(self) -> str | None:
        """The step limit as the turn's failure, in one line."""
        if self.step_limit is None:
            return None
        rounds = self.step_limit.rounds
        return (
            f"the tool loop stopped at its limit of {rounds} round{'s' if rounds != 1 else ''} of tool calls "
            "(tools.maxSteps) before the model answered; raise it with --set tools.maxSteps=N, "
            "or go on in this session with -c"
        )


def _gap(before: str) -> str:
    """What goes between the text so far and a later step's: a blank line, counting the newlines it ends with."""
    tail = before[-2:]
    return "\n" * (2 - (len(tail) - len(tail.rstrip("\n"))))


def joined(texts: Iterable[str]) -> str:
    """The steps' texts as stdout and the app show them: each a paragraph of its own."""
    out = ""
    for text in texts:
        if text:
            out = out + _gap(out) + text if out else text
    return out


class _Printer:
    """Streams answer text to ``out`` and thinking to ``err``, keeping each stream's line endings tidy."""

    def __init__(self, out: Terminal, err: Terminal, *, show_thinking: bool, quiet: bool) -> None:
        self.out, self.err = out, err
        self.show_thinking = show_thinking and not quiet
        self.quiet = quiet
        self.thinking_open = False
        self.out_tail = ""  # the last characters written to ``out``
        self.step: object = None  # the reply (of a tool loop's several) whose text was written last

    def note(self, text: str) -> None:
        self.close_thinking()
        self.err.styled(DIM, text)
        self.err.write("\n")
        self.err.flush()

    def thinking(self, text: str) -> None:
        if not self.show_thinking:
            return
        self.err.styled(DIM_ITALIC, text)
        self.err.flush()
        self.thinking_open = True

    def close_thinking(self) -> None:
        if self.thinking_open:
            self.err.write("\n")
            self.err.flush()
            self.thinking_open = False

    def text(self, text: str, step: object = None) -> None:
        """Answer text of the reply ``step``: a later reply's starts a paragraph of its own."""
        if self.quiet or not text:
            return
        self.close_thinking()
        if step is not self.step and self.out_tail:
            text = _gap(self.out_tail) + text
        self.step = step
        self.out.write(text)
        self.out.flush()
        self.out_tail = (self.out_tail + text)[-2:]

    def end(self) -> None:
        self.close_thinking()
        if not self.quiet and self.out_tail and not self.out_tail.endswith("\n"):
            self.out.write("\n")
            self.out.flush()


def _usage_json(usage: Usage | None) -> dict[str, int] | None:
    if usage is None:
        return None
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "reasoning": usage.reasoning_tokens,
        "cached": usage.cached_input_tokens,
    }


def _summed(usages: Iterable[Usage | None]) -> Usage | None:
    """The turn's usage: every request's that reported one, added up."""
    known = [u for u in usages if u is not None]
    return sum(known[1:], known[0]) if known else None


def result_json(conv: Conversation, outcome: _Outcome) -> dict[str, Any]:
    """The ``--json`` object: the whole turn (every reply of a tool loop), its thinking blocks,
    usage summed over its requests (a compaction's summary calls too), each step on its own, and
    the gauge's number (``_run`` reads it)."""
    replies = conv.replies or [MessageAssembler()]
    blocks = [b for r in replies for b in r.content().blocks if isinstance(b, ThinkingBlock)]
    error: dict[str, str] | None = None
    if outcome.error is not None:
        error = {"kind": outcome.error.kind, "message": outcome.error.message}
    elif (stopped := outcome.stopped()) is not None:
        error = {"kind": "max_steps", "message": stopped}
    return {
        "text": joined(r.text for r in replies),
        "reasoning": joined(r.reasoning for r in replies),
        "reasoning_blocks": [
            {
                "source_field": b.source_field,
                "signed": b.signature is not None,
                "redacted": b.is_hidden,
                "text": b.thought,
            }
            for b in blocks
        ],
        "usage": _usage_json(_summed([*outcome.spent, *(r.usage for r in replies)])),
        "effective_context_tokens": outcome.effective,
        "finish_reason": "interrupted" if outcome.interrupted else replies[-1].finish_reason,
        "session": conv.session_id,
        "error": error,
        "tools": outcome.tools,
        "steps": [
            {
                "text": r.text,
                "reasoning": r.reasoning,
                "usage": _usage_json(r.usage),
                "finish_reason": r.finish_reason,
                "tool_calls": [c.id for c in r.content().tool_calls],
            }
            for r in conv.replies
        ],
    }


async def _stream(conv: Conversation, prompt: str, printer: _Printer, outcome: _Outcome) -> None:
    try:
        async for event in conv.send(prompt):
            match event:
                case TextDelta():
                    printer.text(event.text, conv.assembler)
                case ThinkingDelta():
                    printer.thinking(event.text)
                case ThinkingEnd():
                    printer.close_thinking()
                case RetryWait():
                    printer.note(
                        f"retrying in {event.seconds:.1f} s (attempt {event.attempt}/{event.max_attempts}): "
                        f"{event.reason}"
                    )
                case StepLimit():  # told as the turn's failure once it has ended
                    outcome.step_limit = event
                case Notice():
                    printer.note(event.message)
                    if event.spent is not None:
                        outcome.spent.append(event.spent)
                case StreamError():
                    if event.kind != "cancelled":
                        outcome.error = event
                case ToolCallState():
                    _tool_line(event, conv, printer, outcome)
                case (
                    ReclassifyAsThinking()
                    | ThinkingSignature()
                    | RedactedThinking()
                    | ToolCallDelta()
                    | UsageEvent()
                    | Done()
                ):
                    pass
                case _:
                    assert_never(event)
    except asyncio.CancelledError:
        outcome.interrupted = True
        raise
    finally:
        printer.end()


def _tool_line(state: ToolCallState, conv: Conversation, printer: _Printer, outcome: _Outcome) -> None:
    """A tool call on stderr: once when it starts (with its arguments), once when it has its result."""
    assembler = conv.assembler
    call = next((c for c in assembler.content().tool_calls if c.id == state.call_id), None) if assembler else None
    name = f"{state.server}.{state.tool}" if state.server else state.tool
    match state.status:
        case "waiting":
            return
        case "running":
            outcome.started.add(state.call_id)
            printer.note(f"tool {name} {one_line(call.arguments if call else '')}")
            return
        case _:
            result = one_line(state.result)
            shown = result if len(result) <= 200 else result[:199] + "…"
            # a call that never ran (denied, not run) has had no line with its arguments: this one has them
            asked = "" if state.call_id in outcome.started else f" {one_line(call.arguments if call else '')}"
            printer.note(f"tool {name}{asked} → {state.status} ({state.duration:.2f} s): {shown}")
    outcome.tools.append(
        {
            "id": state.call_id,
            "server": state.server,
            "tool": state.tool,
            "arguments": call.arguments if call else None,
            "status": state.status,
            "result": state.result,
            "duration": round(state.duration, 3),
        }
    )


def _last_reply(store: HistoryStore, session_id: str | None, options: CliOptions) -> Commit | None:
    """The continued session's last reply, whose setup it goes on with unless the command line chose one."""
    if session_id is None or options.chose_setup:
        return None
    store.see_head(session_id)
    return store.last_reply(session_id)


def run_print(options: CliOptions, *, out: Terminal | None = None, err: Terminal | None = None) -> int:
    out = out or Terminal(sys.stdout)
    err = err or Terminal(sys.stderr)
    prompt = options.prompt or ""
    if not prompt.strip():
        err.write("tractui: -p needs a prompt\n")
        return EXIT_USAGE
    try:
        startup = resolve_startup(options)  # a bad flag is found before the history is opened
    except UserError as exc:
        err.write(f"tractui: {exc}\n")
        return EXIT_USAGE
    try:
        store = HistoryStore(history_path())
    except StoreError as exc:
        err.write(f"tractui: {exc}\n")
        return EXIT_PROVIDER
    with store:
        try:
            session_id = _continued(store, options)
        except StoreError as exc:  # an unknown or ambiguous --resume SESSION: nothing is sent or written
            err.write(f"tractui: {exc}\n")
            return EXIT_USAGE
        if (last_reply := _last_reply(store, session_id, options)) is not None:
            startup = resolve_startup(options, last_reply=last_reply)  # flags checked above; the session's setup
        # --json prints once at the end: pacing the demo's words would only make the caller wait
        unpaced = DemoProvider(startup.config, pace=0) if options.json and startup.config.provider == "demo" else None
        conv = Conversation(
            store,
            startup.settings,
            startup.config,
            session_id=session_id,
            profile_name=startup.profile_name,
            mcp_servers=startup.mcp_servers,
            provider=unpaced,
        )
        try:
            _ = conv.provider  # an unknown provider is bad usage, found before anything is written
        except UserError as exc:
            err.write(f"tractui: {exc}\n")
            return EXIT_USAGE
        toolbox = conv.tools = build_toolbox(
            startup.mcp,
            startup.config,
            startup.mcp_servers,
            allow=options.allow_tools,
            allow_all=options.allow_all_tools,
        )
        printer = _Printer(
            out, err, show_thinking=startup.settings.view.reasoning_include_in_response, quiet=options.json
        )
        for warning in startup.warnings:
            printer.note(f"warning: {warning}")
        if options.continue_ and session_id is None:
            printer.note("no earlier session to continue; starting a new one")
        outcome = _Outcome()
        failed: OutputError | BrokenPipeError | None = None  # stdout could not take the answer
        allow = () if options.allow_all_tools else options.allow_tools
        try:
            asyncio.run(_run(conv, toolbox, prompt, printer, outcome, allow, measure=options.json))
            if options.json:
                out.write(json_text(result_json(conv, outcome)) + "\n")
                out.flush()
        except KeyboardInterrupt:
            outcome.interrupted = True
        except (OutputError, BrokenPipeError) as exc:  # the reply stopped there: saved and told below all the same
            failed = exc
        code = _told(conv, outcome, err)
        if isinstance(failed, BrokenPipeError):
            raise failed  # the reader has all it wanted: ``main`` ends quietly
        if failed is not None:  # ``main`` tells it, as for every command
            raise OutputError(f"{failed}; what arrived is kept in session {conv.session_id}") from None
        return code


def _told(conv: Conversation, outcome: _Outcome, err: Terminal) -> int:
    """The reply written to the history if it is not yet, and how the run ended, on stderr."""
    if not conv.write_unsaved():
        err.write(f"tractui: the reply is not in the history: {conv.unsaved}\n")
        return EXIT_INTERRUPTED if outcome.interrupted else EXIT_PROVIDER
    if outcome.interrupted:
        err.write(f"tractui: interrupted; the partial reply is kept in session {conv.session_id}\n")
        return EXIT_INTERRUPTED
    if outcome.error is not None:
        err.write(f"tractui: {outcome.error.message}\n")
        return EXIT_PROVIDER
    if (stopped := outcome.stopped()) is not None:
        err.write(f"tractui: {stopped}\n")
        return EXIT_PROVIDER
    return EXIT_OK


def _continued(store: HistoryStore, options: CliOptions) -> str | None:
    """The session the run continues: ``--resume``'s (an id or unique prefix; the latest when
    none, ``StoreError`` when there is none or no such one), ``-c``'s latest, or none."""
    if options.resume is not None:
        return store.resolve_session(options.resume or None)
    return store.latest_session() if options.continue_ else None


async def _run(
    conv: Conversation,
    toolbox: Toolbox | None,
    prompt: str,
    printer: _Printer,
    outcome: _Outcome,
    allow: tuple[str, ...] = (),
    *,
    measure: bool = False,
) -> None:
    """The turn, with the servers running from before it until after ``measure`` has read the gauge:
    the servers' tools are part of the next request, as the app's footer counts them, and stopped
    servers offer none, which would take their definitions off the figure the last call counted."""
    if toolbox is not None:
        toolbox.start()
    check = asyncio.create_task(_check_servers(toolbox, allow, printer)) if allow or toolbox is not None else None
    try:
        await _stream(conv, prompt, printer, outcome)
        if measure:
            outcome.effective = conv.gauge().effective
    finally:
        if check is not None:
            told = check.done()
            check.cancel()
            with contextlib.suppress(asyncio.CancelledError, OutputError, OSError):  # stderr failing: no more to say
                await check
            if not told and (toolbox is None or not toolbox.starting):  # settled, the check not woken yet
                with contextlib.suppress(OutputError, OSError):  # (still starting: the turn did not need them)
                    _tell_servers(toolbox, allow, printer)
        if toolbox is not None:
            await toolbox.aclose()
        await conv.aclose()


async def _check_servers(toolbox: Toolbox | None, allow: tuple[str, ...], printer: _Printer) -> None:
    """Once the servers have listed their tools (the first request waits for them as long), a line
    for each server that failed to start and each ``--allow-tool`` name that allows nothing;
    beside the turn, which it never holds up."""
    if toolbox is not None:
        await toolbox.settled(SERVER_WAIT)
    _tell_servers(toolbox, allow, printer)


def _tell_servers(toolbox: Toolbox | None, allow: tuple[str, ...], printer: _Printer) -> None:
    for connection in toolbox.connections.values() if toolbox is not None else ():
        if connection.state == "failed" and connection.ready_after is None:  # one that failed later told its call
            why = f": {connection.reason}" if connection.reason else ""
            printer.note(
                f"warning: MCP server {connection.name} failed{why}; its tools are not offered (its log: {connection.log_path})"
            )
    for line in unmatched_allows(toolbox, allow):
        printer.note(f"warning: {line}")
