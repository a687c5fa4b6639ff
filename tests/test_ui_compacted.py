"""Compacted history in the app: originals stay on scroll-back, dimmed; the summary is a marker that opens.

How a compaction ends on screen is tested against a ``ModelServer`` over loopback HTTP (it counts
prompts with the real tokenizer and refuses what passes its limit), the history a real SQLite file.
"""

from __future__ import annotations

import asyncio

from loopback import LoopbackServer, Reply, Request
from model_server import ModelServer, first_tokens, words
from ui_support import build_app, loop_config, screen_text, settle, type_line, wait_for

from tractui.conversation.compaction import prompt
from tractui.core.content import Content, TextBlock
from tractui.store.compile import summary_metadata
from tractui.store.history import HistoryStore
from tractui.ui.widgets.message import AssistantMessage, UserMessage
from tractui.ui.widgets.queued import QueuedView
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
        Content(speaker="system", blocks=[TextBlock(text="## GOAL: learn lists\n\n- **DECISIONS:** use slicing.")]),
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
        assert marker.replaced == 2  # two turns: the unit compaction's notices use
        chat = list(app.query_one("#chat").children)
        # right after the turns it stands in for, above the one kept verbatim: where the model reads it
        assert chat.index(marker) == chat.index(replies[1]) + 1 == chat.index(users[2]) - 1
        assert "Summary of 2 earlier turns" in screen_text(app)
        assert "GOAL: learn lists" not in screen_text(app)
        await pilot.click(".summary-header")
        await pilot.pause()
        assert marker.open and "GOAL: learn lists" in screen_text(app)
        assert app.query_one("#input").has_focus  # opening it took no keys from the prompt
        assert "##" not in screen_text(app) and "**" not in screen_text(app)  # drawn as Markdown
        assert "question 0" in str(users[0].render())  # originals kept, verbatim


