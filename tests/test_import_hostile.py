"""``tractui import`` of hostile files: refused in one line before anything is written; cycles never hang."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tractui.cli.main import main
from tractui.config.paths import history_path
from tractui.core.content import Content
from tractui.store.history import HistoryStore, new_id


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def commit(cid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "parent_id": parent,
        "kind": "user",
        "content": {"speaker": "human", "blocks": [{"type": "text", "text": "hi"}]},
        "created_at": 1_700_000_000.0,
        **extra,
    }


def export(commits: list[dict[str, Any]], **session: Any) -> dict[str, Any]:
    return {
        "format": "tractui-session",
        "version": 1,
        "session": {
            "id": new_id(),
            "created_at": 1_700_000_000.0,
            "updated_at": 1_700_000_000.0,
            "head": commits[-1]["id"] if commits else None,
            "title": "t",
            **session,
        },
        "commits": commits,
    }


def refused(tmp_path: Path, payload: str | dict[str, Any], needle: str) -> None:
    file = tmp_path / "in.json"
    file.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    code, out, err = run("import", str(file))
    assert code == 2, (out, err)
    assert len(err.splitlines()) == 1 and needle in err, err
    assert "Traceback" not in err
    with HistoryStore(history_path()) as store:
        assert store.list_sessions() == []
        assert store._conn.execute("SELECT COUNT(*) FROM commits").fetchone() == (0,)


def test_a_valid_export_still_imports(data, tmp_path):
    a, b = new_id(), new_id()
    file = tmp_path / "ok.json"
    file.write_text(json.dumps(export([commit(a, None), commit(b, a, kind="assistant")])))
    code, out, err = run("import", str(file))
    assert code == 0, err
    code, out, _ = run("log")
    assert code == 0 and out.count("[user]") == 1 and out.count("[assistant]") == 1


def test_deep_nesting_is_refused_not_a_recursion_error(data, tmp_path):
    refused(tmp_path, "[" * 100_000 + "]" * 100_000, "nested")


def test_nesting_below_the_interpreter_limit_is_refused_too(data, tmp_path):
    deep: Any = "x"
    for _ in range(200):
        deep = {"k": deep}
    a = new_id()
    refused(tmp_path, export([commit(a, None, metadata=deep)]), "nested")


def test_a_commit_that_is_its_own_parent_is_refused(data, tmp_path):
    a = new_id()
    refused(tmp_path, export([commit(a, a)]), "cycle")


def test_a_parent_cycle_is_refused(data, tmp_path):
    a, b, c = new_id(), new_id(), new_id()
    refused(tmp_path, export([commit(a, c), commit(b, a), commit(c, b)]), "cycle")


def test_duplicate_commit_ids_are_refused(data, tmp_path):
    a = new_id()
    refused(tmp_path, export([commit(a, None), commit(a, None)]), "twice")


@pytest.mark.parametrize("when", [1e300, -5.0, 1e12, "NaN", "Infinity"])
def test_absurd_timestamps_are_refused(data, tmp_path, when):
    a = new_id()
    text = json.dumps(export([commit(a, None, created_at=0.0)])).replace('"created_at": 0.0', f'"created_at": {when}')
    refused(tmp_path, text, "time")


def test_absurd_session_times_are_refused(data, tmp_path):
    refused(tmp_path, export([commit(new_id(), None)], updated_at=1e300), "time")


@pytest.mark.parametrize("sid", ["../../../tmp/evil", "", "x" * 26, "01ARZ3NDEKTSV4RRFFQ69G5FA\x1b"])
def test_session_ids_must_be_tractui_ids(data, tmp_path, sid):
    refused(tmp_path, export([commit(new_id(), None)], id=sid), "id")


def test_commit_ids_must_be_tractui_ids(data, tmp_path):
    refused(tmp_path, export([commit("../evil", None)]), "id")


@pytest.mark.parametrize("title", [42, None, "t" * 5000])
def test_titles_must_be_short_text(data, tmp_path, title):
    refused(tmp_path, export([commit(new_id(), None)], title=title), "title")


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "root"},
        {"status": "exploded"},
        {"content": "text"},
        {"metadata": ["not", "a", "dict"]},
        {"usage": {"input_tokens": "many"}},
    ],
)
def test_wrong_shapes_are_refused(data, tmp_path, change):
    refused(tmp_path, export([commit(new_id(), None, **change)]), "cannot import")


def test_too_large_a_file_is_refused_before_it_is_read(data, tmp_path, monkeypatch):
    from tractui.store import imports

    monkeypatch.setattr(imports, "MAX_BYTES", 1000)
    refused(tmp_path, export([commit(new_id(), None, metadata={"pad": "x" * 2000})]), "larger than")


def test_an_error_that_is_not_a_dict_does_not_break_log(data, tmp_path):
    file = tmp_path / "in.json"
    file.write_text(json.dumps(export([commit(new_id(), None, metadata={"error": "a string"})])))
    assert run("import", str(file))[0] == 0
    code, _out, err = run("log")
    assert code == 0 and "Traceback" not in err


def cyclic_database(path: Path) -> str:
    """A database whose session head sits on a parent cycle, as an old import or another tool could leave it."""
    with HistoryStore(path) as store:
        sid = store.create_session("cyclic")
        first = store.append(sid, "user", Content.human("one"))
        second = store.append(sid, "user", Content.human("two"))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE commits SET parent_id = ? WHERE id = ?", (second.id, first.id))
    conn.commit()
    conn.close()
    return sid


@pytest.mark.parametrize("argv", [["sessions"], ["log"], ["export", "--format", "md"]])
def test_a_cycle_already_in_the_database_does_not_hang(tmp_path, argv):
    cyclic_database(tmp_path / "data" / "history.db")
    env = {**os.environ, "TRACTUI_DATA_DIR": str(tmp_path / "data"), "TRACTUI_CONFIG_DIR": str(tmp_path / "config")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tractui", *argv], env=env, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"tractui {' '.join(argv)} hangs on a parent cycle")
    assert done.returncode == 0, done.stderr
    assert "two" in done.stdout or "cyclic" in done.stdout


def test_chain_stops_at_a_cycle(tmp_path):
    sid = cyclic_database(tmp_path / "h.db")
    with HistoryStore(tmp_path / "h.db") as store:
        assert [c.content.text for c in store.chain(sid)] == ["one", "two"]
        assert store.session(sid).message_count == 2


@pytest.mark.parametrize("argv", [("sessions",), ("log",), ("export", "--format", "md")])
def test_absurd_times_already_in_the_database_are_shown_not_fatal(data, argv):
    with HistoryStore(history_path()) as store:
        sid = store.create_session("old import")
        store.append(sid, "user", Content.human("hi"))
        store._conn.execute("UPDATE sessions SET created_at = 1e300, updated_at = -1e300")
        store._conn.execute("UPDATE commits SET created_at = 1e300")
    code, out, err = run(*argv)
    assert code == 0, err
    assert "hi" in out or "old import" in out
