"""The commits a store keeps in memory between reads: always what the file holds.

``HistoryStore.chain`` reads a session once and then follows its own writes and,
through SQLite's ``data_version``, everyone else's; these tests hold it to a
fresh read of the file after every kind of write, from this store and from
another connection.
"""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage
from tractui.core.settings import Settings
from tractui.store.compile import compile_history, merge_commits
from tractui.store.history import SESSIONS_KEPT, HistoryStore


def ai(text: str) -> Content:
    return Content(speaker="ai", blocks=[TextBlock(text=text)])


def as_stored(chain):
    return [c.to_json() for c in chain]


def fresh_chain(path, sid, head):
    with HistoryStore(path) as other:
        return other.chain(sid, head=head)


def test_a_chain_read_twice_is_the_same_objects(tmp_path):
    with HistoryStore(tmp_path / "h.db") as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("hi"))
        store.append(sid, "assistant", ai("hello"))
        first, second = store.chain(sid), store.chain(sid)
        assert [c.to_json() for c in first] == [c.to_json() for c in second]
        assert all(a is b for a, b in zip(first, second, strict=True))


def test_commits_are_frozen(tmp_path):
    with HistoryStore(tmp_path / "h.db") as store:
        sid = store.create_session()
        commit = store.append(sid, "user", Content.human("hi"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            commit.kind = "assistant"  # type: ignore[misc]


def test_own_update_is_seen_and_equals_the_file(tmp_path):
    path = tmp_path / "h.db"
    with HistoryStore(path) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("hi"))
        reply = store.append(sid, "assistant", ai("hel"), status="interrupted")
        before = store.chain(sid)
        store.update(reply.id, content=ai("hello"), status="complete", usage=Usage(input_tokens=3, output_tokens=1))
        after = store.chain(sid)
        assert after[-1].content.text == "hello" and after[-1].status == "complete"
        assert after[0] is before[0]  # the unchanged commit is not read again
        assert as_stored(after) == as_stored(fresh_chain(path, sid, None))


def test_another_connections_writes_are_seen(tmp_path):
    path = tmp_path / "h.db"
    with HistoryStore(path) as mine, HistoryStore(path) as theirs:
        sid = mine.create_session()
        user = mine.append(sid, "user", Content.human("hi"))
        reply = mine.append(sid, "assistant", ai("first"))
        assert mine.chain(sid)[-1].content.text == "first"
        theirs.update(reply.id, content=ai("rewritten elsewhere"))
        assert mine.chain(sid)[-1].content.text == "rewritten elsewhere"
        other = theirs.append(sid, "assistant", ai("their branch"), parent_id=user.id)
        assert [c.id for c in mine.chain(sid, head=other.id)] == [user.id, other.id]


def test_a_raw_sqlite_write_is_seen(tmp_path):
    """Another tool editing the file (not through a store) is a write like any other."""
    path = tmp_path / "h.db"
    with HistoryStore(path) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("hi"))
        reply = store.append(sid, "assistant", ai("before"))
        store.chain(sid)
        conn = sqlite3.connect(path)
        conn.execute("UPDATE commits SET content = ? WHERE id = ?", (ai("after").model_dump_json(), reply.id))
        conn.commit()
        conn.close()
        assert store.chain(sid)[-1].content.text == "after"


def test_merged_reply_follows_its_reasoning(tmp_path):
    """The merge remembered on an answer is dropped when its thinking is rewritten."""
    with HistoryStore(tmp_path / "h.db") as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("hi"))
        thinking = store.append(sid, "reasoning", Content(speaker="ai", blocks=[ThinkingBlock(thought="one")]))
        store.append(sid, "assistant", ai("answer"))
        assert merge_commits(store.chain(sid))[-1].blocks[0].thought == "one"  # type: ignore[union-attr]
        store.update(thinking.id, content=Content(speaker="ai", blocks=[ThinkingBlock(thought="two")]))
        assert merge_commits(store.chain(sid))[-1].blocks[0].thought == "two"  # type: ignore[union-attr]


def test_only_a_few_sessions_are_kept(tmp_path):
    with HistoryStore(tmp_path / "h.db") as store:
        sids = [store.create_session() for _ in range(SESSIONS_KEPT + 2)]
        for sid in sids:
            store.append(sid, "user", Content.human(sid))
            assert store.chain(sid)[-1].content.text == sid
        assert len(store._known) == SESSIONS_KEPT
        assert store.chain(sids[0])[-1].content.text == sids[0]  # read again when asked


# one write: (who writes, what, which earlier commit it concerns, a text)
writes = st.tuples(
    st.sampled_from(["mine", "theirs"]),
    st.sampled_from(["append", "branch", "update", "status"]),
    st.integers(min_value=0, max_value=50),
    st.text(alphabet="abc ", max_size=6),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(writes, min_size=1, max_size=25))