async def test_a_compacted_reply_is_drawn_dimmed_like_its_question(tmp_path):
    """The dimming reached the questions only: a reply's text is drawn by widgets of its own
    (a frozen answer draws its own lines), which an ancestor's text opacity does not reach."""
    from tractui.ui.internals import screen_strips

    app = build_app(tmp_path)
    sid = _compacted_session(app.conversation.store)
    app.conversation.open_session(sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def colour(words: str) -> str:
            strip = next(s for s in screen_strips(app.screen) if words in "".join(seg.text for seg in s))
            (drawn,) = {seg.style.color for seg in strip if seg.text.strip() and seg.style and seg.style.color}
            return str(drawn)

        assert colour("answer 0") != colour("answer 3")
        assert colour("answer 0") == colour("answer 1") != colour("answer 2")


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


async def test_a_compaction_before_a_reply_is_told_above_it_and_drawn_as_a_resume_draws_it(tmp_path):
    from ui_support import type_line

    from tractui.ui.widgets.message import StatusLine

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(4):
            await type_line(pilot, f"question {i}: tell me about lists")
            await settle(pilot)
        app.settings.set("context-limit", "4000")
        app.settings.set("max-tokens", "256")
        app.settings.set("compression-threshold", "0.1")  # past it: the next message compacts first
        await type_line(pilot, "one more question")
        await settle(pilot)
        marker = app.query_one(SummaryMarker)  # drawn at once, not only after a resume
        chat = list(app.query_one("#chat").children)
        reply = list(app.query(AssistantMessage))[-1]
        dimmed = [i for i, w in enumerate(chat) if w.has_class("-compacted")]
        kept = [i for i, w in enumerate(chat) if isinstance(w, UserMessage) and not w.has_class("-compacted")]
        assert dimmed and chat.index(marker) == dimmed[-1] + 1 < kept[0] < chat.index(reply)
        lines = [c for c in reply.children if isinstance(c, StatusLine)]
        assert lines and all(line.kind == "notice" for line in lines)  # the progress lines are gone
        assert reply.children.index(lines[-1]) < reply.children.index(reply.query_one(".parts"))  # above the reply
        assert "compacting first" in lines[0].text and "compacted" in lines[-1].text
        marker.scroll_visible(animate=False, immediate=True)
        await pilot.pause()
        assert f"Summary of {marker.replaced} earlier turn" in screen_text(app)


def _notes(app) -> list[str]:
    return [str(note.render()) for note in app.query(".note")]


async def _talk(pilot, turns: int, question_words: int) -> None:
    await type_line(pilot, "/set context-limit 8k")
    await settle(pilot)
    for i in range(turns):
        await type_line(pilot, f"question {i}: {words(question_words, i)}")
        await settle(pilot)


async def test_a_request_still_over_the_limit_after_compacting_shows_its_notes_and_error_under_it(
    tmp_path, loopback: LoopbackServer
):
    from tractui.ui.widgets.message import StatusLine

    server = loopback.default = ModelServer(limit=8192)
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _talk(pilot, 6, 300)
        # a paste that fits the window alone (so compacting is worth a try) but not beside the summary
        reading = app.conversation.gauge()
        room = reading.limit - reading.reserve - reading.breakdown.system - reading.breakdown.tools - 40
        await type_line(pilot, first_tokens("\n".join(words(40, 100 + i) for i in range(300)), room))
        await settle(pilot)
        assert [c.kind for c in app.conversation.history()[-2:]] == ["user", "summary"]  # compacted, not sent
        assert len(server.chat) == 6 and not server.refusals
        chat = list(app.query_one("#chat").children)
        reply = chat[-1]
        assert isinstance(reply, AssistantMessage) and isinstance(chat[-2], UserMessage)  # under the pasted message
        marker = app.query_one(SummaryMarker)  # after the six turns it stands in for, all dimmed
        assert all(w.has_class("-compacted") for w in chat[: chat.index(marker)] if isinstance(w, UserMessage))
        lines = [(line.kind, line.text) for line in reply.query(StatusLine)]  # in the order drawn
        assert [kind for kind, _ in lines] == ["notice", "notice", "error"]
        assert "compacting first" in lines[0][1] and "compacted 6 turns" in lines[1][1]
        assert lines[2][1].startswith("✗ context length: not sent: this request needs")
        assert "not sent: this request needs" in screen_text(app)
        for _ in range(3):  # the earlier replies, drawn as the user scrolls up to them
            await pilot.press("ctrl+home")
            await settle(pilot)
        replies = list(app.query(AssistantMessage))
        assert len(replies) == 7 and replies[-1] is reply
        assert not any(r.query(StatusLine) for r in replies[:-1])  # the previous reply carries none of it


async def test_a_reply_that_failed_after_compacting_keeps_its_live_error_line(tmp_path, loopback: LoopbackServer):
    from tractui.ui.widgets.message import StatusLine

    server = loopback.default = ModelServer(limit=8192, fail={5})
    app = build_app(tmp_path, config=loop_config(loopback))
    app.settings.set("retries", "0")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _talk(pilot, 4, 300)
        app.settings.set("compression-threshold", "0.1")  # past it: the next message compacts first
        await type_line(pilot, "one more question")
        await settle(pilot)
        assert server.summaries and app.conversation.history()[-1].status == "error"
        reply = list(app.query(AssistantMessage))[-1]
        lines = [(line.kind, line.text) for line in reply.query(StatusLine)]
        assert [kind for kind, _ in lines] == ["notice", "notice", "error"]
        assert lines[2][1].endswith("/retry to try again")  # as it was live: the hint a resume leaves out
        assert not list(app.query(AssistantMessage))[-2].query(StatusLine)


async def test_esc_during_compact_cancels_it_in_one_line_and_writes_nothing(tmp_path, loopback: LoopbackServer):
    server = ModelServer(limit=8192, reply_words=400)
    slow = [True]

    def summaries_stall(request: Request) -> Reply:
        reply = server(request)
        if slow[0] and request.json["messages"][0].get("content") == prompt.SYSTEM_PROMPT:
            reply.stall_after, reply.stall = 0, 30.0  # the summary call still under way when Esc comes
        return reply

    loopback.default = summaries_stall
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _talk(pilot, 4, 30)
        await type_line(pilot, "/compact")
        await wait_for(pilot, lambda: bool(server.summaries))
        await type_line(
            pilot, "/new"
        )  # refused while it runs: said as what runs (it said "a reply is still streaming")
        running = "a compaction is running — Esc cancels it; your command stays in the prompt"
        await wait_for(pilot, lambda: running in _notes(app))
        app.query_one("#input").clear()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.streaming, timeout=10)
        await settle(pilot)
        assert running not in _notes(app)  # gone with the compaction, as with a reply
        said = [n for n in _notes(app) if "ompact" in n]
        assert said == ["Compaction cancelled; the history is unchanged."]  # the progress line, resolved
        assert "Compacting…" not in screen_text(app)
        stored = HistoryStore(tmp_path / "history.db").chain(app.conversation.session_id or "")
        assert [c.kind for c in stored].count("summary") == 0
        slow[0] = False
        await type_line(pilot, "/compact")
        await settle(pilot)
        assert [c.kind for c in app.conversation.history()].count("summary") == 1
        said = [n for n in _notes(app) if "ompact" in n]
        assert len(said) == 1 and said[0].startswith("compacted ")  # the result, under the redrawn view
        assert "Compacting…" not in screen_text(app) and said[0] in screen_text(app).replace("\n", " ")


