"""The assembler: events fold into the right Content, incl. re-classification and signatures."""

from __future__ import annotations

from tractui.core.assemble import MessageAssembler
from tractui.core.content import Usage
from tractui.core.events import (
    Done,
    ReclassifyAsThinking,
    RedactedThinking,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    UsageEvent,
)
from tractui.core.tags import ThinkTagExtractor


def assemble(events):
    asm = MessageAssembler()
    for ev in events:
        asm.feed(ev)
    return asm


def test_thinking_then_text_and_usage():
    asm = assemble(
        [
            ThinkingDelta("a", "reasoning_content"),
            ThinkingDelta("b", "reasoning_content"),
            TextDelta("Hel"),
            TextDelta("lo"),
            UsageEvent(Usage(input_tokens=5, output_tokens=7, reasoning_tokens=2)),
            Done("stop", malformed_lines=1, response_model="m-1"),
        ]
    )
    content = asm.content({"provider": "x"})
    assert [(b.type, getattr(b, "thought", getattr(b, "text", None))) for b in content.blocks] == [
        ("thinking", "ab"),
        ("text", "Hello"),
    ]
    assert content.blocks[0].source_field == "reasoning_content"
    assert content.metadata == {"provider": "x"}
    assert asm.usage.reasoning_tokens == 2 and asm.finish_reason == "stop"
    assert asm.malformed_lines == 1 and asm.response_model == "m-1"


def test_thinking_end_separates_blocks():
    asm = assemble([ThinkingDelta("one"), ThinkingEnd(), ThinkingDelta("two"), ThinkingEnd(unterminated=True)])
    blocks = asm.content().blocks
    assert [b.thought for b in blocks] == ["one", "two"]
    assert blocks[0].provider_metadata == {} and blocks[1].provider_metadata == {"unterminated": True}


def test_reclassify_turns_earlier_text_into_thinking():
    events = []
    ex = ThinkTagExtractor()
    for chunk in ["Okay, the user", " wants X.", "</think>", "\n\nHere is X."]:
        events += ex.feed(chunk)
    events += ex.close()
    asm = assemble(events)
    blocks = asm.content().blocks
    assert [b.type for b in blocks] == ["thinking", "text"]
    assert blocks[0].thought == "Okay, the user wants X." and blocks[0].source_field == "think_tags"
    assert blocks[1].text == "Here is X."


def test_reclassify_keeps_tool_calls_in_place():
    asm = assemble([TextDelta("plan"), ToolCallDelta(0, id="c1", name="f", arguments="{}"), ReclassifyAsThinking()])
    assert [b.type for b in asm.content().blocks] == ["thinking", "tool_call"]


def test_extractor_to_assembler_unterminated_block():
    ex = ThinkTagExtractor()
    asm = assemble(ex.feed("<think>never closed") + ex.close())
    [block] = asm.content().blocks
    assert block.thought == "never closed" and block.source_field == "think_tags"
    assert block.provider_metadata == {"unterminated": True}


def test_signatures_attach_to_the_thinking_block():
    asm = assemble(
        [
            ThinkingDelta("plan", "thinking"),
            ThinkingSignature("sig-part-1"),
            ThinkingSignature("sig-part-2", {"item_id": "rs_1"}),
            ThinkingEnd(),
            TextDelta("answer"),
        ]
    )
    thinking = asm.content().blocks[0]
    assert thinking.signature == "sig-part-1sig-part-2"
    assert thinking.provider_metadata == {"item_id": "rs_1"}


def test_signature_without_visible_thought_becomes_a_signed_block():
    asm = assemble([TextDelta("hi"), ThinkingSignature("gem-sig", {"source_field": "thought"})])
    blocks = asm.content().blocks
    assert blocks[1].type == "thinking" and blocks[1].thought == "" and blocks[1].signature == "gem-sig"
    assert blocks[1].source_field == "thought"


def test_signature_targeting_a_tool_call():
    asm = assemble(
        [
            ToolCallDelta(0, id="c1", name="get", arguments='{"a"'),
            ToolCallDelta(0, arguments=": 1}"),
            ThinkingSignature("CiQB", {"target": "tool_call"}),
        ]
    )
    [call] = asm.content().blocks
    assert call.arguments == '{"a": 1}' and call.name == "get"
    assert call.provider_metadata == {"thought_signature": "CiQB"}


def test_redacted_thinking_is_kept_opaque():
    asm = assemble([RedactedThinking("EmwKAhgB"), TextDelta("ok")])
    block = asm.content().blocks[0]
    assert block.is_hidden and block.thought == "" and block.provider_metadata["data"] == "EmwKAhgB"
    assert asm.text == "ok" and asm.reasoning == ""


def test_partial_content_and_errors():
    asm = MessageAssembler()
    asm.feed(ThinkingDelta("half"))
    first = asm.content()
    version = asm.version
    asm.feed(StreamError("cut", "connection closed"))
    assert asm.version == version + 1
    assert asm.error.kind == "cut"
    assert asm.content() == first  # what arrived before the error stands
