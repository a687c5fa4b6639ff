"""The context gauge: formula, policies, Anthropic rule, reserve and thresholds."""

from __future__ import annotations

import pytest

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.gauge import CallBasis, carried_gap, describe_error, measure_context, output_reserve
from tractui.core.settings import Settings
from tractui.core.tokens import MESSAGE_OVERHEAD, TokenCounter
from tractui.providers import ProviderConfig
from tractui.providers.anthropic import AnthropicProvider

COUNTER = TokenCounter()
THOUGHT = "I should compare both options carefully before I answer the question."


def ai(thought: str | None, text: str) -> Content:
    blocks = [ThinkingBlock(thought=thought)] if thought else []
    return Content(speaker="ai", blocks=[*blocks, TextBlock(text=text)])


def tokens_of(message: Content, thinking: bool = True) -> int:
    return COUNTER.count_content(message, include_thinking=thinking)


def policy(include: bool, strip: str = "none", **more) -> Settings:
    return Settings({"reasoning.includeInContext": include, "reasoning.stripFromContext": strip, **more})


def message_of(tokens: int) -> Content:
    """A human message that counts exactly ``tokens`` (overhead included), found with the tokenizer."""
    words = ["apple"]
    while COUNTER.count_content(Content.human(" ".join(words))) < tokens:
        words.append("apple")
    message = Content.human(" ".join(words))
    assert COUNTER.count_content(message) == tokens
    return message


def test_worked_example_5000_100_20_then_actual_5115():
    history = [Content.human("What is the capital of France?"), ai(None, "Paris."), message_of(20)]
    reading = measure_context(history, Settings(), basis=CallBasis(5000, 100, 0, 2), counter=COUNTER)
    assert reading.effective == 5000 + 100 + 20 == 5120
    assert reading.new_since == 20 and not reading.estimated and reading.last_error is None
    # the call is made with that estimate; the provider reports 5115 input tokens
    history.append(ai(None, "Lyon is not the capital."))
    after = measure_context(
        history, Settings(), basis=CallBasis(5115, 30, 0, 4, estimated_input=reading.effective), counter=COUNTER
    )
    assert after.last_error == (5, pytest.approx(5 / 5115))
    assert describe_error(after.last_error) == "+5 (+0.1%)"
    assert after.effective == 5115 + 30
    assert describe_error(None) == "n/a"
    assert describe_error((-40, -0.02)) == "-40 (-2.0%)"


def test_no_basis_is_a_pure_tokenizer_estimate():
    history = [Content.human("hi"), ai(THOUGHT, "hello"), Content.human("and now?")]
    tools = 57
    reading = measure_context(
        history, policy(True), system_prompt="You are terse.", tools_tokens=tools, counter=COUNTER
    )
    system = COUNTER.count("You are terse.") + MESSAGE_OVERHEAD
    assert reading.estimated
    assert reading.effective == system + tools + sum(tokens_of(m) for m in history)
    assert reading.breakdown.system == system and reading.breakdown.tools == tools
    assert reading.breakdown.thinking == COUNTER.count(THOUGHT) > 0
    assert reading.breakdown.messages == sum(tokens_of(m, thinking=False) for m in history)
    stripped = measure_context(history, policy(False), counter=COUNTER)
    assert stripped.effective == sum(tokens_of(m, thinking=False) for m in history)
    assert stripped.breakdown.thinking == 0


# history: question, reply with thinking (the basis call), a new question
BASIS = CallBasis(input_tokens=900, output_tokens=300, reasoning_tokens=120, message_count=2)


def turn() -> list[Content]:
    return [Content.human("first question"), ai(THOUGHT, "first answer"), Content.human("second question")]


@pytest.mark.parametrize(
    ("settings", "reasoning_kept"),
    [
        (policy(False), False),
        (policy(False, "none"), False),
        (policy(True, "all"), False),
        (policy(True, "allButLast"), True),
        (policy(True, "none"), True),
    ],
)
def test_last_replys_reasoning_counts_only_when_sent_back(settings, reasoning_kept):
    history = turn()
    reading = measure_context(history, settings, basis=BASIS, counter=COUNTER)
    new = tokens_of(history[2])
    kept = COUNTER.count(THOUGHT) if reasoning_kept else 0  # the thinking as it goes back, not as billed
    assert reading.effective == BASIS.input_tokens + BASIS.output_tokens - BASIS.reasoning_tokens + kept + new
    assert reading.breakdown.thinking == kept


def test_reported_reasoning_missing_falls_back_to_the_estimate():
    basis = CallBasis(900, 300, 0, 2)
    reading = measure_context(turn(), policy(False), basis=basis, counter=COUNTER)
    # billed output includes thinking that was not shown (summarised or omitted): the reply counts as it goes back
    assert reading.effective == 900 + COUNTER.count("first answer") + tokens_of(turn()[2])


def two_turns() -> list[Content]:
    """Two answered turns, each with thinking (the second is the basis call's reply), and a new question."""
    return [Content.human("q1"), ai(THOUGHT, "a1"), Content.human("q2"), ai("short thought", "a2"), Content.human("q3")]


