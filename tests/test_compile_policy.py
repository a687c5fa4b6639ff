"""compile_history's fast path (thinking left out during the merge) sends exactly what
merging everything and then applying the reasoning policy sends."""

from __future__ import annotations

import pytest

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.reasoning import apply_reasoning_policy
from tractui.core.settings import Settings
from tractui.store.compile import INTERRUPTED, compile_history, merge_commits, summary_metadata
from tractui.store.history import HistoryStore

STAMP = {"provider": "anthropic", "model": "m", "base_url": "u"}


def ai(*blocks, **metadata) -> Content:
    return Content(speaker="ai", blocks=list(blocks), metadata=metadata or dict(STAMP))


@pytest.fixture
def chain(tmp_path):
    """A chain with every shape the merge handles, read back from a real SQLite file."""
    with HistoryStore(tmp_path / "history.db") as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("q1"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="t1", signature="sig")))
        store.append(sid, "assistant", ai(TextBlock(text="a1")), usage=Usage(input_tokens=5, output_tokens=3))
        store.append(sid, "user", Content.human("q2"))
        store.append(sid, "assistant", ai(TextBlock(text="a2")))  # no reasoning at all
        store.append(sid, "user", Content.human("q3"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="t3"), provider="other", model="n"))  # other provenance
        store.append(
            sid, "assistant", ai(ThinkingBlock(thought="tags", source_field="think_tags"), TextBlock(text="a3"))
        )
        store.append(sid, "user", Content.human("q4"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="t4")), status="interrupted")
        store.append(sid, "assistant", ai(ToolCallBlock(id="c", name="f", arguments="{}")))
        store.append(sid, "tool", Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="c", content="r")]))
        store.append(
            sid, "reasoning", ai(ThinkingBlock(thought="orphan")), status="interrupted"
        )  # killed before the answer
        store.append(sid, "user", Content.human("q5"))
        store.append(sid, "assistant", ai(), status="error")  # an error-only reply
        store.append(sid, "user", Content.human("q6"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="last thought")))
        store.append(sid, "assistant", ai(TextBlock(text="a6")))
        yield store.chain(sid)


def slow_path(chain, settings: Settings) -> list[Content]:
    return [m for m in apply_reasoning_policy(merge_commits(chain), settings) if m.blocks or m.speaker != "ai"]


@pytest.mark.parametrize(
    ("include", "strip"),
    [(False, "none"), (True, "all"), (True, "allButLast"), (True, "none")],
)
def test_compile_equals_merge_then_policy(chain, include, strip):
    settings = Settings({"reasoning.includeInContext": include, "reasoning.stripFromContext": strip})
    assert compile_history(chain, settings) == slow_path(chain, settings)


def test_stripping_all_leaves_answers_provenance_and_interruptions(chain):
    msgs = compile_history(chain, Settings())
    assert all(not m.thinking for m in msgs)
    assert [m.text or m.speaker for m in msgs] == [
        "q1",
        "a1",
        "q2",
        "a2",
        "q3",
        "a3",
        "q4",
        "ai",
        "tool",
        "q5",
        "q6",
        "a6",
    ]
    assert msgs[5].metadata["provider"] == "anthropic" and msgs[5].metadata["model"] == "m"  # the answer's stamp wins
    assert msgs[7].metadata[INTERRUPTED] is True and msgs[7].tool_calls[0].name == "f"


def test_the_stored_chain_is_not_changed(chain):
    before = [c.content.model_copy(deep=True) for c in chain]
    compile_history(chain, Settings())
    compile_history(chain, Settings({"reasoning.includeInContext": True, "reasoning.stripFromContext": "allButLast"}))
    assert [c.content for c in chain] == before


def test_summaries_still_stand_in_for_their_range(tmp_path):
    with HistoryStore(tmp_path / "history.db") as store:
        sid = store.create_session()
        first = store.append(sid, "user", Content.human("q1"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="t1")))
        last = store.append(sid, "assistant", ai(TextBlock(text="a1")))
        store.append(
            sid,
            "summary",
            Content(speaker="system", blocks=[TextBlock(text="S")]),
            metadata=summary_metadata(first.id, last.id),
        )
        store.append(sid, "user", Content.human("q2"))
        chain = store.chain(sid)
    assert [m.text for m in compile_history(chain, Settings())] == ["S", "q2"]


def test_a_message_typed_after_a_stopped_call_goes_on_its_loop_which_keeps_its_thinking(tmp_path):
    """Until 2026-11-28 it ended the loop: the loop's thinking went with the earlier turns'."""
    from tractui.store.compile import Compiler

    with HistoryStore(tmp_path / "history.db") as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("q1"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="old", signature="s0")))
        store.append(sid, "assistant", ai(TextBlock(text="a1")))
        store.append(sid, "user", Content.human("q2"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="wait first", signature="s1")))
        store.append(sid, "assistant", ai(ToolCallBlock(id="c", name="f", arguments="{}")))
        result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="c", content="cancelled", is_error=True)])
        store.append(sid, "tool", result)
        kept = Compiler()
        settings = Settings()  # includeInContext false
        before = kept.compiled(store.chain(sid), settings)  # the loop as it stood: in progress
        store.append(sid, "user", Content.human("and now?"))
        typed = store.chain(sid)
        store.append(sid, "assistant", ai(TextBlock(text="done")))
        answered = store.chain(sid)
        for chain, loop_thinking in ((typed, ["wait first"]), (answered, [])):
            msgs = compile_history(chain, settings)
            assert [b.thought for m in msgs for b in m.thinking] == loop_thinking
            assert kept.compiled(chain, settings) == msgs
    assert [b.thought for m in before for b in m.thinking] == ["wait first"]


@pytest.mark.parametrize("kinds", [["assistant"], ["reasoning", "assistant"], ["reasoning"]])
@pytest.mark.parametrize("typed", [["try again"], ["and now?", "try again"]])
def test_a_failed_reply_after_a_result_does_not_end_the_loop_the_providers_see_going_on(tmp_path, typed, kinds):
    """A failed reply with nothing in it is no message: the providers and the gauge read the tool
    result and the typed message side by side (the loop goes on) while the store took the loop's
    thinking out with the earlier turns', until 2026-11-28 (the request then lacked it). Its
    commits may include an empty reasoning commit (an imported session): the merge dropped that
    reply too, while the loop's end was read as if it had been sent, until 2026-11-28."""
    from tractui.providers.thinking_back import current_turn_start
    from tractui.store.compile import Compiler

    failed = {"error": {"kind": "http", "message": "overloaded", "status": 529}}
    with HistoryStore(tmp_path / "history.db") as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("q"))
        store.append(sid, "reasoning", ai(ThinkingBlock(thought="wait first", signature="s1")))
        store.append(sid, "assistant", ai(ToolCallBlock(id="c", name="f", arguments="{}")))
        store.append(sid, "tool", Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="c", content="ok")]))
        kept = Compiler()
        for text in typed:
            if text == typed[-1]:
                for kind in kinds:
                    store.append(sid, kind, Content(speaker="ai", blocks=[]), status="error", metadata=failed)
            store.append(sid, "user", Content.human(text))
            kept.compiled(store.chain(sid), Settings())
        chain = store.chain(sid)
    msgs = compile_history(chain, Settings())  # includeInContext false
    assert current_turn_start(msgs) == 1  # the provider's view: the loop is the turn in progress
    assert [b.thought for m in msgs for b in m.thinking] == ["wait first"]
    assert kept.compiled(chain, Settings()) == msgs
