"""The context gauge: how full the window really is, one number for everything.

The footer, ``/context`` and compaction all read ``measure_context``::

    effective = last_input + last_output + estimate(messages added since)

corrected for what the next request carries: the tool definitions it offers
in place of the ones the last call did, the reasoning policy says which
messages keep their thinking, the provider (``Provider.thinking_tokens``) what
that thinking costs as it serialises it and as its server reads it (nothing
for Anthropic's earlier turns sent natively, the text with its wrapper when
sent as text). The last reply counts as it goes back, not as billed: billed
thinking may be more than the summary (or nothing) that was shown. With no
call to build on (the first call, or after compaction) the figure is a
tokenizer estimate, corrected by the gap the chain's calls showed at that size
(``carried_gap``), and is flagged ``estimated``.

The provider's reported usage is the truth the estimate is anchored to, so
the tokenizer only fills in what was added since. The last estimate's error
is the reading taken just before a request minus the input the provider then
reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tractui.core.content import Content, ThinkingBlock
from tractui.core.reasoning import StripPolicy, last_turn_range, open_loop_start, thinking_policy
from tractui.core.settings import Settings
from tractui.core.tokens import MESSAGE_OVERHEAD, TokenCounter

DEFAULT_RESERVE = 4096
"""Output reserve when neither ``max-tokens`` nor ``max-output`` is known."""

SAFETY_FRACTION = 0.02
"""Kept free beyond the reserve: our tokenizer approximates other vendors' tokenizers."""


@dataclass(frozen=True)
class CallBasis:
    """The last actual provider call, as reported by its usage."""

    input_tokens: int
    output_tokens: int  # reasoning included
    reasoning_tokens: int
    message_count: int  # history messages that call covered: its input messages + the reply
    estimated_input: int | None = None  # our estimate of that input made before the call
    policy: StripPolicy | None = None  # the thinking policy that call was sent with (None: unknown, take today's)
    tools_tokens: int | None = None  # the tool definitions that call offered, counted (None: unknown, as now)


@dataclass(frozen=True)
class Breakdown:
    """The parts of the effective figure; they add up to it."""

    system: int
    tools: int
    messages: int  # with a basis, what the provider counted beyond the other parts; estimated, the tokenizer's count
    thinking: int
    gap: int = 0  # an estimate's carried_gap: what the provider counts beyond the tokenizer, not a message


@dataclass(frozen=True)
class ContextReading:
    effective: int
    estimated: bool
    limit: int
    reserve: int
    usable: int
    threshold: int
    breakdown: Breakdown
    new_since: int
    free: int
    last_error: tuple[int, float] | None  # (estimate - actual, that / actual) of the last call
    warnings: tuple[str, ...]
    margin: int = 0  # the safety margin inside limit - usable
    compression: float = 0.85  # the compression-threshold fraction behind ``threshold``
    basis: CallBasis | None = None  # the actual call the number builds on (None: estimated)
    offset: int = 0  # what the provider counts beyond the tokenizer (a hidden prompt, framing): calibrates plans

    def should_compact(self, threshold: float | None = None, limit: int | None = None) -> bool:
        """Whether the effective context passes the threshold (overrides for what-if checks)."""
        if threshold is None and limit is None:
            return self.effective > self.threshold
        lim = self.limit if limit is None else limit
        usable = max(0, lim - self.reserve - self.margin)
        fraction = self.compression if threshold is None else threshold
        return self.effective > int(fraction * usable)

    @property
    def fraction(self) -> float:
        """effective / limit, for the bar."""
        return self.effective / self.limit if self.limit else 0.0


