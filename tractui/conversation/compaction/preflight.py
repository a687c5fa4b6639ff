"""The pre-flight before every request: measure, maybe compact once, refuse what cannot fit.

The number is the gauge's (``Conversation.gauge()`` → ``measure_context`` on
exactly what will be sent, reasoning policy applied): the footer, ``/context``
and this decision read the same figure. At most one automatic compaction runs
per request, so a summary that does not help can never start a loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Protocol

from tractui.conversation.compaction import plan
from tractui.conversation.compaction.clear import Cleared, clear_old_results
from tractui.conversation.compaction.run import (
    FAILED,
    CompactionEvent,
    CompactionResult,
    compact,
    compaction_count,
    leave_out,
    live_turns,
    resolve_summarizer,
)
from tractui.core.content import Content
from tractui.core.events import Notice, StreamError, StreamEvent
from tractui.core.gauge import ContextReading
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.errors import UserError
from tractui.providers import ProviderConfig
from tractui.store.history import HistoryStore

if TYPE_CHECKING:
    from tractui.providers.transport import Provider


class Compactable(Protocol):
    """What compaction needs from a conversation (``tractui.conversation.conversation.Conversation`` provides it)."""

    store: HistoryStore
    settings: Settings
    config: ProviderConfig
    profile_name: str | None

    session_id: str | None

    @property
    def provider(self) -> Provider: ...

    @property
    def counter(self) -> TokenCounter: ...

    def gauge(self, partial: Content | None = None, *, head: str | None = None) -> ContextReading: ...


def keep_budget(reading: ContextReading) -> int:
    """Tokens (as the tokenizer counts them) the verbatim turns may keep so the compacted request lands
    well under the threshold: the system prompt, the tools and what the provider counts beyond the
    tokenizer (the last actual input says how much) come off first."""
    fixed = reading.breakdown.system + reading.breakdown.tools + max(0, reading.offset)
    return max(0, int(reading.threshold * plan.KEEP_SHARE_OF_THRESHOLD) - fixed)


async def compact_conversation(
    conv: Compactable,
    instructions: str | None = None,
    *,
    automatic: bool = False,
    head: str | None = None,
) -> AsyncIterator[CompactionEvent]:
    """``/compact [instructions]``: progress events, then one ``CompactionResult``.

    Cancel by cancelling the task that iterates it (or closing the iterator):
    nothing is written until the last step, so the history stays as it was.
    """
    if conv.session_id is None:
        yield CompactionResult(False, "nothing to compact: the conversation is empty", automatic=automatic)
        return
    if head is None:  # this window's branch, even if another tractui has written to the session since
        head = conv.store.seen_head(conv.session_id)
    try:
        summarizer = resolve_summarizer(conv.config, conv.settings, conv.provider, conv.counter)
    except UserError as exc:  # a bad compaction.profile or provider name
        yield CompactionResult(False, f"{FAILED}{exc}", automatic=automatic)
        return
    try:
        events = compact(
            conv.store,
            conv.session_id,
            conv.settings,
            summarizer,
            conv.counter,
            instructions=instructions,
            automatic=automatic,
            keep_budget=keep_budget(conv.gauge(head=head)),
            head=head,
            provenance={"provider": conv.config.provider, "model": conv.config.model, "profile": conv.profile_name},
        )
        async for event in events:
            yield event
    finally:
        await summarizer.aclose()


MIN_ANSWER = 256
"""The smallest output reserve worth suggesting (``/set max-tokens``) to make a request fit."""


def over_limit(reading: ContextReading, *, carried: bool = True, message: int | None = None) -> StreamError | None:
    """The hard check: effective + output reserve must fit the window, or nothing is sent
    (``carried=False``: an estimate without the gap it carries from earlier calls). ``message``, the
    tokens of the turn being sent, lets the advice name only what would make room."""
    effective = reading.effective if carried or reading.basis is not None else reading.effective - reading.offset
    over = effective + reading.reserve - reading.limit
    if over <= 0:
        return None
    ways = [fewer] if (fewer := _fewer_tokens(reading, over)) else []
    if message is None or message > over:
        ways.insert(0, "shorten the message")
    else:
        ways.append("/compact")
    return StreamError(
        kind="context_length",
        message=(
            f"not sent: this request needs {effective:,} tokens + {reading.reserve:,} reserved for the answer, "
            f"{over:,} over the {reading.limit:,}-token context limit; {' or '.join(ways)}"
        ),
    )


def _fewer_tokens(reading: ContextReading, over: int) -> str | None:
    """A smaller output reserve that makes room for ``over`` tokens, while still worth asking for."""
    return f"/set max-tokens {reading.reserve - over} or lower" if reading.reserve - over >= MIN_ANSWER else None


def alone_over_limit(reading: ContextReading, message: int) -> StreamError | None:
    """The turn being sent cannot fit however the history is compacted (it is always kept): refused before
    compacting, which would gain nothing and run again at every send."""
    need = reading.breakdown.system + reading.breakdown.tools + message
    over = need + reading.reserve - reading.limit
    if over <= 0:
        return None
    parts = reading.breakdown
    ways = [
        way
        for size, way in (
            (message, "shorten the message"),
            (parts.tools, f"/set tools.enabled false (the tools' definitions take {parts.tools:,})"),
            (parts.system, f"a shorter system-prompt (it takes {parts.system:,})"),
        )
        if size >= over
    ]
    if (fewer := _fewer_tokens(reading, over)) is not None:
        ways.append(fewer)
    return StreamError(
        kind="context_length",
        message=(
            f"not sent: your message alone needs {need:,} tokens (with the system prompt and tools) + "
            f"{reading.reserve:,} reserved for the answer, {over:,} over the {reading.limit:,}-token context limit, "
            f"so compacting the history cannot make room; {' or '.join(ways) or 'shorten the message, the system prompt and the tools'}"
        ),
    )


class Preflight:
    """One request's check of the chain ending at ``parent_id`` (the message being answered).

    Iterate ``run()`` and forward its events; then send nothing if ``blocked``,
    else answer under ``parent_id`` (the summary commit when one was written).
    """

    def __init__(self, conv: Compactable, parent_id: str) -> None:
        self.conv = conv
        self.parent_id = parent_id
        self.blocked: StreamError | None = None
        self.result: CompactionResult | None = None
        self.reading: ContextReading | None = None  # the last measurement: what is sent

    async def run(self) -> AsyncIterator[StreamEvent]:
        reading = self.conv.gauge(head=self.parent_id)
        if reading.should_compact() and self.conv.settings.view.compaction_auto:
            if (alone := alone_over_limit(reading, self._message_tokens())) is not None:
                self.reading, self.blocked = reading, alone
                return
            yield Notice(
                f"context {reading.effective:,} tokens is over the compaction threshold ({reading.threshold:,}): compacting first"
            )
            cleared = self._clear_old_results()
            if cleared is not None:
                self.parent_id = cleared.commit_id
                yield Notice(cleared.message)
                reading = self.conv.gauge(head=self.parent_id)
                if not reading.should_compact():  # enough without a summary
                    if (told := self._settle(reading)) is not None:
                        yield told
                    return
            async for event in compact_conversation(self.conv, automatic=True, head=self.parent_id):
                if isinstance(event, CompactionResult):
                    self.result = event
                else:
                    yield Notice(f"compacting: {event.message}", progress=True)
            if self.result is not None and self.result.ok and self.result.commit_id is not None:
                self.parent_id = self.result.commit_id
                total = compaction_count(self.conv.store.chain(self.conv.session_id or "", head=self.parent_id))
                yield Notice(f"{self.result.message} (compacted {total}×)", spent=self.result.usage)
            elif self.result is not None:
                reading = self.conv.gauge(head=self.parent_id)
                if over_limit(reading) is not None and self.result.message.startswith(FAILED):
                    for note in self._leave_out(reading, self.result):
                        yield note
                else:
                    yield Notice(self.result.message, spent=self.result.usage)
            reading = self.conv.gauge(head=self.parent_id)
        if (told := self._settle(reading)) is not None:
            yield told

    def _settle(self, reading: ContextReading) -> Notice | None:
        """Send or refuse on ``reading``. Refused only by the gap an estimate carries from earlier calls
        (right after a compaction), a request the tokenizer fits is sent, with a notice: the provider's
        own context-length error is handled (``trim_for_retry``), a refusal would repeat at every send."""
        self.reading = reading
        self.blocked = over_limit(reading)
        if self.blocked is not None:  # counted only now: the advice names what would make room
            self.blocked = over_limit(reading, message=self._message_tokens())
        if self.blocked is None or reading.basis is not None or reading.offset <= 0:
            return None
        if over_limit(reading, carried=False) is not None:
            return None
        self.blocked = None
        return Notice(
            f"sending: the estimate ({reading.effective:,} tokens) is over the limit only by the "
            f"{reading.offset:,} tokens earlier calls were counted beyond the tokenizer, which may not apply now"
        )

    def _message_tokens(self) -> int:
        """The turn being sent, as the tokenizer counts it: what any compaction keeps."""
        conv = self.conv
        turns = live_turns(conv.store.chain(conv.session_id or "", head=self.parent_id), conv.settings, conv.counter)
        return turns[-1].tokens if turns else 0

    def _clear_old_results(self) -> Cleared | None:
        conv = self.conv
        return clear_old_results(
            conv.store,
            conv.session_id or "",
            conv.counter,
            head=self.parent_id,
            provenance={"provider": conv.config.provider, "model": conv.config.model, "profile": conv.profile_name},
        )

    def _leave_out(self, reading: ContextReading, failed: CompactionResult) -> list[Notice]:
        """No summary, and the request would not fit: the oldest turns are left out, told in one notice
        with why (the history is not unchanged then); if they cannot be, the failure and that."""
        conv = self.conv
        result = leave_out(
            conv.store,
            conv.session_id or "",
            conv.settings,
            conv.counter,
            reason=failed.message.removeprefix(FAILED),
            keep_budget=keep_budget(reading),
            head=self.parent_id,
            provenance={"provider": conv.config.provider, "model": conv.config.model, "profile": conv.profile_name},
        )
        if result.ok and result.commit_id is not None:
            self.result, self.parent_id = result, result.commit_id
            return [Notice(result.message, spent=failed.usage)]
        return [Notice(failed.message, spent=failed.usage), Notice(result.message)]


def trim_for_retry(
    messages: Sequence[Content], counter: TokenCounter, reading: ContextReading | None
) -> tuple[list[Content], Notice] | None:
    """After a provider's context-length error: drop the oldest compiled turns (once; the store is untouched).

    Aims below both the threshold and three quarters of what was refused,
    since the provider's count evidently exceeds ours. ``None`` when only the
    last turn is left, so the error stands.
    """
    tokens = [counter.count_content(m) for m in messages]
    target = int(sum(tokens) * 0.75)
    if reading is not None:
        target = min(reading.threshold, target) - reading.breakdown.system - reading.breakdown.tools
    drop = plan.trim_oldest(messages, tokens, max(0, target))
    if drop == 0:
        return None
    kept = list(messages[drop:])
    dropped = len(plan.turn_starts(messages[:drop])) or 1
    return kept, Notice(
        f"the provider said the context is too long: retrying once without the oldest {dropped} turn{'s' if dropped != 1 else ''} "
        f"({sum(tokens[:drop]):,} tokens; they stay in the history)"
    )
