"""Compaction: replace the older part of a conversation with a structured summary.

The summary is a ``summary`` commit naming the range it stands in for; the
originals stay in the store (``tractui log`` and the app show them as
compacted). ``compact`` is an async iterator of progress events ending with
one ``CompactionResult``; it writes nothing until the very end, so
cancelling it, or any failure on the way, leaves the history as it was.

The *when* lives in ``tractui.conversation.compaction.preflight`` (before each request); this module
is the *how*.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from tractui.conversation.compaction import plan, prompt
from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content, Usage
from tractui.core.events import KEPT, StreamError
from tractui.core.gauge import output_reserve
from tractui.core.reasoning import thinking_policy
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.errors import CompactionError, EmptySummaryError, StoreError, UserError
from tractui.providers import ProviderConfig, make_provider
from tractui.store.compile import effective_commits, merge_commits, summary_metadata
from tractui.store.history import Commit, HistoryStore

if TYPE_CHECKING:
    from tractui.providers.transport import Provider

SUMMARY_SHARE = 8  # the summary may use at most 1/8 of the summarising model's window
MIN_SUMMARY_TOKENS = 128
CALL_OVERHEAD = 64  # message framing and the request wrapper around the transcript
RENDER_OVERHEAD = 12  # "### Assistant", "(thinking)" labels and blank lines around one rendered message
NOTHING = "nothing to compact: only the most recent turns are in the history"
FAILED = "compaction failed, history unchanged: "  # begins the message of a compaction that wrote nothing
SPLITS = (1, 2, 4)  # after an empty summary, the transcript is cut into parts this many times smaller


@dataclass(frozen=True, slots=True)
class CompactionProgress:
    """Where a compaction is; ``part``/``parts`` count summary calls."""

    stage: Literal["planning", "summarising", "storing"]
    message: str
    part: int = 0
    parts: int = 0


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The outcome. ``ok`` false means the history is unchanged and ``message`` says why."""

    ok: bool
    message: str
    before_tokens: int = 0  # what the replaced range weighed as sent
    after_tokens: int = 0  # what the summary weighs
    replaced_turns: int = 0
    kept_turns: int = 0
    commit_id: str | None = None
    automatic: bool = False
    usage: Usage | None = None  # what its summary calls cost, as the provider reported it


CompactionEvent: TypeAlias = CompactionProgress | CompactionResult