async def test_a_message_typed_during_compact_waits_for_it_and_goes_back_on_esc(tmp_path, loopback: LoopbackServer):
    """Queued while /compact runs, as while a reply streams: given back when Esc cancels the
    compaction, sent once a compaction has written its summary."""
    server = ModelServer(limit=8192, reply_words=400)
    gate = asyncio.Event()

    def summaries_wait(request: Request) -> Reply:
        reply = server(request)
        if request.json["messages"][0].get("content") == prompt.SYSTEM_PROMPT:
            reply.stall_after, reply.stall, reply.until = 0, 120.0, gate  # under way until the test says
        return reply

    loopback.default = summaries_wait
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _talk(pilot, 4, 30)
        await type_line(pilot, "/compact")
        await wait_for(pilot, lambda: len(server.summaries) == 1)
        await type_line(pilot, "held")
        await pilot.pause()
        assert "sent when the compaction ends" in str(app.query_one(QueuedView).render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.busy)
        box = app.query_one("#input")
        assert box.text == "held"
        assert _notes(app)[-1] == "The compaction was cancelled: your queued message is back in the prompt, not sent."
        box.clear()
        await type_line(pilot, "/compact")
        await wait_for(pilot, lambda: len(server.summaries) == 2)
        await type_line(pilot, "after the summary")
        await pilot.pause()
        gate.set()
        await wait_for(pilot, lambda: "after the summary" in [str(u.render()) for u in app.query(UserMessage)])
        await settle(pilot)
        kinds = [c.kind for c in app.conversation.history()]
        assert kinds[-3:] == ["summary", "user", "assistant"] and app.conversation.history()[-2].content.text == (
            "after the summary"
        )


async def _cleared_after_four_turns(pilot) -> None:
    """Four exchanges, then /clear, then one more: the screen holds the note and the last exchange."""
    for i in range(4):
        await type_line(pilot, f"question {i}: tell me about lists")
        await settle(pilot)
    await type_line(pilot, "/clear")
    await settle(pilot)
    await type_line(pilot, "after the clear")
    await settle(pilot)


async def _scrolled_to_the_top(pilot) -> list[str]:
    """The questions the view holds once the user has scrolled all the way up and every older
    message is drawn (the line counting them gone)."""
    for _ in range(20):  # each time at the top draws a batch more
        await pilot.press("ctrl+home")
        await settle(pilot)
        if not pilot.app.query_one("#earlier").display:
            return [str(user.render()) for user in pilot.app.query(UserMessage)]
    raise AssertionError("older messages are still not drawn")


async def test_an_automatic_compaction_after_clear_does_not_bring_back_what_clear_cleared(tmp_path):
    """/clear clears the screen; the history, and what is sent, stay (docs/ui.md): the redraw after
    a compaction draws the session as a resume would, less what /clear took off the screen."""
    from tractui.ui.screens.chat import SCREEN_CLEARED

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _cleared_after_four_turns(pilot)
        assert any("question 0" in m.text for m in app.conversation.messages())  # still sent: the history stays
        app.settings.set("context-limit", "4000")
        app.settings.set("max-tokens", "256")
        app.settings.set("compression-threshold", "0.1")  # past it: the next message compacts first
        await type_line(pilot, "one more question")
        await settle(pilot)
        marker = app.query_one(SummaryMarker)  # compacted, and the view redrawn
        assert await _scrolled_to_the_top(pilot) == ["after the clear", "one more question"]
        assert "question 0" not in screen_text(app)
        assert _notes(app)[0] == SCREEN_CLEARED  # the view begins as it did
        reply = list(app.query(AssistantMessage))[-1]
        assert "compacted" in reply.told()[-1].text  # the compaction's lines kept under the new view
        sent = app.conversation.messages()  # what /clear left in the context is summarised, as any turn is
        assert sent[0].text.startswith(prompt.SUMMARY_HEADER) and marker.replaced >= 4
        assert not any(m.speaker == "human" and m.text.startswith("question 0") for m in sent)


async def test_compact_and_a_redraw_after_clear_leave_the_cleared_turns_off_and_a_new_session_shows_all(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _cleared_after_four_turns(pilot)
        app.settings.set("compaction.keepTurns", "1")
        await type_line(pilot, "/compact")
        await settle(pilot)
        assert app.query(SummaryMarker), _notes(app)
        assert await _scrolled_to_the_top(pilot) == ["after the clear"]
        await type_line(pilot, "/set ui.markdown public")  # every answer drawn again
        await settle(pilot)
        assert await _scrolled_to_the_top(pilot) == ["after the clear"]
        session = app.conversation.session_id
        await type_line(pilot, "/new")
        await settle(pilot)
        assert session is not None
        await app.chat.host._open_session(session)  # /sessions, this one picked: the whole session
        await settle(pilot)
        assert (await _scrolled_to_the_top(pilot))[0] == "question 0: tell me about lists"
