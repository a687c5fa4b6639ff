"""The pure rules of compaction: where to cut, how to split, when to refuse, the prompt."""

from __future__ import annotations

import itertools

from tractui.conversation.compaction import plan, prompt
from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock


def test_keep_turns_keeps_that_many_recent_turns():
    assert plan.choose_split([10] * 10, keep_turns=4, keep_fraction=None, limit=1000) == 6


def test_keep_turns_always_summarises_something_and_keeps_the_last_turn():
    assert plan.choose_split([10] * 3, keep_turns=4, keep_fraction=None, limit=1000) == 1
    assert plan.choose_split([10] * 3, keep_turns=0, keep_fraction=None, limit=1000) == 2
    assert plan.choose_split([10], keep_turns=4, keep_fraction=None, limit=1000) == 0
    assert plan.choose_split([], keep_turns=4, keep_fraction=None, limit=1000) == 0


def test_keep_fraction_keeps_whole_turns_that_fit():
    # 20% of 1000 = 200: the last three turns (50+60+70=180) fit, a fourth (+100) would not
    tokens = [100, 100, 100, 50, 60, 70]
    assert plan.choose_split(tokens, keep_turns=99, keep_fraction=0.2, limit=1000) == 3


def test_keep_fraction_keeps_the_last_turn_even_when_it_alone_is_too_big():
    assert plan.choose_split([10, 10, 500], keep_turns=1, keep_fraction=0.1, limit=1000) == 2


def test_keep_budget_drops_kept_turns_until_the_rest_can_fit():
    tokens = [100, 100, 400, 400, 50]
    assert plan.choose_split(tokens, keep_turns=3, keep_fraction=None, limit=10000) == 2
    assert plan.choose_split(tokens, keep_turns=3, keep_fraction=None, limit=10000, keep_budget=500) == 3
    assert plan.choose_split(tokens, keep_turns=3, keep_fraction=None, limit=10000, keep_budget=10) == 4


def test_split_parts_respects_the_budget_and_covers_everything():
    sizes = [30, 30, 30, 90, 10, 10, 200, 5]
    parts = plan.split_parts(sizes, 100)
    assert parts[0][0] == 0 and parts[-1][1] == len(sizes)
    assert all(a < b for a, b in parts) and all(p[1] == q[0] for p, q in itertools.pairwise(parts))
    for a, b in parts:
        assert sum(sizes[a:b]) <= 100 or b - a == 1  # an oversized item stands alone
    assert (6, 7) in parts


def test_rejection_requires_five_percent_saving():
    assert plan.rejection(1000, 949) is None
    assert plan.rejection(1000, 950) is None
    message = plan.rejection(1000, 951)
    assert message is not None and "not at least 5% smaller" in message and "left as it was" in message
    grew = plan.rejection(1000, 1200)
    assert grew is not None and "+20%" in grew


def _turn(i: int, size: int = 1) -> list[Content]:
    return [Content.human(f"q{i} " * size), Content(speaker="ai", blocks=[TextBlock(text=f"a{i} " * size)])]


def test_turn_starts_skip_tool_results():
    messages = [
        Content.human("run it"),
        Content(speaker="ai", blocks=[ToolCallBlock(id="t1", name="sh", arguments="{}")]),
        Content(speaker="human", blocks=[ToolResultBlock(tool_call_id="t1", content="ok")]),
        Content(speaker="ai", blocks=[TextBlock(text="done")]),
        Content.human("next"),
    ]
    assert plan.turn_starts(messages) == [0, 4]


def test_trim_oldest_drops_whole_turns_until_it_fits_and_keeps_the_last():
    messages = [m for i in range(5) for m in _turn(i)]
    tokens = [10] * 10
    assert plan.trim_oldest(messages, tokens, 60) == 4
    assert plan.trim_oldest(messages, tokens, 5) == 8
    assert plan.trim_oldest(messages[:2], tokens[:2], 5) == 0


def test_prompt_names_every_section_in_order():
    positions = [prompt.SYSTEM_PROMPT.index(f"## {name}") for name in prompt.SECTIONS]
    assert positions == sorted(positions)
    for name in ("goal", "Decisions", "file names", "Open questions", "preferences", "stood"):
        assert name in prompt.SYSTEM_PROMPT


def test_transcript_carries_text_thinking_and_tools_but_not_hidden_thinking():
    message = Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="consider foo.py"),
            ThinkingBlock(thought="", is_hidden=True, provider_metadata={"data": "SECRET-BLOB"}),
            TextBlock(text="edit foo.py"),
            ToolCallBlock(id="1", name="write", arguments='{"path": "foo.py"}'),
        ],
    )
    text = prompt.render_transcript([Content.human("fix it"), message])
    assert "### User\nfix it" in text
    assert "(thinking) consider foo.py" in text and "SECRET-BLOB" not in text
    assert "(tool call write)" in text and "edit foo.py" in text


def test_request_text_parts_previous_summary_and_instructions():
    text = prompt.request_text("T", previous="OLD", instructions="  the API design ", part=(2, 3))
    assert "part 2 of 3" in text and "OLD" in text and "<transcript>\nT\n</transcript>" in text
    assert text.index("OLD") < text.index("<transcript>")
    assert "focus on: the API design" in text
    single = prompt.request_text("T")
    assert "part" not in single and "focus" not in single


def test_summary_content_is_a_marked_human_turn():
    content = prompt.summary_content("  ## User's goal\nship it\n", {"replaced_turns": 3})
    assert content.speaker == "human"
    assert content.text.startswith(prompt.SUMMARY_HEADER) and content.text.endswith("ship it")
    assert content.metadata["compaction"]["replaced_turns"] == 3
