"""The history store against real SQLite files."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest

from tractui.config.paths import history_path
from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage
from tractui.errors import StoreError
from tractui.store.db import SCHEMA_VERSION
from tractui.store.history import HistoryStore, new_id


@pytest.fixture
def store(tmp_path):
    s = HistoryStore(tmp_path / "data" / "history.db")
    yield s
    s.close()


def ai(text: str) -> Content:
    return Content(speaker="ai", blocks=[TextBlock(text=text)])


def test_default_path_is_under_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "d"))
    with HistoryStore(history_path()) as s:
        assert s.path == tmp_path / "d" / "history.db"
        assert s.path.exists()


def test_files_are_owner_only_and_wal(tmp_path):
    path = tmp_path / "fresh" / "sub" / "history.db"
    with HistoryStore(path) as s:
        sid = s.create_session()
        s.append(sid, "user", Content.human("hi"))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        wal = path.with_name("history.db-wal")
        assert wal.exists() and stat.S_IMODE(os.stat(wal).st_mode) == 0o600
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION


def test_ids_are_sortable_and_unique():
    ids = [new_id() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == 26 for i in ids)


def test_commit_round_trip_keeps_everything(store):
    sid = store.create_session()
    content = Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought="  hmm\n", source_field="thinking", signature="sig=="), TextBlock(text="ok")],
        metadata={"provider": "anthropic", "model": "m", "base_url": "https://x"},
    )
    usage = Usage(input_tokens=10, output_tokens=5, reasoning_tokens=3, cached_input_tokens=2)
    c = store.append(
        sid,
        "assistant",
        content,
        usage=usage,
        provider="anthropic",
        model="m",
        profile="p",
        status="interrupted",
        metadata={"k": [1]},
    )
    got = store.get(c.id)
    assert got == c
    assert got.content.blocks[0].thought == "  hmm\n"


def test_chain_follows_parents_and_head(store):
    sid = store.create_session()
    u = store.append(sid, "user", Content.human("first question"))
    r = store.append(sid, "reasoning", Content(speaker="ai", blocks=[ThinkingBlock(thought="t")]))
    a = store.append(sid, "assistant", ai("answer"))
    assert [c.id for c in store.chain(sid)] == [u.id, r.id, a.id]
    assert store.head(sid) == a.id
    assert store.session(sid).title == "first question"
    assert store.session(sid).message_count == 2


def test_retry_branch_keeps_old_answer_reachable(store):
    sid = store.create_session()
    u = store.append(sid, "user", Content.human("q"))
    a1 = store.append(sid, "assistant", ai("one"))
    a2 = store.append(sid, "assistant", ai("two"), parent_id=u.id)
    assert [c.content.text for c in store.chain(sid)] == ["q", "two"]
    assert [c.id for c in store.siblings(a2.id)] == [a1.id, a2.id]
    assert [c.content.text for c in store.chain(sid, head=a1.id)] == ["q", "one"]
    assert [c.content.text for c in store.chain(sid, head=a2.id)] == ["q", "two"]


def test_update_is_the_periodic_flush(store):
    sid = store.create_session()
    store.append(sid, "user", Content.human("q"))
    a = store.append(sid, "assistant", ai("par"), status="interrupted")
    store.update(a.id, content=ai("partial and more"), usage=Usage(input_tokens=1, output_tokens=2))
    got = store.get(a.id)
    assert got.content.text == "partial and more" and got.status == "interrupted"
    store.update(a.id, status="complete")
    assert store.get(a.id).status == "complete"


def test_sessions_list_latest_and_prefix(store):
    s1 = store.create_session()
    store.append(s1, "user", Content.human("alpha"))
    s2 = store.create_session()
    store.append(s2, "user", Content.human("beta"))
    store.append(s2, "assistant", ai("b"), model="m2")
    assert store.latest_session() == s2
    listed = store.list_sessions()
    assert [i.id for i in listed] == [s2, s1]
    assert listed[0].model == "m2" and listed[0].message_count == 2
    assert store.resolve_session(s1.lower()) == s1
    with pytest.raises(StoreError, match="ambiguous"):
        store.resolve_session(s1[:8])  # same millisecond prefix
    assert store.resolve_session(None) == s2
    with pytest.raises(StoreError, match="no session"):
        store.resolve_session("ZZZZ")
    assert store.resolve_session("  ") == s2  # no id at all: the latest


@pytest.mark.parametrize("ref", ["%", "_", "0_", "%" * 26])
def test_a_session_prefix_is_text_not_a_pattern(store, ref):
    """``--resume _`` opened the only session (LIKE's wildcards) until 2026-11-28."""
    session = store.create_session()
    store.append(session, "user", Content.human("alpha"))
    with pytest.raises(StoreError, match="no session"):
        store.resolve_session(ref)


def _titled(store, *titles: str, ids: str | None = None) -> list[str]:
    """One session per title, its first message that title, in order (the last is the newest);
    their ids ``ids`` and a number when given."""
    sessions = []
    for n, title in enumerate(titles):
        sessions.append(store.create_session(session_id=f"{ids}{n}" if ids else None))
        store.append(sessions[-1], "user", Content.human(title))
    return sessions


def test_search_matches_title_text_in_any_case_and_an_id_prefix(store):
    plain, upper, accented, other = _titled(
        store, "fix the parser", "PARSER speed", "Über den Parser", "lunch", ids="01ABCDEFGH"
    )
    assert [i.id for i in store.search_sessions("parser")] == [accented, upper, plain]  # newest first
    assert [i.id for i in store.search_sessions("ÜBER")] == [accented]
    assert [i.id for i in store.search_sessions("  the   parser ")] == [plain]  # spaced as titles are
    assert [i.id for i in store.search_sessions(other.lower())] == [other]
    assert {i.id for i in store.search_sessions("01abc")} == {plain, upper, accented, other}
    assert store.search_sessions(other[1:]) == []  # an id is matched from its start only
    found = store.search_sessions("lunch")[0]
    assert found.message_count == 1 and found.title == "lunch"  # rows as list_sessions gives them


@pytest.mark.parametrize(("text", "found"), [("%", [1]), ("_", [2]), ("50%", [1]), ("a_b", [2]), ("\\", [3])])
def test_search_takes_like_wildcards_as_characters(store, text, found):
    sessions = _titled(store, "plain words", "rate 50% off", "snake a_b case", "back\\slash")
    assert [i.id for i in store.search_sessions(text)] == [sessions[n] for n in reversed(found)]


def test_search_keeps_to_the_limit_and_lists_all_when_blank(store):
    sessions = _titled(store, *(f"note {n}" for n in range(5)))
    assert [i.id for i in store.search_sessions("note", limit=2)] == sessions[:2:-1]
    assert [i.id for i in store.search_sessions(" ", limit=3)] == [i.id for i in store.list_sessions(limit=3)]
    assert store.search_sessions("nothing like it") == []


def test_delete_session_removes_its_commits_and_leaves_the_others(store):
    kept, gone = _titled(store, "kept", "gone")
    store.append(gone, "assistant", ai("answer"))
    assert store.chain(gone)  # read: kept in the store's memory
    store.delete_session(gone)
    assert [i.id for i in store.list_sessions()] == [kept] and store.session(gone) is None
    assert store.seen_head(gone) is None and store.commits(gone) == []
    with sqlite3.connect(store.path) as raw:  # the file itself, past any memory of the store
        assert raw.execute("SELECT COUNT(*) FROM commits WHERE session_id = ?", (gone,)).fetchone() == (0,)
        assert raw.execute("SELECT COUNT(*) FROM commits WHERE session_id = ?", (kept,)).fetchone() == (1,)
    with pytest.raises(StoreError, match="no session"):
        store.delete_session(gone)


def test_totals_sum_every_branch(store):
    sid = store.create_session()
    u = store.append(sid, "user", Content.human("q"))
    store.append(sid, "assistant", ai("1"), usage=Usage(input_tokens=5, output_tokens=7, reasoning_tokens=4))
    store.append(
        sid, "assistant", ai("2"), parent_id=u.id, usage=Usage(input_tokens=5, output_tokens=3, reasoning_tokens=1)
    )
    t = store.totals(sid)
    assert (t.output_tokens, t.reasoning_tokens) == (10, 5)


def test_export_import_is_lossless(store, tmp_path):
    sid = store.create_session()
    u = store.append(sid, "user", Content.human("q"))
    store.append(
        sid,
        "reasoning",
        Content(speaker="ai", blocks=[ThinkingBlock(thought="", is_hidden=True, provider_metadata={"data": "opaque"})]),
    )
    store.append(sid, "assistant", ai("a"), usage=Usage(input_tokens=1), status="interrupted")
    store.append(sid, "assistant", ai("b"), parent_id=u.id)
    data = store.export_session(sid)
    with HistoryStore(tmp_path / "other.db") as other:
        assert other.import_session(json.loads(json.dumps(data))) == sid
        assert other.export_session(sid) == data
        with pytest.raises(StoreError, match="already"):
            other.import_session(data)


def test_import_refuses_bad_files_and_changes_nothing(store):
    with pytest.raises(StoreError, match="not a tractui session export"):
        store.import_session({"format": "x"})
    bad = {
        "format": "tractui-session",
        "version": 1,
        "session": {"id": new_id(), "created_at": 0, "updated_at": 0, "head": None},
        "commits": [
            {"id": new_id(), "parent_id": new_id(), "kind": "user", "content": {"speaker": "human"}, "created_at": 0}
        ],
    }
    with pytest.raises(StoreError, match="missing parent"):
        store.import_session(bad)
    assert store.list_sessions() == []


def test_corrupt_file_is_a_one_line_error_and_left_untouched(tmp_path):
    path = tmp_path / "history.db"
    garbage = b"this is not sqlite at all " * 200
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as info:
        HistoryStore(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    assert path.read_bytes() == garbage


def test_unusable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(StoreError) as info:
        HistoryStore(blocker / "sub" / "history.db")
    assert "history.db" in str(info.value) and "\n" not in str(info.value)
    assert blocker.read_text().startswith("a file")


def test_lock_held_too_long_is_a_clear_error(tmp_path, monkeypatch):
    import tractui.store.db as db

    path = tmp_path / "history.db"
    HistoryStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE schema_version SET version = version")
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)
    try:
        with pytest.raises(StoreError, match="locked"):
            HistoryStore(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "history.db"
    HistoryStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        HistoryStore(path)


def test_last_reply_is_found_past_a_long_run_of_other_commits(tmp_path):
    """The end read alone holds no reply: the whole branch is read for it (where a resumed session goes on)."""
    from tractui.store.history import REPLY_LOOKBACK

    with HistoryStore(tmp_path / "h.db") as store:
        session = store.create_session("s")
        store.append(session, "user", Content.human("asked"))
        reply = store.append(session, "assistant", Content(speaker="ai", blocks=[TextBlock(text="answered")]))
        for i in range(REPLY_LOOKBACK + 2):
            store.append(session, "user", Content.human(f"unanswered {i}"))
        assert store.last_reply(session) == reply
        assert store.last_reply(store.create_session("empty")) is None
