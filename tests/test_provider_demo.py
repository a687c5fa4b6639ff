"""The offline demo provider: deterministic, tokenizer usage, the same event path."""

from __future__ import annotations

import pytest

from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content, TextBlock
from tractui.core.events import Done, StreamEvent, TextDelta, ThinkingDelta, ThinkingEnd, UsageEvent
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter, count_tokens
from tractui.providers import ProviderConfig, make_provider
from tractui.providers.demo import DemoProvider


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


async def reply(
    messages: list[Content], settings: Settings | None = None, **kw: object
) -> tuple[list[StreamEvent], MessageAssembler]:
    provider = DemoProvider(ProviderConfig("demo", "demo"), pace=0, **kw)  # type: ignore[arg-type]
    events: list[StreamEvent] = []
    asm = MessageAssembler()
    async for event in provider.stream(messages, settings or Settings()):
        events.append(event)
        asm.feed(event)
    await provider.aclose()
    return events, asm


async def test_thinks_then_answers_in_markdown_with_code_and_no_key() -> None:
    events, asm = await reply([Content.human("How do I sort a list?")])
    content = asm.content()
    assert asm.error is None and asm.finish_reason == "stop"
    kinds = [type(e) for e in events]
    first_text = kinds.index(TextDelta)
    assert set(kinds[: first_text - 1]) == {ThinkingDelta} and kinds[first_text - 1] is ThinkingEnd
    assert kinds[-2:] == [UsageEvent, Done]
    assert "How do I sort a list?" in content.thinking[0].thought
    assert "How do I sort a list?" in content.text and "```" in content.text
    assert sum(isinstance(e, TextDelta) for e in events) > 20  # streamed in pieces, not at once


async def test_deterministic_and_varies_with_the_prompt() -> None:
    _, a = await reply([Content.human("first question")])
    _, b = await reply([Content.human("first question")])
    _, c = await reply([Content.human("something else entirely")])
    assert a.content() == b.content()
    assert a.content().text != c.content().text


async def test_usage_comes_from_the_real_tokenizer() -> None:
    history = [
        Content.human("q1"),
        Content(speaker="ai", blocks=[TextBlock(text="a1")]),
        Content.human("What is a monad?"),
    ]
    _, asm = await reply(history, Settings({"system-prompt": "be brief"}))
    content = asm.content()
    counter = TokenCounter("demo")
    thinking = content.thinking[0].thought
    assert asm.usage is not None
    assert asm.usage.input_tokens == counter.count_messages(history) + count_tokens("be brief", "demo")
    assert asm.usage.reasoning_tokens == count_tokens(thinking, "demo") > 0
    assert asm.usage.output_tokens == asm.usage.reasoning_tokens + count_tokens(content.text, "demo")


async def test_reasoning_disabled_means_no_thinking() -> None:
    events, asm = await reply([Content.human("hi")], Settings({"reasoning.enabled": False}))
    assert not asm.content().thinking and asm.usage is not None and asm.usage.reasoning_tokens == 0
    assert not any(isinstance(e, (ThinkingDelta, ThinkingEnd)) for e in events)


@pytest.mark.demo_pace
def test_registry_builds_it_with_a_readable_pace() -> None:
    provider = make_provider(ProviderConfig("demo", "demo"))
    assert isinstance(provider, DemoProvider) and 0 < provider.pace < 0.2
    body = provider.build_request([Content.human("hi")], Settings(), system="sys")
    assert body["messages"] == [{"role": "human", "content": "hi"}] and body["system"] == "sys"
