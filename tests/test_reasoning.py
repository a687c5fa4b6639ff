"""Reasoning utilities: policies, conversions, estimates; inputs never mutated."""

from __future__ import annotations

import copy

import pytest

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.reasoning import (
    apply_reasoning_policy,
    estimate_thinking_tokens,
    extract_thinking_blocks,
    filter_thinking_for_context,
    last_turn_range,
    remove_thinking,
    thinking_to_reasoning_field,
)
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter, get_encoding


def ai(thought: str, text: str, **extra) -> Content:
    return Content(speaker="ai", blocks=[ThinkingBlock(thought=thought, **extra), TextBlock(text=text)])


def history() -> list[Content]:
    return [
        Content.human("q1"),
        ai("t1", "a1"),
        Content.human("q2"),
        ai("t2a", "", signature="s2"),
        Content(speaker="ai", blocks=[ThinkingBlock(thought="t2b"), ToolCallBlock(id="c", name="f", arguments="{}")]),
        Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="c", content="r")]),
        ai("t2c", "a2"),
    ]


def thoughts(contents):
    return [[b.thought for b in c.blocks if isinstance(b, ThinkingBlock)] for c in contents]


def test_extract_returns_the_blocks():
    message = history()[1]
    blocks = extract_thinking_blocks(message)
    assert blocks == [message.blocks[0]] and blocks[0] is message.blocks[0]
    assert extract_thinking_blocks(Content.human("x")) == []


def test_remove_thinking_copies_and_keeps_the_rest():
    message = history()[1]
    before = copy.deepcopy(message)
    out = remove_thinking(message)
    assert [b.type for b in out.blocks] == ["text"] and out.text == "a1"
    assert message == before
    out.blocks.append(out.blocks[0])  # the block list is new; the blocks are shared, read-only
    out.metadata["x"] = 1
    assert message == before
    plain = Content.human("x")
    assert remove_thinking(plain) is plain


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("none", [[], ["t1"], [], ["t2a"], ["t2b"], [], ["t2c"]]),
        ("all", [[], [], [], [], [], [], []]),
        # the last assistant turn is the whole tool loop after q2
        ("allButLast", [[], [], [], ["t2a"], ["t2b"], [], ["t2c"]]),
    ],
)
def test_filter_policies(policy, expected):
    contents = history()
    before = copy.deepcopy(contents)
    out = filter_thinking_for_context(contents, policy)
    assert thoughts(out) == expected
    assert [c.text for c in out] == [c.text for c in contents]
    assert contents == before


def test_all_but_last_when_the_history_ends_with_a_question():
    contents = [*history(), Content.human("q3")]
    assert thoughts(filter_thinking_for_context(contents, "allButLast"))[1:4] == [[], [], ["t2a"]]
    assert last_turn_range(contents) == range(3, 7)
    assert last_turn_range([Content.human("only")]) == range(0)


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="allButLast"):
        filter_thinking_for_context(history(), "some")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("include", "strip", "kept"),
    [
        ("false", "none", 0),
        ("false", "allButLast", 0),
        ("true", "all", 0),
        ("true", "allButLast", 3),
        ("true", "none", 4),
    ],
)
def test_apply_reasoning_policy(include, strip, kept):
    settings = Settings({"reasoning.includeInContext": include, "reasoning.stripFromContext": strip})
    contents = history()
    before = copy.deepcopy(contents)
    out = apply_reasoning_policy(contents, settings)
    assert sum(len(t) for t in thoughts(out)) == kept
    assert contents == before


def test_reasoning_field():
    message = Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="one"),
            ThinkingBlock(is_hidden=True, provider_metadata={"data": "opaque"}),
            ThinkingBlock(thought="two"),
            TextBlock(text="answer"),
        ],
    )
    assert thinking_to_reasoning_field(message) == "one\n\ntwo"
    assert thinking_to_reasoning_field(Content.human("x")) is None
    assert thinking_to_reasoning_field(Content(speaker="ai", blocks=[ThinkingBlock(is_hidden=True)])) is None


def test_thinking_estimate_comes_from_the_tokenizer():
    contents = history()
    enc = get_encoding("o200k_base")
    expected = sum(len(enc.encode_ordinary(t)) for t in ["t1", "t2a", "t2b", "t2c"])
    assert estimate_thinking_tokens(contents) == expected
    long = [ai("word " * 300, "x")]
    assert estimate_thinking_tokens(long, TokenCounter("gpt-4")) == len(
        get_encoding("cl100k_base").encode_ordinary("word " * 300)
    )
    assert estimate_thinking_tokens(long) != len("word " * 300) // 4


@pytest.mark.parametrize(
    ("roles", "start"),
    [
        ("h a", 2),  # no tool: no loop
        ("h a t", 1),
        ("h a t a t", 1),
        ("h a t a", 1),  # the loop's answer streaming
        ("h a t h", 1),  # typed after a stopped call: the same loop (until 2026-11-28: none)
        ("h a t h h", 1),
        ("h a t a h", 5),  # the loop answered: a new turn
        ("h a t x h", 5),  # thinking of a step killed before its answer, then typed: not a stopped call
        ("a t h", 0),  # a loop with no message before it
        ("", 0),
    ],
)
def test_open_loop_start(roles, start):
    from tractui.core.reasoning import open_loop_start

    names = {"h": "human", "a": "ai", "t": "tool", "x": "reasoning"}
    seq = [names[r] for r in roles.split()]
    assert open_loop_start(lambda i: seq[i], len(seq)) == start
