"""The disk fills up mid-stream: the reply goes on in memory, is said once, and is written when there is room.

A full disk is SQLite's own SQLITE_FULL, made by capping the database's page
count on the store's connection (``PRAGMA max_page_count``): every write that
needs a new page fails exactly as it does when the file system is full.
"""

from __future__ import annotations

import pytest
from loopback import encode_sse, openai_chat_reply, sse

from tractui.conversation.conversation import Conversation
from tractui.core.content import Content
from tractui.core.events import Notice, StreamError, TextDelta
from tractui.core.settings import Settings
from tractui.errors import StoreError
from tractui.providers.transport import ProviderConfig
from tractui.store.history import HistoryStore

PIECES = [f"piece {i}: " + "word " * 200 + "\n" for i in range(40)]


def fill(store: HistoryStore) -> None:
    """No room for one more page."""
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")


def make_room(store: HistoryStore) -> None:
    store._conn.execute("PRAGMA max_page_count = 1073741823")


def chunk(delta, finish=None):
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@pytest.fixture
def store(tmp_path):
    s = HistoryStore(tmp_path / "history.db")
    yield s
    s.close()


@pytest.fixture
def config(loopback, monkeypatch):
    monkeypatch.setenv("TRACTUI_TEST_KEY", "sk-disk-full-0123456789")
    return ProviderConfig(
        provider="openai", model="loop-model", base_url=f"{loopback.url}/v1", api_key_env="TRACTUI_TEST_KEY"
    )


def test_a_full_disk_is_one_clear_error_and_the_store_goes_on(store):
    sid = store.create_session()
    fill(store)
    with pytest.raises(StoreError) as info:
        store.append(sid, "user", Content.human("x " * 5000))
    assert "full" in str(info.value) and "rollback" not in str(info.value)
    make_room(store)
    store.append(sid, "user", Content.human("x " * 5000))
    assert len(store.chain(sid)) == 1


async def test_disk_full_mid_stream_keeps_the_reply_and_writes_it_later(store, config, loopback):
    loopback.add(sse(encode_sse([chunk({"content": p}) for p in PIECES] + [chunk({}, "stop")])))
    conv = Conversation(store, Settings(), config)
    texts: list[str] = []
    notices: list[str] = []
    async for event in conv.send("write a lot"):
        match event:
            case TextDelta():
                texts.append(event.text)
                if len(texts) == 3:
                    fill(store)
            case Notice():
                notices.append(event.message)
            case StreamError():
                pytest.fail(f"the stream failed: {event.message}")
    assert "".join(texts) == "".join(PIECES)
    assert len([n for n in notices if "cannot be written" in n]) == 1, notices
    assert conv.assembler is not None and conv.assembler.text == "".join(PIECES)

    make_room(store)
    loopback.add(openai_chat_reply("second answer"))
    events = [event async for event in conv.send("and now?")]
    assert not [e for e in events if isinstance(e, StreamError)]
    assert any(isinstance(e, Notice) and "written" in e.message for e in events)
    chain = store.chain(conv.session_id)
    assert [c.kind for c in chain] == ["user", "assistant", "user", "assistant"]
    assert chain[1].content.text == "".join(PIECES) and chain[1].status == "complete"
    assert chain[3].content.text == "second answer"


async def test_a_history_another_program_holds_says_so_not_to_free_space(tmp_path, config, loopback, monkeypatch):
    """Another program holds the file locked past the busy timeout: the message is not sent, and
    the line's next step is to send it again once the file is let go (it said "free some space")."""
    import sqlite3

    import tractui.store.db as db

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)
    store = HistoryStore(tmp_path / "history.db")
    conv = Conversation(store, Settings(), config)
    loopback.add(openai_chat_reply("first"))
    [_ async for _ in conv.send("hello")]
    holder = sqlite3.connect(tmp_path / "history.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        events = [event async for event in conv.send("held")]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    errors = [e.message for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and "not sent" in errors[0] and "locked" in errors[0]
    assert errors[0].endswith("send it again once the other program lets go of the file")
    assert len(loopback.requests) == 1
    store.close()


async def test_a_message_that_cannot_be_written_is_not_sent(store, config, loopback):
    conv = Conversation(store, Settings(), config)
    loopback.add(openai_chat_reply("first"))
    [_ async for _ in conv.send("hello")]
    fill(store)
    events = [event async for event in conv.send("x " * 5000)]
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and "cannot be written" in errors[0].message and "not sent" in errors[0].message
    assert len(loopback.requests) == 1
    make_room(store)
    assert [c.kind for c in store.chain(conv.session_id)] == ["user", "assistant"]