def test_all_but_last_stops_counting_thinking_of_an_older_turn():
    """That thinking was in the last call's input; the next request drops it."""
    history = two_turns()
    basis = CallBasis(2000, 200, 50, 4)
    reading = measure_context(history, policy(True, "allButLast"), basis=basis, counter=COUNTER)
    short = COUNTER.count("short thought")
    assert reading.effective == 2000 + 150 + short - COUNTER.count(THOUGHT) + tokens_of(history[4])
    assert reading.breakdown.thinking == short
    # with "none" the older thinking stays and is counted
    kept = measure_context(history, policy(True, "none"), basis=basis, counter=COUNTER)
    assert kept.effective == 2000 + 150 + short + tokens_of(history[4])
    assert kept.breakdown.thinking == COUNTER.count(THOUGHT) + short


def test_a_policy_changed_since_the_last_call_moves_the_earlier_turns_thinking_at_once():
    """The last call went out with thinking stripped; /set reasoning.includeInContext true
    sends the earlier turn's thinking from the next request on, so it counts now, and back."""
    history = two_turns()
    stripped = CallBasis(2000, 200, 50, 4, policy="all")
    sent = measure_context(history, policy(True, "none"), basis=stripped, counter=COUNTER)
    short = COUNTER.count("short thought")
    assert sent.effective == 2000 + 150 + short + COUNTER.count(THOUGHT) + tokens_of(history[4])
    assert sent.breakdown.thinking == COUNTER.count(THOUGHT) + short
    kept = CallBasis(2000, 200, 50, 4, policy="none")
    dropped = measure_context(history, policy(False), basis=kept, counter=COUNTER)
    assert dropped.effective == 2000 + 150 - COUNTER.count(THOUGHT) + tokens_of(history[4])
    assert dropped.breakdown.thinking == 0


CLAUDE = "claude-opus-4-7"  # a model that strips earlier turns' thinking on Anthropic's side


def anthropic_cost(settings: Settings, model: str = CLAUDE):
    """Anthropic's own word on what thinking costs as sent (the gauge's one question to the provider)."""
    provider = AnthropicProvider(ProviderConfig("anthropic", model, api_key_env=""))
    return lambda message, current: provider.thinking_tokens(message, settings, COUNTER, current_turn=current)


def claude(thought: str, text: str, model: str = CLAUDE) -> Content:
    blocks = [ThinkingBlock(thought=thought, signature="sig"), TextBlock(text=text)]
    return Content(speaker="ai", blocks=blocks, metadata={"provider": "anthropic", "model": model})


def test_anthropic_earlier_turns_thinking_sent_natively_does_not_count():
    history = [Content.human("first question"), claude(THOUGHT, "first answer"), Content.human("second question")]
    settings = policy(True, "none", **{"reasoning.format": "native"})
    reading = measure_context(history, settings, basis=BASIS, counter=COUNTER, thinking_tokens=anthropic_cost(settings))
    text = BASIS.output_tokens - BASIS.reasoning_tokens
    assert reading.effective == BASIS.input_tokens + text + tokens_of(history[2])
    assert reading.breakdown.thinking == 0


def test_anthropic_earlier_turns_thinking_counts_where_the_model_preserves_it():
    """Claude Fable 5.1 and later keep earlier turns' thinking blocks in context, billed as input."""
    model = "claude-sonnet-5-5"
    first = claude(THOUGHT, "first answer", model)
    history = [Content.human("first question"), first, Content.human("second question")]
    settings = policy(True, "none", **{"reasoning.format": "native"})
    cost = anthropic_cost(settings, model)
    reading = measure_context(history, settings, basis=BASIS, counter=COUNTER, thinking_tokens=cost)
    text = BASIS.output_tokens - BASIS.reasoning_tokens
    assert reading.effective == BASIS.input_tokens + text + COUNTER.count(THOUGHT) + tokens_of(history[2])
    assert reading.breakdown.thinking == COUNTER.count(THOUGHT)


def test_anthropic_earlier_turns_thinking_sent_as_text_counts_with_its_wrapper():
    """``reasoning.format field``: Anthropic has no field, the thinking goes as a text block it keeps."""
    history = [Content.human("first question"), claude(THOUGHT, "first answer"), Content.human("second question")]
    settings = policy(True, "none")
    reading = measure_context(history, settings, basis=BASIS, counter=COUNTER, thinking_tokens=anthropic_cost(settings))
    wrapped = COUNTER.count(f"<thinking>\n{THOUGHT}\n</thinking>")
    text = BASIS.output_tokens - BASIS.reasoning_tokens
    assert abs(reading.effective - (BASIS.input_tokens + text + wrapped + tokens_of(history[2]))) <= 2


