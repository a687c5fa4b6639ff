"""Which thinking a request holds is the compile step's decision (``reasoning.includeInContext``,
``reasoning.stripFromContext``, the tool loop in progress); a provider decides only how the
thinking it is handed goes back (``providers/thinking_back.py``) and what it then costs."""

from __future__ import annotations

import json

import pytest

from tractui.core.content import Content, TextBlock, ThinkingBlock
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.providers import ProviderConfig, make_provider

PROVIDERS = {
    "openai": "deepseek-v4",
    "anthropic": "claude-sonnet-5-5",
    "gemini": "gemini-3-pro-preview",
    "openai-responses": "gpt-5.2",
}


@pytest.mark.parametrize("fmt", ["native", "field", "tags"])
@pytest.mark.parametrize("name", list(PROVIDERS))
def test_a_provider_sends_and_counts_the_thinking_it_is_handed_whatever_include_in_context_says(name, fmt):
    """The gauge asks the provider what an earlier turn's thinking costs when it goes. Until
    2026-11-28 the providers applied ``includeInContext`` a second time and counted nothing under
    false, so switching it off left the last call's thinking in the gauge (the conversation asked
    under a copy of the settings with it forced on, a fix at the wrong depth)."""
    model = PROVIDERS[name]
    own = Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought="weighing the options " * 20, signature="sig"), TextBlock(text="a1")],
        metadata={"provider": name, "model": model},
    )
    foreign = Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought="a foreign thought " * 20), TextBlock(text="a2")],
        metadata={"provider": "other", "model": "elsewhere"},
    )
    messages = [Content.human("q1"), own, Content.human("q2"), foreign, Content.human("q3")]
    counter = TokenCounter(model)
    seen = []
    for include in (False, True):
        settings = Settings({"reasoning.includeInContext": include, "reasoning.format": fmt})
        provider = make_provider(ProviderConfig(name, model, api_key_env=""))
        body = json.dumps(provider.build_request(messages, settings))
        costs = [provider.thinking_tokens(m, settings, counter, current_turn=False) for m in (own, foreign)]
        seen.append((body, costs))
    assert seen[0] == seen[1]
    body, costs = seen[0]
    assert "a foreign thought" in body and costs[1] > counter.count("a foreign thought " * 20) // 2  # as text