def test_kept_chain_is_always_the_files(tmp_path_factory, steps):
    path = tmp_path_factory.mktemp("kept") / "h.db"
    with HistoryStore(path) as mine, HistoryStore(path) as theirs:
        sid = mine.create_session()
        ids = [mine.append(sid, "user", Content.human("start")).id]
        for who, what, pick, text in steps:
            store = mine if who == "mine" else theirs
            target = ids[pick % len(ids)]
            match what:
                case "append":
                    ids.append(store.append(sid, "assistant", ai(text)).id)
                case "branch":
                    ids.append(store.append(sid, "user", Content.human(text), parent_id=target).id)
                case "update":
                    store.update(target, content=ai(text), metadata={"n": len(text)})
                case "status":
                    store.update(target, status="error", usage=Usage(output_tokens=len(text)))
            for head in (None, target, ids[-1]):
                assert as_stored(mine.chain(sid, head=head)) == as_stored(fresh_chain(path, sid, head))


def test_a_reply_merged_with_thinking_is_still_sent_without_it(tmp_path):
    """Both merges of a reply are remembered, one with its thinking (the gauge), one without
    (what ``reasoning.includeInContext false`` sends); neither stands in for the other."""
    with HistoryStore(tmp_path / "h.db") as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("hi"))
        store.append(sid, "reasoning", Content(speaker="ai", blocks=[ThinkingBlock(thought="secret plan")]))
        store.append(sid, "assistant", ai("answer"))
        store.append(sid, "user", Content.human("more"))
        chain = store.chain(sid)
        assert merge_commits(chain)[1].thinking[0].thought == "secret plan"
        sent = compile_history(chain, Settings())
        assert sent[1].text == "answer" and sent[1].thinking == []
        assert merge_commits(store.chain(sid))[1].thinking[0].thought == "secret plan"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=50)), min_size=1, max_size=40))
def test_a_chains_end_read_alone_is_the_end_of_the_whole_chain(tmp_path_factory, steps):
    """A store that keeps nothing of the session yet reads only a chain's end (a resumed
    session's newest message); it must be the end of the chain read whole, from any head."""
    path = tmp_path_factory.mktemp("end") / "h.db"
    with HistoryStore(path) as store:
        sid = store.create_session()
        other = store.create_session()
        ids = [store.append(sid, "user", Content.human("start")).id]
        for branch, pick in steps:
            parent = ids[pick % len(ids)] if branch else "head"
            ids.append(store.append(sid, "assistant", ai(f"reply {len(ids)}"), parent_id=parent).id)
            store.append(other, "user", Content.human("elsewhere"))
    for head in {None, ids[0], ids[len(ids) // 2], ids[-1]}:
        whole = fresh_chain(path, sid, head)
        for last in range(len(whole) + 2):
            with HistoryStore(path) as fresh:
                end = fresh.chain(sid, head=head, last=last)
            assert as_stored(end) == as_stored(whole[-last:] if last else [])


def test_a_chains_end_stops_at_a_parent_cycle_and_at_the_sessions_edge(tmp_path):
    """Rows another tool left: a parent cycle, and a parent in another session."""
    path = tmp_path / "h.db"
    with HistoryStore(path) as store:
        sid = store.create_session()
        first = store.append(sid, "user", Content.human("one"))
        second = store.append(sid, "assistant", ai("two"))
        other = store.create_session()
        elsewhere = store.append(other, "user", Content.human("elsewhere"))
        third = store.append(other, "assistant", ai("three"))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE commits SET parent_id = ? WHERE id = ?", (second.id, first.id))
    conn.execute("UPDATE commits SET parent_id = ? WHERE id = ?", (second.id, elsewhere.id))
    conn.commit()
    conn.close()
    for session, head, texts in ((sid, None, ["one", "two"]), (other, third.id, ["elsewhere", "three"])):
        for last in (1, 2, 5):
            with HistoryStore(path) as fresh:
                end = [c.content.text for c in fresh.chain(session, head=head, last=last)]
            assert end == texts[-last:]


def test_a_walk_cut_short_by_a_parent_cycle_is_not_taken_up(tmp_path):
    """A cycle another tool left in the file: the walk that went round it is not the start of a
    later walk through the same commits (which would repeat them)."""
    path = tmp_path / "h.db"
    with HistoryStore(path) as store:
        sid = store.create_session()
        a = store.append(sid, "user", Content.human("a")).id
        b = store.append(sid, "user", Content.human("b")).id
        head = store.append(sid, "user", Content.human("h")).id
        with sqlite3.connect(path) as raw:
            raw.execute("UPDATE commits SET parent_id = ? WHERE id = ?", (b, a))
        store.chain(sid, head=a)  # round the cycle: a, b
        assert [c.id for c in store.chain(sid, head=head)] == [c.id for c in fresh_chain(path, sid, head)]