def test_anthropic_current_turn_thinking_counts_in_a_tool_loop():
    history = [
        Content.human("weather?"),
        Content(
            speaker="ai",
            blocks=[
                ThinkingBlock(thought=THOUGHT, signature="s"),
                ToolCallBlock(id="t", name="weather", arguments="{}"),
            ],
            metadata={"provider": "anthropic", "model": CLAUDE},
        ),
        Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="t", content="sunny")]),
    ]
    basis = CallBasis(700, 90, 40, 2)
    settings = policy(False)
    reading = measure_context(history, settings, basis=basis, counter=COUNTER, thinking_tokens=anthropic_cost(settings))
    assert reading.effective == 700 + 50 + COUNTER.count(THOUGHT) + tokens_of(history[2])
    assert reading.breakdown.thinking == COUNTER.count(THOUGHT)


def test_streaming_partial_reply_counts_by_policy():
    history = [*turn(), ai(THOUGHT + " More.", "partial ans")]
    basis = CallBasis(1000, 100, 0, 2)
    shown = measure_context(history, policy(True, "none"), basis=basis, counter=COUNTER)
    hidden = measure_context(history, policy(False), basis=basis, counter=COUNTER)
    assert shown.effective - hidden.effective == COUNTER.count(THOUGHT + " More.") + COUNTER.count(THOUGHT)
    assert shown.new_since == tokens_of(history[2]) + tokens_of(history[3])


@pytest.mark.parametrize(
    ("values", "reserve"),
    [
        ({"context-limit": 10000}, 2500),  # default 4096, capped at a quarter of the window
        ({"context-limit": 128000}, 4096),
        ({"context-limit": 128000, "max-tokens": 1000}, 1000),
        ({"context-limit": 8000, "max-tokens": 6000}, 4000),  # max-tokens at most half the window
        ({"context-limit": 200000, "max-output": 32000}, 32000),
        ({"context-limit": 100000, "max-output": 64000}, 25000),
    ],
)
def test_output_reserve(values, reserve):
    assert output_reserve(Settings(values)) == reserve


def test_usable_threshold_and_should_compact():
    settings = Settings({"context-limit": 10000, "compression-threshold": 0.5})
    history = [Content.human("x")]
    reading = measure_context(history, settings, basis=None, counter=COUNTER)
    assert reading.reserve == 2500 and reading.margin == 200
    assert reading.usable == 10000 - 2500 - 200
    assert reading.threshold == int(0.5 * reading.usable)
    assert reading.free == reading.usable - reading.effective
    assert not reading.should_compact()
    big = [Content.human("x"), ai(None, "y"), Content.human("z")]
    over = measure_context(big, settings, basis=CallBasis(reading.threshold, 5, 0, 2), counter=COUNTER)
    assert over.effective > over.threshold and over.should_compact()
    assert not over.should_compact(threshold=0.9)
    assert not over.should_compact(limit=100000)
    assert over.should_compact(threshold=0.9, limit=over.effective)
    assert over.fraction == over.effective / 10000


def test_breakdown_messages_capped_at_zero_with_a_warning():
    history = [Content.human("x"), ai(None, "y"), Content.human("z")]
    prompt = "A long system prompt. " * 200
    reading = measure_context(
        history, Settings(), system_prompt=prompt, basis=CallBasis(100, 10, 0, 2), counter=COUNTER
    )
    assert reading.breakdown.messages == 0
    assert any("messages shown as 0" in w for w in reading.warnings)
    assert reading.breakdown.system > reading.effective


def test_basis_beyond_the_history_falls_back_to_an_estimate():
    history = [Content.human("x")]
    reading = measure_context(history, Settings(), basis=CallBasis(5000, 10, 0, 9), counter=COUNTER)
    assert reading.estimated and reading.effective == tokens_of(history[0])
    assert any("covered 9 messages" in w for w in reading.warnings)


def test_an_update_only_tokenizes_what_is_new():
    counter = TokenCounter()
    history = [m for i in range(40) for m in (Content.human(f"q{i}"), ai(f"t{i}", f"a{i}"))]
    settings = policy(True, "none")
    measure_context(history, settings, counter=counter)
    calls: list[str] = []
    original = counter.count
    counter.count = lambda text: calls.append(text) or original(text)  # type: ignore[method-assign]
    history.append(Content.human("new question"))
    basis = CallBasis(3000, 40, 5, len(history) - 1)
    measure_context(history, settings, basis=basis, counter=counter)
    measure_context(history, settings, counter=counter)
    assert calls == ["new question"]


def test_the_gap_carried_after_a_compaction_is_read_at_the_size_now_sent():
    fixed = [(4000, 300), (2000, 300), (100, 300)]  # a hidden prompt: the same at every size
    assert carried_gap(fixed, 600) == 300 and carried_gap(fixed, 9000) == 300
    proportional = [(4000, 1200), (2000, 600), (100, 30)]  # a server counting 30% more, latest first
    assert carried_gap(proportional, 600) == 180  # not the last call's 1,200
    assert carried_gap(proportional, 50) == 15  # below the smallest call: in proportion
    assert carried_gap([(500, 80), (500, 40)], 500) == 80  # one size, two gaps: the latest
    assert carried_gap([], 600) == 0