@dataclass
class Summarizer:
    """The model that writes summaries: the active one, or ``compaction.model`` / ``compaction.profile``."""

    provider: Provider
    settings: Settings  # the summarising model's settings (its own context-limit)
    counter: TokenCounter
    label: str
    owns_provider: bool = False
    spent: Usage | None = None  # the usage its summary calls reported, added up

    @property
    def output_budget(self) -> int:
        limit = self.settings.view.context_limit
        return max(MIN_SUMMARY_TOKENS, min(output_reserve(self.settings), limit // SUMMARY_SHARE))

    @property
    def input_budget(self) -> int:
        """Tokens the transcript (plus a running summary) may take in one call."""
        limit = self.settings.view.context_limit
        margin = limit // 20
        return limit - self.output_budget - self.counter.count(prompt.SYSTEM_PROMPT) - CALL_OVERHEAD - margin

    def call_settings(self, max_tokens: int | None = None) -> Settings:
        """No thinking (it would eat the budget; sent as an explicit switch where the protocol has one)
        and output capped to the summary budget, or to ``max_tokens`` when a retry gives more room."""
        settings = self.settings.copy()
        settings.set("reasoning.enabled", False)
        settings.set("max-tokens", max_tokens or self.output_budget)
        return settings

    def room(self, text: str) -> int:
        """Output room a call with ``text`` has in the window (at most half of it), for a model that
        thinks although asked not to: its thinking and the summary must both fit."""
        limit = self.settings.view.context_limit
        used = self.counter.count(text) + self.counter.count(prompt.SYSTEM_PROMPT) + CALL_OVERHEAD + limit // 20
        return max(self.output_budget, min(limit - used, limit // 2))

    async def summarise(self, text: str, *, roomy: bool = False) -> str:
        """The summary of one call; ``roomy`` gives the call all the output room the window leaves."""
        assembler = MessageAssembler()
        settings = self.call_settings(self.room(text) if roomy else None)
        stream = self.provider.stream([Content.human(text)], settings, system=prompt.SYSTEM_PROMPT)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                if isinstance(event, StreamError):
                    # nothing of a cut summary is kept, whatever the stream's error says of its text
                    why = event.message.removesuffix(KEPT)
                    raise CompactionError(f"the summary call to {self.label} failed: {why}")
                assembler.feed(event)
        if assembler.usage is not None:
            self.spent = assembler.usage if self.spent is None else self.spent + assembler.usage
        summary = assembler.content().text.strip()
        if not summary:
            raise EmptySummaryError(f"the summary call to {self.label} returned no text")
        return summary

    async def aclose(self) -> None:
        if self.owns_provider:
            await self.provider.aclose()


def resolve_summarizer(
    config: ProviderConfig, settings: Settings, provider: Provider, counter: TokenCounter
) -> Summarizer:
    """Pick the summarising model: ``compaction.profile``, else ``compaction.model``, else the active one.

    A profile that cannot be loaded raises ``CompactionError`` (one line) before anything is sent.
    """
    profile_name = settings.view.compaction_profile
    if profile_name:
        from tractui.config.profiles import ProfileStore  # only when used: profiles pull in TOML writing

        try:
            profile = ProfileStore().load(profile_name)
            cfg = profile.provider_config()
            return Summarizer(
                make_provider(cfg),
                Settings(profile.settings),
                TokenCounter(cfg.model),
                f"{cfg.provider}/{cfg.model}",
                True,
            )
        except UserError as exc:
            raise CompactionError(f"compaction.profile '{profile_name}': {exc}") from None
    model = settings.view.compaction_model
    if model and model != config.model:
        cfg = dataclasses.replace(config, model=model)
        return Summarizer(make_provider(cfg), settings.copy(), TokenCounter(model), f"{cfg.provider}/{model}", True)
    return Summarizer(provider, settings.copy(), counter, f"{config.provider}/{config.model}")


@dataclass
class Turn:
    """One turn of the live history: its commits (a summary is a turn of its own) and its stored messages."""

    commits: list[Commit]
    messages: list[Content] = field(default_factory=list)
    tokens: int = 0  # as sent: thinking counted only when the policy sends it


def thinking_sent_for_older_turns(settings: Settings) -> bool:
    """Whether an earlier turn's thinking goes out with the request (and so counts and is summarised).

    ``allButLast`` keeps only the newest reply's thinking, and that turn is
    always kept verbatim, so for what may be summarised it acts like ``all``.
    """
    return thinking_policy(settings) == "none"


def live_turns(chain: Sequence[Commit], settings: Settings, counter: TokenCounter) -> list[Turn]:
    """The chain as the model sees it (summaries substituted), grouped into turns and counted."""
    turns: list[Turn] = []
    for commit in effective_commits(chain):
        if commit.kind in ("user", "summary") or not turns:
            turns.append(Turn([commit]))
        else:
            turns[-1].commits.append(commit)
    thinking = thinking_sent_for_older_turns(settings)
    for turn in turns:
        turn.messages = merge_commits(turn.commits)
        turn.tokens = counter.count_messages(turn.messages, include_thinking=thinking)
    return turns


def compaction_count(chain: Sequence[Commit]) -> int:
    """How many times this conversation was compacted (summary commits on its chain, old tool results
    cleared included), for "compacted 2×"."""
    return sum(1 for c in chain if c.kind == "summary")


def _range_ids(commits: Sequence[Commit]) -> tuple[str, str]:
    """First and last chain ids a new summary replaces; an earlier summary stands for its own range."""
    first, last = commits[0], commits[-1]
    first_id = first.metadata["replaces"]["first"] if first.kind == "summary" else first.id
    last_id = last.metadata["replaces"]["last"] if last.kind == "summary" else last.id
    return first_id, last_id


def _shorten(text: str, budget: int, counter: TokenCounter) -> str:
    """Keep the head and tail of a message too big for one summary call."""
    tokens = counter.count(text)
    if tokens <= budget:
        return text
    keep = max(1, int(len(text) * budget / tokens * 0.9) // 2)
    while True:
        out = f"{text[:keep]}\n[… {len(text) - 2 * keep:,} characters left out …]\n{text[-keep:]}"
        if counter.count(out) <= budget or keep <= 1:
            return out
        keep = int(keep * 0.8)


async def compact(
    store: HistoryStore,
    session_id: str,
    settings: Settings,
    summarizer: Summarizer,
    counter: TokenCounter,
    *,
    instructions: str | None = None,
    automatic: bool = False,
    keep_budget: int | None = None,
    head: str | None = None,
    provenance: dict[str, str | None] | None = None,
) -> AsyncIterator[CompactionEvent]:
    """Summarise the older turns of the chain ending at ``head`` (default: the session's head).

    The summary commit is appended under ``head``, so the next reply builds on
    it. ``keep_budget`` caps the tokens kept verbatim (the pre-flight passes
    what may remain for the request to land under the threshold). Yields
    progress, then exactly one ``CompactionResult``.
    """
    yield CompactionProgress("planning", "choosing what to summarise")
    chain = store.chain(session_id, head=head)
    turns, count = _split(chain, settings, counter, keep_budget)
    if count == 0:
        yield CompactionResult(False, NOTHING, automatic=automatic)
        return
    older, kept = turns[:count], turns[count:]
    before = sum(t.tokens for t in older)
    reserved = counter.count(instructions or "")
    summary: str | None = None
    for split in SPLITS:
        try:
            parts = transcript_parts(
                older, summarizer, thinking_sent_for_older_turns(settings), reserved=reserved, split=split
            )
            summary = None
            for i, part in enumerate(parts, 1):
                of = f" (part {i} of {len(parts)})" if len(parts) > 1 else ""
                yield CompactionProgress(
                    "summarising", f"summarising {before:,} tokens with {summarizer.label}{of}", i, len(parts)
                )
                text = prompt.request_text(part, previous=summary, instructions=instructions, part=(i, len(parts)))
                summary = await summarizer.summarise(text, roomy=split > 1)
            break
        except EmptySummaryError as exc:
            if split == SPLITS[-1]:
                yield CompactionResult(
                    False,
                    f"{FAILED}{exc}",
                    before_tokens=before,
                    automatic=automatic,
                    usage=summarizer.spent,
                )
                return
        except CompactionError as exc:
            yield CompactionResult(
                False,
                f"{FAILED}{exc}",
                before_tokens=before,
                automatic=automatic,
                usage=summarizer.spent,
            )
            return
    first_id, last_id = _range_ids([c for t in older for c in t.commits])
    meta = summary_metadata(first_id, last_id, automatic=automatic, before_tokens=before, summarizer=summarizer.label)
    if instructions:
        meta["instructions"] = instructions
    content = prompt.summary_content(summary or "", {"replaced_turns": count, "summarizer": summarizer.label})
    after = counter.count_messages([content])
    reason = plan.rejection(before, after)
    if reason is not None:
        yield CompactionResult(
            False, reason, before_tokens=before, after_tokens=after, automatic=automatic, usage=summarizer.spent
        )
        return
    yield CompactionProgress("storing", "writing the summary commit")
    meta["after_tokens"] = after
    parent = head if head is not None else chain[-1].id
    try:
        commit = _append_summary(store, session_id, content, parent, meta, provenance, summarizer.spent)
    except StoreError as exc:  # a full disk, a file another program holds: one line, not a failed worker
        yield CompactionResult(
            False,
            f"{FAILED}the summary cannot be written ({exc})",
            before_tokens=before,
            after_tokens=after,
            automatic=automatic,
            usage=summarizer.spent,
        )
        return
    yield CompactionResult(
        True,
        f"compacted {count} turn{'s' if count != 1 else ''} ({before:,} tokens) into a {after:,}-token summary; {_kept_words(kept)} kept verbatim",
        before_tokens=before,
        after_tokens=after,
        replaced_turns=count,
        kept_turns=len(kept),
        commit_id=commit.id,
        automatic=automatic,
        usage=summarizer.spent,
    )


def _kept_words(kept: Sequence[Turn]) -> str:
    """``2 recent turns and your message``: the message about to be sent (no reply yet) is no recent turn."""
    pending = bool(kept) and not any(c.kind == "assistant" for c in kept[-1].commits)
    answered = len(kept) - pending
    words = [f"{answered} recent turn{'s' if answered != 1 else ''}"] if answered or not pending else []
    return " and ".join([*words, *(["your message"] if pending else [])])


def _append_summary(
    store: HistoryStore,
    session_id: str,
    content: Content,
    parent_id: str,
    metadata: dict[str, Any],
    provenance: dict[str, str | None] | None,
    usage: Usage | None = None,
) -> Commit:
    """The ``summary`` commit under ``parent_id``, stamped with who wrote it and what writing it
    cost (the session's totals count it); ``StoreError`` when it cannot be."""
    prov = provenance or {}
    return store.append(
        session_id,
        "summary",
        content,
        parent_id=parent_id,
        usage=usage,
        metadata=metadata,
        provider=prov.get("provider"),
        model=prov.get("model"),
        profile=prov.get("profile"),
    )


def _split(
    chain: Sequence[Commit], settings: Settings, counter: TokenCounter, keep_budget: int | None
) -> tuple[list[Turn], int]:
    """The live turns and how many leading ones to replace (0: nothing worth replacing)."""
    turns = live_turns(chain, settings, counter)
    count = plan.choose_split(
        [t.tokens for t in turns],
        keep_turns=settings.view.compaction_keep_turns,
        keep_fraction=settings.view.compaction_keep_fraction,
        limit=settings.view.context_limit,
        keep_budget=keep_budget,
    )
    if count == 1 and turns[0].commits[0].kind == "summary":
        count = 0
    return turns, count


def leave_out(
    store: HistoryStore,
    session_id: str,
    settings: Settings,
    counter: TokenCounter,
    *,
    reason: str,
    keep_budget: int | None,
    head: str,
    provenance: dict[str, str | None] | None = None,
) -> CompactionResult:
    """The last resort when no summary could be written and the request would not fit: the oldest
    turns are left out of what is sent, behind a note saying so (a ``summary`` commit, so the
    originals stay in the store and on screen, marked compacted)."""
    chain = store.chain(session_id, head=head)
    turns, count = _split(chain, settings, counter, keep_budget)
    if count == 0:
        return CompactionResult(False, NOTHING, automatic=True)
    older = turns[:count]
    before = sum(t.tokens for t in older)
    first_id, last_id = _range_ids([c for t in older for c in t.commits])
    meta = summary_metadata(first_id, last_id, automatic=True, before_tokens=before, left_out=True)
    content = prompt.left_out_content(count, {"replaced_turns": count, "left_out": True})
    meta["after_tokens"] = after = counter.count_messages([content])
    try:
        commit = _append_summary(store, session_id, content, head, meta, provenance)
    except StoreError as exc:
        return CompactionResult(False, f"the oldest turns could not be left out ({exc})", automatic=True)
    turns_word = f"turn{'s' if count != 1 else ''}"
    return CompactionResult(
        True,
        f"compaction failed ({reason}) and the request would not fit without it: the oldest {count} {turns_word} "
        f"({before:,} tokens) are left out of what is sent from now on, a note in their place; they stay in the history",
        before_tokens=before,
        after_tokens=after,
        replaced_turns=count,
        kept_turns=len(turns) - count,
        commit_id=commit.id,
        automatic=True,
    )


def transcript_parts(
    older: Sequence[Turn], summarizer: Summarizer, thinking: bool, *, reserved: int = 0, split: int = 1
) -> list[str]:
    """The transcript of ``older`` cut into slices that each fit one summary call.

    Each slice leaves room for the running summary and ``reserved`` tokens
    (the user's focus instructions); ``split`` makes the slices that many times
    smaller, leaving the rest of the window to a summariser that thinks anyway.
    """
    budget = (summarizer.input_budget - summarizer.output_budget - reserved) // split
    if budget < MIN_SUMMARY_TOKENS:
        raise CompactionError(f"the context-limit of {summarizer.label} is too small to summarise anything")
    counter = summarizer.counter
    messages = [m for t in older for m in t.messages]
    # A message's cached count plus its rendering's labels: no second tokenizer pass over the transcript.
    sizes = [counter.count_content(m, include_thinking=thinking) + RENDER_OVERHEAD for m in messages]
    rendered = [prompt.render_message(m, include_thinking=thinking) for m in messages]
    for i, size in enumerate(sizes):
        if size > budget:
            rendered[i] = _shorten(rendered[i], budget - RENDER_OVERHEAD, counter)
            sizes[i] = budget
    return ["\n\n".join(rendered[a:b]) for a, b in plan.split_parts(sizes, budget)]
