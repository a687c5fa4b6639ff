"""A session open in one window is not deleted by another: real SQLite files, real processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from loopback import openai_chat_reply

from tractui.conversation.conversation import Conversation
from tractui.core.content import Content
from tractui.core.events import StreamError
from tractui.core.settings import Settings
from tractui.errors import StoreError
from tractui.providers.transport import ProviderConfig
from tractui.store.history import HistoryStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no fcntl: nothing is guarded there")


@pytest.fixture
def config(loopback, monkeypatch):
    monkeypatch.setenv("TRACTUI_TEST_KEY", "sk-holds-0123456789")
    return ProviderConfig(provider="openai", model="m", base_url=f"{loopback.url}/v1", api_key_env="TRACTUI_TEST_KEY")


def _session(store: HistoryStore, text: str = "hello") -> str:
    sid = store.create_session()
    store.append(sid, "user", Content.human(text))
    return sid


def test_a_session_another_window_holds_is_not_deleted_until_it_lets_go(tmp_path):
    mine, theirs = HistoryStore(tmp_path / "h.db"), HistoryStore(tmp_path / "h.db")
    sid = _session(mine)
    theirs.hold(sid)
    with pytest.raises(StoreError, match="open in another tractui window; close it or /new there first"):
        mine.delete_session(sid)
    assert mine.session(sid) is not None and mine.chain(sid)
    theirs.hold(None)  # /new there
    assert not list(mine.path.with_name("h.db-open").iterdir())  # the last holder's file goes with it
    mine.delete_session(sid)
    assert mine.session(sid) is None
    theirs.close()
    mine.close()


def test_holding_another_session_or_closing_lets_go(tmp_path):
    mine, theirs = HistoryStore(tmp_path / "h.db"), HistoryStore(tmp_path / "h.db")
    first, second = _session(mine, "one"), _session(mine, "two")
    theirs.hold(first)
    theirs.hold(second)  # /sessions opened another one
    mine.delete_session(first)
    with pytest.raises(StoreError, match="open in another tractui window"):
        mine.delete_session(second)
    theirs.close()
    mine.delete_session(second)
    assert mine.list_sessions() == []
    mine.close()


def test_two_windows_on_one_session_both_hold_it(tmp_path):
    mine, a, b = (HistoryStore(tmp_path / "h.db") for _ in range(3))
    sid = _session(mine)
    a.hold(sid)
    b.hold(sid)
    a.close()  # one of the two closes: the other still holds it
    with pytest.raises(StoreError, match="open in another tractui window"):
        mine.delete_session(sid)
    b.close()
    mine.delete_session(sid)
    mine.close()


def test_a_window_deletes_the_session_it_holds_itself(tmp_path):
    """Only another window's hold refuses: the store's own is let go of first."""
    store = HistoryStore(tmp_path / "h.db")
    sid = _session(store)
    store.hold(sid)
    store.delete_session(sid)
    assert store.session(sid) is None
    store.close()


def test_a_refused_delete_of_the_session_a_window_holds_keeps_its_hold(tmp_path):
    """Its own hold was let go of for the delete and not taken again when another window's refused
    it: a third window could then delete the session still open in it (2026-11-28)."""
    mine, theirs, third = (HistoryStore(tmp_path / "h.db") for _ in range(3))
    sid = _session(mine)
    mine.hold(sid)
    theirs.hold(sid)
    with pytest.raises(StoreError, match="open in another tractui window"):
        mine.delete_session(sid)
    theirs.close()
    with pytest.raises(StoreError, match="open in another tractui window"):
        third.delete_session(sid)
    assert mine.session(sid) is not None
    for store in (mine, third):
        store.close()


HOLDER = textwrap.dedent(
    """
    import sys, time
    from tractui.store.history import HistoryStore

    store = HistoryStore(sys.argv[1])
    store.hold(sys.argv[2])
    print("held", flush=True)
    time.sleep(600)
    """
)


def test_a_killed_window_holds_nothing(tmp_path):
    """The operating system lets go of a dead process's locks: a crash leaves no session undeletable."""
    store = HistoryStore(tmp_path / "h.db")
    sid = _session(store)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.path), sid], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match="open in another tractui window"):
            store.delete_session(sid)
    finally:
        holder.kill()
        holder.wait()
    store.delete_session(sid)
    assert store.session(sid) is None
    store.close()


async def test_a_conversation_holds_its_session_and_lets_go_on_new(tmp_path, config, loopback):
    store, other = HistoryStore(tmp_path / "h.db"), HistoryStore(tmp_path / "h.db")
    conv = Conversation(store, Settings(), config)
    loopback.add(openai_chat_reply("first"))
    [_ async for _ in conv.send("hello")]
    sid = conv.session_id
    assert sid is not None
    with pytest.raises(StoreError, match="open in another tractui window"):
        other.delete_session(sid)
    conv.new_session()
    other.delete_session(sid)
    store.close()
    other.close()


async def test_a_session_deleted_under_a_window_says_how_to_go_on(tmp_path, config, loopback):
    """Deleted where the hold was not seen (raw SQL here; an older tractui): the line says /new, and
    that the message comes back with Up, not to free disk space, and nothing is sent."""
    import sqlite3

    store = HistoryStore(tmp_path / "h.db")
    conv = Conversation(store, Settings(), config)
    loopback.add(openai_chat_reply("first"))
    [_ async for _ in conv.send("hello")]
    with sqlite3.connect(store.path) as raw:
        raw.execute("PRAGMA foreign_keys = ON")
        raw.execute("DELETE FROM sessions WHERE id = ?", (conv.session_id,))
    events = [event async for event in conv.send("second")]
    errors = [e.message for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and "deleted in another window" in errors[0]
    assert errors[0].endswith("your message was not sent; /new starts a new session, and ↑ brings the message back")
    assert len(loopback.requests) == 1
    store.close()


def test_a_window_opening_a_session_being_deleted_does_not_wait_for_ever(tmp_path):
    """The shared lock waited without end on the event loop while a deletion held the lock alone
    (until 2026-11-28); now the window gives up after a moment and holds nothing."""
    deleting, opening = HistoryStore(tmp_path / "h.db"), HistoryStore(tmp_path / "h.db")
    sid = _session(deleting)
    with deleting._locks.alone(sid) as alone:
        assert alone
        opening.hold(sid)
        assert opening._locks.held is None
    opening.hold(sid)  # the deletion over (here: not made): held as usual
    assert opening._locks.held == sid
    opening.close()
    deleting.close()
