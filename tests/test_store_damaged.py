"""A history database with damaged pages: found at open, left untouched, one line saying how to start afresh."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest

from tractui.cli.main import main
from tractui.config.paths import history_path
from tractui.core.content import Content
from tractui.errors import StoreError
from tractui.store.db import needs_check
from tractui.store.history import HistoryStore

PAGE = 4096


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


def damaged_database(path: Path) -> bytes:
    """A real history with a few hundred commits, one of its pages overwritten in the middle; its bytes."""
    with HistoryStore(path) as store:
        for i in range(10):
            sid = store.create_session()
            for j in range(20):
                store.append(sid, "user", Content.human(f"message {i}.{j} " + "words " * 80))
    raw = bytearray(path.read_bytes())
    pages = len(raw) // PAGE
    assert pages > 20
    victim = pages // 2
    raw[victim * PAGE : victim * PAGE + 64] = b"\xab" * 64  # the b-tree page header and cell pointers
    path.write_bytes(bytes(raw))
    return bytes(raw)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("argv", [("sessions",), ("log",), ("export", "--format", "md"), ("-p", "hi")])
def test_damage_is_found_at_open_and_the_file_left_untouched(data, argv):
    path = history_path()
    before = damaged_database(path)
    listing = files(data)
    code, _out, err = run(*argv)
    assert code != 0
    assert len(err.splitlines()) == 1 and str(path) in err and "damaged" in err
    assert path.read_bytes() == before and files(data) == listing


def test_the_line_says_how_to_start_a_new_database_beside_it(data):
    path = history_path()
    before = damaged_database(path)
    with pytest.raises(StoreError) as info:
        HistoryStore(path)
    message = str(info.value)
    command = message[message.index("mv ") :]
    for step in command.split(" && "):
        words = shlex.split(step)
        assert words[0] == "mv"
        Path(words[1]).rename(words[2])
    code, out, err = run("sessions")
    assert code == 0 and "no sessions yet" in out, err
    kept = [p for p in data.iterdir() if p.name.startswith("history.db.damaged")]
    assert [p.read_bytes() for p in kept if p.name == "history.db.damaged"] == [before]


def test_a_healthy_database_still_opens(data):
    with HistoryStore(history_path()) as store:
        store.create_session("fine")
    code, out, _ = run("sessions")
    assert code == 0 and "fine" in out


def test_the_check_is_skipped_only_for_a_file_as_a_clean_close_left_it(data):
    """``quick_check`` reads the whole file at every start (about 100 ms for 237 MiB). A file exactly as
    tractui's last clean close left it is not read again; any other state is checked."""
    path = history_path()
    with HistoryStore(path) as store:
        store.create_session("fine")
    assert not needs_check(path)  # closed cleanly, unchanged since
    with HistoryStore(path) as store:
        assert needs_check(path)  # open for writing: a crash now must leave a file that is checked
        sid = store.create_session("more")
        other = HistoryStore(path)  # a second process still has it open when the first closes
        other.append(sid, "user", Content.human("still writing"))
    assert needs_check(path)  # its writes wait in the WAL
    other.close()
    assert not needs_check(path)
    raw = path.read_bytes()
    path.write_bytes(raw)  # the same bytes, written again by something else
    assert needs_check(path)


def test_damage_after_a_clean_close_is_found(data):
    """The file a clean close left, then damaged by something else (``damaged_database`` closes
    cleanly first): checked, found, left untouched."""
    path = history_path()
    before = damaged_database(path)
    assert needs_check(path)
    with pytest.raises(StoreError, match="damaged"):
        HistoryStore(path)
    assert path.read_bytes() == before