def output_reserve(settings: Settings) -> int:
    """Room kept for the reply: ``max-tokens`` (at most half the window), else the
    model's own output limit ``max-output``, else ``DEFAULT_RESERVE``, both at most a
    quarter of the window so a huge default does not eat a small one.
    """
    limit = settings.view.context_limit
    max_tokens = settings.view.max_tokens
    if max_tokens:
        return min(int(max_tokens), limit // 2)
    model_max = settings.view.max_output
    return min(int(model_max) if model_max else DEFAULT_RESERVE, limit // 4)


def describe_error(error: tuple[int, float] | None) -> str:
    """``+5 (+0.1%)``: how far the last estimate was from the actual input."""
    if error is None:
        return "n/a"
    tokens, fraction = error
    return f"{tokens:+d} ({fraction * 100:+.1f}%)"


Gap = tuple[int, int]
"""One call of the chain: (the tokenizer's estimate of its input, the provider's count minus that)."""


def carried_gap(gaps: Sequence[Gap], size: int) -> int:
    """What the provider will count beyond the tokenizer for a request the tokenizer puts at ``size``,
    read off the calls this chain made (latest first): interpolated between the two nearest in size, scaled down
    below the smallest, the largest's gap above it. A gap may be fixed (a hidden prompt) or grow with
    what is sent (a server counting otherwise), and after a compaction the request is far smaller
    than the last call: the last call's gap alone would be a phantom the request never carries."""
    points = sorted((s, g) for s, g in dict(reversed(gaps)).items() if s > 0)  # per size, the first given
    if not points or size <= 0:
        return 0
    below = [p for p in points if p[0] <= size]
    above = [p for p in points if p[0] > size]
    if not below:
        return round(above[0][1] * size / above[0][0])
    if not above:
        return below[-1][1]
    (s0, g0), (s1, g1) = below[-1], above[0]
    return round(g0 + (g1 - g0) * (size - s0) / (s1 - s0))


ThinkingTokens = Callable[[Content, bool], int]
"""Tokens of a message's thinking as the provider's request carries it and its server reads it,
given whether the message is in the turn in progress (``Provider.thinking_tokens``)."""


def _as_stored(message: Content, current_turn: bool, counter: TokenCounter) -> int:
    return counter.count_thinking(message)


class _Sent:
    """Which messages' thinking survives the compile step in a request of ``messages[:end]``:
    the policy's span, and the turn in progress (after the last human message), which keeps its
    thinking when it is a tool loop; what each one then costs is the provider's answer."""

    def __init__(self, messages: Sequence[Content], end: int, policy: str) -> None:
        self.human = next((i for i in range(end - 1, -1, -1) if messages[i].speaker == "human"), -1)
        self.every = policy == "none"
        if policy == "all":
            span = range(0)
        elif policy == "allButLast":
            span = last_turn_range(messages, end)
        else:
            span = range(0, end)
        self.loop = range(open_loop_start(lambda i: messages[i].speaker, end), end)
        self.span = span

    def __contains__(self, index: int) -> bool:
        return self.every or index in self.span or index in self.loop

    def tokens(self, messages: Sequence[Content], index: int, cost: ThinkingTokens) -> int:
        """Thinking tokens ``messages[index]`` carries in that request (0 when it is left out)."""
        if index not in self:
            return 0
        return cost(messages[index], index > self.human or index in self.loop)

    def thinking(self, messages: Sequence[Content], cost: ThinkingTokens, stop: int) -> int:
        """Thinking tokens counted among ``messages[:stop]``."""
        indices = range(stop) if self.every else sorted({*self.span, *self.loop})
        return sum(self.tokens(messages, i, cost) for i in indices if i < stop)


def measure_context(
    messages: Sequence[Content],
    settings: Settings,
    *,
    model: str = "",
    system_prompt: str = "",
    tools_tokens: int = 0,
    basis: CallBasis | None = None,
    counter: TokenCounter | None = None,
    thinking_tokens: ThinkingTokens | None = None,
    gaps: Sequence[Gap] = (),
) -> ContextReading:
    """Read the gauge for ``messages`` (stored form, thinking present; a streaming
    partial reply may be last). Pass the same ``counter`` on every update: its
    caches make an update cost only the messages added since. ``thinking_tokens``
    is the provider's word on what each message's thinking costs as sent (default:
    all of it, as stored); ``gaps`` correct a pure estimate by what the chain's calls
    were counted beyond it (a hidden server prompt, framing: ``carried_gap``).
    """
    counter = counter or TokenCounter(model or None)
    tokenizer = counter
    cost = thinking_tokens or (lambda message, current: _as_stored(message, current, tokenizer))
    warnings: list[str] = []
    limit = settings.view.context_limit
    reserve = output_reserve(settings)
    margin = int(limit * SAFETY_FRACTION)
    usable = max(0, limit - reserve - margin)
    compression = settings.view.compression_threshold
    policy = thinking_policy(settings)
    total = len(messages)
    sent = _Sent(messages, total, policy)

    system = counter.count(system_prompt) + MESSAGE_OVERHEAD if system_prompt else 0
    if basis is not None and basis.message_count > total:
        warnings.append(
            f"the last call covered {basis.message_count} messages but the history has {total}; showing an estimate"
        )
        basis = None

    body = counter.totals(messages)[0]
    if basis is None:
        thinking = sent.thinking(messages, cost, total)
        new_since = body + thinking
        pure = system + tools_tokens + new_since
        offset = carried_gap(gaps, pure)
        effective = max(0, pure + offset)
        gap = effective - pure  # the carried gap as applied: its own part, not the messages'
        last_error = None
    else:
        covered = basis.message_count
        reply = covered - 1
        # thinking in the last call's input that the next request sends differently:
        # the turn moved on, or /set reasoning.* changed the policy since
        then = _Sent(messages, reply, basis.policy or policy) if reply > 0 else None
        shift = 0
        if then is not None:
            shift = sent.thinking(messages, cost, reply) - then.thinking(messages, cost, reply)
        # the last reply as it goes back: its text as billed, its thinking as the provider sends it
        # (billed thinking may be more than was shown: summarised or omitted)
        reply_thinking = 0
        if reply >= 0:
            reply_msg = messages[reply]
            reply_thinking = sent.tokens(messages, reply, cost)
            if basis.reasoning_tokens:
                output = max(0, basis.output_tokens - basis.reasoning_tokens) + reply_thinking
            elif any(isinstance(b, ThinkingBlock) for b in reply_msg.blocks):
                output = counter.count_content(reply_msg, include_thinking=False) - MESSAGE_OVERHEAD + reply_thinking
            else:
                output = basis.output_tokens
        else:
            output = basis.output_tokens
        new_since = sum(
            counter.count_content(messages[i], include_thinking=False) + sent.tokens(messages, i, cost)
            for i in range(covered, total)
        )
        # the tools the next request offers in place of the ones that call did (switched off or on
        # in /tools or by tools.enabled, a server come or gone): its input counted the old ones
        if basis.tools_tokens is not None:
            shift += tools_tokens - basis.tools_tokens
        effective = max(0, basis.input_tokens + output + shift + new_since)
        thinking = sent.thinking(messages, cost, total)
        offset = effective - (system + tools_tokens + body + thinking)
        gap = 0  # the provider counted it all: the messages' part is what is left
        last_error = None
        if basis.estimated_input is not None:
            error = basis.estimated_input - basis.input_tokens
            last_error = (error, error / basis.input_tokens if basis.input_tokens else 0.0)

    messages_part = effective - system - tools_tokens - thinking - gap
    if messages_part < 0:
        warnings.append(
            f"system, tools and thinking estimates exceed the effective figure by {-messages_part} tokens; messages shown as 0"
        )
        messages_part = 0
    if effective > usable:
        warnings.append(f"context is over the usable window ({effective} > {usable} tokens)")

    return ContextReading(
        effective=effective,
        estimated=basis is None,
        limit=limit,
        reserve=reserve,
        usable=usable,
        threshold=int(compression * usable),
        breakdown=Breakdown(system=system, tools=tools_tokens, messages=messages_part, thinking=thinking, gap=gap),
        new_since=new_since,
        free=max(0, usable - effective),
        last_error=last_error,
        warnings=tuple(warnings),
        margin=margin,
        compression=compression,
        basis=basis,
        offset=offset,
    )
