"""compile_history: commit chains from a real SQLite file to the messages sent."""

from __future__ import annotations

import pytest

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock
from tractui.core.settings import Settings
from tractui.store.compile import INTERRUPTED, compacted_ids, compile_history, merge_commits, summary_metadata
from tractui.store.history import HistoryStore


@pytest.fixture
def store(tmp_path):
    s = HistoryStore(tmp_path / "history.db")
    yield s
    s.close()


def thinking(text: str, **kw) -> Content:
    return Content(speaker="ai", blocks=[ThinkingBlock(thought=text, **kw)], metadata={"provider": "p", "model": "m"})


def answer(*blocks) -> Content:
    return Content(speaker="ai", blocks=list(blocks), metadata={"provider": "p", "model": "m", "base_url": "u"})


def exchange(store, sid, q, t, a, **kw):
    store.append(sid, "user", Content.human(q))
    if t is not None:
        store.append(sid, "reasoning", thinking(t))
    return store.append(sid, "assistant", answer(TextBlock(text=a)), **kw)


def keep_all() -> Settings:
    return Settings({"reasoning.includeInContext": True, "reasoning.stripFromContext": "none"})


def test_reasoning_merges_into_the_answer_that_follows(store):
    sid = store.create_session()
    exchange(store, sid, "q1", "think 1", "a1")
    exchange(store, sid, "q2", None, "a2")
    msgs = compile_history(store.chain(sid), keep_all())
    assert [m.speaker for m in msgs] == ["human", "ai", "human", "ai"]
    assert [type(b).__name__ for b in msgs[1].blocks] == ["ThinkingBlock", "TextBlock"]
    assert msgs[1].thinking[0].thought == "think 1" and msgs[1].text == "a1"
    assert msgs[1].metadata["base_url"] == "u"
    assert msgs[3].thinking == []


def test_interleaved_thinking_keeps_its_place(store):
    sid = store.create_session()
    store.append(sid, "user", Content.human("q"))
    store.append(sid, "reasoning", thinking("first"))
    store.append(
        sid, "assistant", answer(TextBlock(text="a"), ThinkingBlock(thought="second"), ToolCallBlock(id="c", name="f"))
    )
    msg = compile_history(store.chain(sid), keep_all())[1]
    assert [getattr(b, "thought", None) or getattr(b, "text", None) or b.name for b in msg.blocks] == [
        "first",
        "a",
        "second",
        "f",
    ]


@pytest.mark.parametrize(
    ("include", "strip", "kept"),
    [
        (False, "none", [False, False]),
        (True, "none", [True, True]),
        (True, "all", [False, False]),
        (True, "allButLast", [False, True]),
    ],
)
def test_reasoning_policy_is_applied(store, include, strip, kept):
    sid = store.create_session()
    exchange(store, sid, "q1", "t1", "a1")
    exchange(store, sid, "q2", "t2", "a2")
    settings = Settings({"reasoning.includeInContext": include, "reasoning.stripFromContext": strip})
    msgs = compile_history(store.chain(sid), settings)
    assert [bool(m.thinking) for m in msgs if m.speaker == "ai"] == kept
    assert [m.text for m in msgs] == ["q1", "a1", "q2", "a2"]
    # storage is untouched by the policy
    assert store.chain(sid)[1].content.thinking[0].thought == "t1"


def test_interrupted_reply_included_and_marked(store):
    sid = store.create_session()
    exchange(store, sid, "q", "half a thought", "half an ans", status="interrupted")
    msgs = compile_history(store.chain(sid), keep_all())
    assert msgs[1].text == "half an ans" and msgs[1].metadata[INTERRUPTED] is True


def test_reasoning_without_answer_after_a_kill_is_kept_and_not_sent(store):
    """A reply cut off before it said or called anything answered nothing: the history keeps its
    thinking, and neither the request nor the gauge's merge holds it, whatever the policy."""
    sid = store.create_session()
    store.append(sid, "user", Content.human("q"))
    store.append(sid, "reasoning", thinking("cut off"), status="interrupted")
    store.append(sid, "assistant", answer(), status="interrupted")  # as Esc leaves it
    chain = store.chain(sid)
    assert chain[1].content.thinking[0].thought == "cut off"
    assert [m.speaker for m in merge_commits(chain)] == ["human"]
    for settings in (Settings(), keep_all()):
        assert [m.speaker for m in compile_history(chain, settings)] == ["human"]
    # a reply that finished with only thinking did answer: it is sent when the policy keeps thinking
    store.append(sid, "user", Content.human("again"))
    store.append(sid, "reasoning", thinking("whole"))
    store.append(sid, "assistant", answer())
    assert [m.speaker for m in compile_history(store.chain(sid), keep_all())] == ["human", "human", "ai"]


def test_error_only_reply_is_skipped(store):
    sid = store.create_session()
    store.append(sid, "user", Content.human("q"))
    store.append(sid, "assistant", answer(), status="error", metadata={"error": {"message": "boom"}})
    store.append(sid, "user", Content.human("again"))
    assert [m.text for m in compile_history(store.chain(sid), Settings())] == ["q", "again"]


def test_summary_stands_in_for_its_range(store):
    sid = store.create_session()
    exchange(store, sid, "q1", "t1", "a1")
    exchange(store, sid, "q2", None, "a2")
    chain = store.chain(sid)
    first, last = chain[0].id, chain[-1].id
    exchange(store, sid, "q3", None, "a3")
    store.append(sid, "summary", Content.human("SUMMARY of q1..a2"), metadata=summary_metadata(first, last))
    store.append(sid, "user", Content.human("q4"))
    chain = store.chain(sid)
    assert [m.text for m in compile_history(chain, Settings())] == ["SUMMARY of q1..a2", "q3", "a3", "q4"]
    assert compacted_ids(chain) == {c.id for c in chain[:5]}
    assert len(chain) == 9  # originals kept


def test_later_summary_covering_an_earlier_one_wins(store):
    sid = store.create_session()
    exchange(store, sid, "q1", None, "a1")
    c = store.chain(sid)
    store.append(sid, "summary", Content.human("S1"), metadata=summary_metadata(c[0].id, c[-1].id))
    exchange(store, sid, "q2", None, "a2")
    c = store.chain(sid)
    store.append(sid, "summary", Content.human("S2"), metadata=summary_metadata(c[0].id, c[-1].id))
    exchange(store, sid, "q3", None, "a3")
    assert [m.text for m in compile_history(store.chain(sid), Settings())] == ["S2", "q3", "a3"]


def test_summary_with_a_range_off_the_chain_is_not_applied(store):
    sid = store.create_session()
    exchange(store, sid, "q1", None, "a1")
    store.append(sid, "summary", Content.human("S"), metadata=summary_metadata("NOPE", "NOPE"))
    assert [m.text for m in compile_history(store.chain(sid), Settings())] == ["q1", "a1", "S"]
