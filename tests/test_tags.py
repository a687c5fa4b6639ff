"""The streaming think-tag extractor: chunking invariance, hold-back, modes, recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tractui.core.assemble import MessageAssembler
from tractui.core.events import ReclassifyAsThinking, TextDelta, ThinkingDelta, ThinkingEnd
from tractui.core.tags import ThinkTagExtractor, tag_pairs

FIXTURES = Path(__file__).parent / "fixtures" / "providers" / "think_tags"


def run(chunks, **options):
    ex = ThinkTagExtractor(**options)
    events = []
    for chunk in chunks:
        events += ex.feed(chunk)
    return events + ex.close()


def merged(events):
    """Join adjacent deltas of the same kind: the chunking-independent view of a stream."""
    out: list[tuple] = []
    for ev in events:
        if isinstance(ev, (TextDelta, ThinkingDelta)):
            kind = "text" if isinstance(ev, TextDelta) else "think"
            assert ev.text, "no empty deltas"
            if out and out[-1][0] == kind:
                out[-1] = (kind, out[-1][1] + ev.text)
            else:
                out.append((kind, ev.text))
        elif isinstance(ev, ThinkingEnd):
            out.append(("end", ev.unterminated))
        else:
            assert isinstance(ev, ReclassifyAsThinking)
            out.append(("reclassify",))
    return out


def split(text):
    """(thinking, text) as the assembler stores them."""
    return split_with(text)


def split_with(text, **options):
    asm = MessageAssembler()
    for ev in run([text], **options):
        asm.feed(ev)
    return asm.reasoning, asm.text


# -- 1. chunking invariance ---------------------------------------------------
PIECES = [
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<",
    "</",
    "think",
    ">",
    "/",
    "a",
    "b c",
    " ",
    "\n",
    "\n\n",
    "<th",
    "nk>",
]
MODES = [
    {},
    {"anywhere": True},
    {"starts_in_thinking": True},
    {"tags": tag_pairs(("think", "thinking"))},
    {"tags": tag_pairs(("think", "thinking")), "anywhere": True},
]


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.sampled_from(PIECES), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    mode=st.sampled_from(MODES),
)
def test_every_chunking_gives_the_same_result(pieces, cuts, mode):
    text = "".join(pieces)
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=False)]
    assert merged(run(chunks, **mode)) == merged(run([text], **mode))
    assert merged(run(list(text), **mode)) == merged(run([text], **mode))


@given(st.text(alphabet=st.characters(blacklist_characters="<")), st.integers(1, 50))
def test_text_without_tags_passes_through_unchanged(text, size):
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    events = run(chunks)
    assert all(isinstance(e, TextDelta) for e in events)
    assert "".join(e.text for e in events) == text


# -- 2. bounded hold-back ---------------------------------------------------
def test_text_that_cannot_start_a_tag_is_emitted_at_once():
    ex = ThinkTagExtractor()
    first = ex.feed("abc<thi")
    assert first == [TextDelta("abc")]
    assert merged(ex.feed("nk> more") + ex.close()) == [("text", "<think> more")]


def test_hold_back_is_at_most_longest_tag_minus_one():
    ex = ThinkTagExtractor(tag_pairs(("thinking",)))
    ex.feed("<thinking>x")
    events = ex.feed("y</thinking")  # one character short of the close tag
    assert merged(events) == [("think", "y")]
    held = "</thinking"
    assert len(held) == len("</thinking>") - 1
    assert merged(ex.feed(">") + ex.close()) == [("end", False)]


def test_inside_thinking_a_lone_angle_bracket_is_not_held():
    ex = ThinkTagExtractor()
    ex.feed("<think>")
    assert merged(ex.feed("3 < 4 and x<y")) == [("think", "3 < 4 and x<y")]


# -- 3. configurable tags -----------------------------------------------------
def test_tag_pairs_from_setting_names():
    assert tag_pairs(("think", "thinking")) == (("<think>", "</think>"), ("<thinking>", "</thinking>"))
    assert tag_pairs(("<reasoning>",)) == (("<reasoning>", "</reasoning>"),)
    with pytest.raises(ValueError):
        tag_pairs(())


@pytest.mark.parametrize("name", ["thinking", "reasoning"])
def test_alternative_tags(name):
    events = run([f"<{name}>plan</{name}>answer"], tags=tag_pairs((name,)))
    assert merged(events) == [("think", "plan"), ("end", False), ("text", "answer")]


def test_a_block_closes_only_with_its_own_tag():
    events = run(["<thinking>a</think>b</thinking>c"], tags=tag_pairs(("think", "thinking")))
    assert merged(events) == [("think", "a</think>b"), ("end", False), ("text", "c")]


# -- 4. start-only by default, anywhere as an option ----------------------------
def test_block_after_leading_whitespace_is_reasoning():
    assert split(" \n <think>r</think>a") == ("r", "a")


def test_literal_tag_later_in_the_answer_stays_text():
    text = "Use `<think>x</think>` to wrap reasoning."
    assert merged(run([text])) == [("text", text)]
    assert merged(run(["Intro\n```\n<think>", "y</think>\n```"])) == [("text", "Intro\n```\n<think>y</think>\n```")]


def test_anywhere_mode_accepts_interleaved_blocks():
    events = run(["Step 1.<think>check</think>\n\nStep 2.<think>more"], anywhere=True)
    assert merged(events) == [
        ("text", "Step 1."),
        ("think", "check"),
        ("end", False),
        ("text", "\n\nStep 2."),
        ("think", "more"),
        ("end", True),
    ]


def test_anywhere_mode_strips_blank_lines_only_before_the_answer():
    assert split_with("<think>a</think>\n\nAnswer", anywhere=True) == ("a", "Answer")
    assert split_with("Answer.<think>a</think>\n\nMore.", anywhere=True) == ("a", "Answer.\n\nMore.")


def test_consecutive_blocks_at_the_start_are_all_reasoning():
    events = run(["<think>a</think>\n<think>b</think>\n\nanswer"])
    assert merged(events) == [("think", "a"), ("end", False), ("think", "b"), ("end", False), ("text", "answer")]


# -- 5. missing opening tag ------------------------------------------------------
def test_close_without_open_reclassifies_the_text_so_far():
    events = run(["Let me ", "think.</th", "ink>\n\nHello"])
    assert merged(events) == [("text", "Let me think."), ("reclassify",), ("end", False), ("text", "Hello")]
    assert split("Let me think.</think>\n\nHello") == ("Let me think.", "Hello")


def test_close_after_a_literal_open_tag_does_not_reclassify():
    assert split("See <think> and </think> tags") == ("", "See <think> and </think> tags")


def test_close_after_a_real_block_does_not_reclassify():
    assert split("<think>r</think>answer </think> literal") == ("r", "answer </think> literal")


def test_starts_in_thinking_option():
    events = run(["plan", "ning</think>", "\n\nanswer"], starts_in_thinking=True)
    assert merged(events) == [("think", "planning"), ("end", False), ("text", "answer")]
    assert not any(isinstance(e, ReclassifyAsThinking) for e in events)


# -- 6. unterminated blocks and blank lines after </think> --------------------------
def test_unterminated_block_is_thinking_flagged_unterminated():
    events = run(["<think>still going <", "/thi"])
    assert merged(events) == [("think", "still going </thi"), ("end", True)]
    asm = MessageAssembler()
    for ev in events:
        asm.feed(ev)
    [block] = asm.content().blocks
    assert block.type == "thinking" and block.thought == "still going </thi"
    assert block.source_field == "think_tags" and block.provider_metadata == {"unterminated": True}


def test_answer_does_not_begin_with_the_blank_lines_after_close():
    assert split("<think>r</think>\n\n\nAnswer") == ("r", "Answer")
    # indentation of the first answer line is kept; only whole blank lines go
    assert split("<think>r</think>\n \n    code") == ("r", "    code")
    assert split("<think>r</think>  same line") == ("r", "  same line")
    assert split("<think>r</think>\n\n") == ("r", "")


def test_whitespace_only_message_is_kept():
    assert merged(run([" \n "])) == [("text", " \n ")]


def test_partial_tag_at_the_end_is_flushed_as_text():
    assert merged(run(["answer <thi"])) == [("text", "answer <thi")]
    assert merged(run(["  <thi"])) == [("text", "  <thi")]


# -- recordings ------------------------------------------------------------------
def content_deltas(path: Path) -> list[str]:
    """``choices[0].delta.content`` of every SSE data event, JSON decoded (Groq escapes '<')."""
    deltas = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        chunk = json.loads(line[5:])
        for choice in chunk.get("choices") or []:
            content = (choice.get("delta") or {}).get("content")
            if content:
                deltas.append(content)
    return deltas


def strip_blank_lines(text: str) -> str:
    """The extractor's rule for the answer's start: drop leading whitespace-only lines."""
    lead = len(text) - len(text.lstrip())
    return text[text.rfind("\n", 0, lead) + 1 :]


@pytest.mark.parametrize("sse", sorted(FIXTURES.glob("*.sse")), ids=lambda p: p.stem)
def test_recorded_think_tag_streams(sse):
    meta = json.loads(sse.with_suffix(".meta.json").read_text(encoding="utf-8"))
    deltas = content_deltas(sse)
    assert "".join(deltas) == meta["expected_raw_content"]
    asm = MessageAssembler()
    ex = ThinkTagExtractor()
    for delta in deltas:
        for ev in ex.feed(delta):
            asm.feed(ev)
    for ev in ex.close():
        asm.feed(ev)
    content = asm.content()
    assert asm.reasoning == meta["expected_reasoning"]
    # The recordings' expected_text keeps the blank lines after </think>; by
    # requirement the answer does not begin with them, so only those differ.
    expected = meta["expected_text"]
    assert asm.text == strip_blank_lines(expected)
    assert expected.endswith(asm.text) and not expected[: len(expected) - len(asm.text)].strip()
    kinds = [b.type for b in content.blocks]
    assert kinds == ["thinking", "text"]
    assert content.blocks[0].source_field == "think_tags"
    assert content.blocks[0].provider_metadata == {}


@pytest.mark.parametrize("sse", sorted(FIXTURES.glob("*.sse")), ids=lambda p: p.stem)
def test_recorded_streams_with_the_open_tag_in_the_prompt(sse):
    """The same streams minus their ``<think>``: re-classification restores the split."""
    meta = json.loads(sse.with_suffix(".meta.json").read_text(encoding="utf-8"))
    raw = "".join(content_deltas(sse)).replace("<think>", "", 1)
    asm = MessageAssembler()
    for ev in run([raw[i : i + 3] for i in range(0, len(raw), 3)]):
        asm.feed(ev)
    assert asm.reasoning == meta["expected_reasoning"]
    assert asm.text == strip_blank_lines(meta["expected_text"])
