"""Compacted history in the app: originals stay on scroll-back, dimmed; the summary is a marker that opens."""

from __future__ import annotations

from ui_support import build_app, screen_text, settle

from tractui.core.content import Content, TextBlock
from tractui.store.compile import summary_metadata
from tractui.ui.widgets.message import AssistantMessage, UserMessage
from tractui.ui.widgets.summary import SummaryMarker

SIZE = (100, 40)


def _answer(text: str) -> Content:
    return Content(speaker="ai", blocks=[TextBlock(text=text)])


def _compacted_session(store) -> str:
    """Three exchanges, the first two replaced by a summary, then one more exchange."""
    sid = store.create_session("compacted")
    ids = []
    for i in range(3):
        ids.append(store.append(sid, "user", Content.human(f"question {i}")).id)
        ids.append(store.append(sid, "assistant", _answer(f"answer {i}")).id)
    store.append(
        sid,
        "summary",
        Content(speaker="system", blocks=[TextBlock(text="GOAL: learn lists. DECISIONS: use slicing.")]),
        metadata=summary_metadata(ids[0], ids[3]),
    )
    store.append(sid, "user", Content.human("question 3"))
    store.append(sid, "assistant", _answer("answer 3"))
    return sid


async def test_compacted_originals_are_dimmed_and_the_summary_opens(tmp_path):
    app = build_app(tmp_path)
    sid = _compacted_session(app.conversation.store)
    app.conversation.open_session(sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        users = list(app.query(UserMessage))
        replies = list(app.query(AssistantMessage))
        assert [u.has_class("-compacted") for u in users] == [True, True, False, False]
        assert [r.has_class("-compacted") for r in replies] == [True, True, False, False]
        marker = app.query_one(SummaryMarker)
        assert marker.replaced == 4
        chat = list(app.query_one("#chat").children)
        assert chat.index(marker) == chat.index(users[3]) - 1  # where the summary commit sits in the branch
        assert "Summary of 4 earlier messages" in screen_text(app)
        assert "GOAL: learn lists" not in screen_text(app)
        marker.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert marker.open and "GOAL: learn lists" in screen_text(app)
        assert "question 0" in str(users[0].render())  # originals kept, verbatim


async def test_no_compaction_nothing_dimmed(tmp_path):
    app = build_app(tmp_path)
    store = app.conversation.store
    sid = store.create_session("plain")
    store.append(sid, "user", Content.human("hello"))
    store.append(sid, "assistant", _answer("hi"))
    app.conversation.open_session(sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.query(".-compacted") and not app.query(SummaryMarker)
