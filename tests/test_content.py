"""The content model: JSON round-trip is lossless for every block type."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage

SOURCES = ["reasoning_content", "reasoning", "thinking", "thought", "think_tags", "summary"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
metadata = st.dictionaries(st.text(max_size=10), json_values, max_size=3)
blocks = st.one_of(
    st.builds(TextBlock, text=st.text()),
    st.builds(
        ThinkingBlock,
        thought=st.text(),
        is_hidden=st.booleans(),
        source_field=st.sampled_from(SOURCES),
        signature=st.none() | st.text(min_size=1),
        provider_metadata=metadata,
    ),
    st.builds(ToolCallBlock, id=st.text(min_size=1), name=st.text(), arguments=st.text(), provider_metadata=metadata),
    st.builds(ToolResultBlock, tool_call_id=st.text(), content=st.text(), is_error=st.booleans()),
)
contents = st.builds(
    Content,
    speaker=st.sampled_from(["human", "ai", "tool", "system"]),
    blocks=st.lists(blocks, max_size=5),
    metadata=metadata,
)


@settings(max_examples=300, deadline=None)
@given(contents)
def test_json_round_trip_is_lossless(content):
    text = content.model_dump_json()
    back = Content.model_validate_json(text)
    assert back == content
    assert back.model_dump_json() == text
    assert [type(b) for b in back.blocks] == [type(b) for b in content.blocks]


def test_round_trip_of_redacted_thinking_and_tool_calls():
    content = Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="plan", source_field="thinking", signature="EqQBCkYIBxgCKkA="),
            ThinkingBlock(is_hidden=True, source_field="thinking", provider_metadata={"data": "EmwKAhgBEgy3va3pzix"}),
            ThinkingBlock(
                is_hidden=True, source_field="summary", provider_metadata={"encrypted_content": "gAAAA", "id": "rs_1"}
            ),
            TextBlock(text="Calling a tool. 😊"),
            ToolCallBlock(
                id="toolu_01",
                name="get_weather",
                arguments='{"city": "Montevideo"}',
                provider_metadata={"thought_signature": "CiQB"},
            ),
        ],
        metadata={"provider": "anthropic", "model": "claude-sonnet-4-5", "base_url": "https://api.anthropic.com"},
    )
    back = Content.model_validate_json(content.model_dump_json())
    assert back == content
    redacted = back.blocks[1]
    assert (
        isinstance(redacted, ThinkingBlock)
        and redacted.is_hidden
        and redacted.provider_metadata["data"] == "EmwKAhgBEgy3va3pzix"
    )
    assert back.text == "Calling a tool. 😊"  # redacted thinking never shows as text
    assert back.tool_calls[0].arguments == '{"city": "Montevideo"}'
    result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="toolu_01", content="sunny", is_error=False)])
    assert Content.model_validate_json(result.model_dump_json()) == result


def test_usage_round_trip_and_sum():
    usage = Usage(input_tokens=10, output_tokens=20, reasoning_tokens=5, cached_input_tokens=3, cache_write_tokens=1)
    assert Usage.model_validate_json(usage.model_dump_json()) == usage
    assert (usage + usage).output_tokens == 40


def test_bad_input_is_refused():
    with pytest.raises(ValidationError):
        Content.model_validate({"speaker": "robot", "blocks": []})
    with pytest.raises(ValidationError):
        Content.model_validate({"speaker": "ai", "blocks": [{"type": "thinking", "source_field": "nope"}]})
    with pytest.raises(ValidationError):
        Content.model_validate({"speaker": "ai", "blocks": [{"type": "text", "text": "x", "extra": 1}]})
