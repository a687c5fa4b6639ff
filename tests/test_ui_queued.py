"""Messages typed while a reply streams: queued, shown so, sent as one message when the reply ends
well, given back to the prompt when it is cancelled or fails, taken back with Up, kept on quit."""

from __future__ import annotations

import asyncio

from loopback import LoopbackServer, Reply, sse
from test_ui_stream import SIZE, mid_reply, stalled_app
from ui_support import build_app, chat_stream, loop_config, settle, type_line, wait_for

from tractui.ui.app import TractApp
from tractui.ui.draft import draft_path
from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.message import UserMessage
from tractui.ui.widgets.queued import QueuedView

FIRST = chat_stream(["pondering"], ["Half"], usage=None, finish=False)


def held(gate: asyncio.Event, *, rest: bytes = b"", cut: bool = False) -> Reply:
    """A reply that stalls after "Half" until the test sets ``gate``, then ends with ``rest``
    (or is cut off: an error)."""
    return sse(FIRST + rest, stall_after=len(FIRST), stall=120, until=gate, cut_after=len(FIRST) if cut else None)


def gated_app(tmp_path, loopback: LoopbackServer, gate: asyncio.Event, *, cut: bool = False) -> TractApp:
    """The app on a server whose reply to "first" goes on to " and done." when ``gate`` is set,
    and whose next reply is "second answer"."""
    loopback.add(held(gate, rest=chat_stream([], [" and done."]), cut=cut))
    loopback.add(sse(chat_stream([], ["second answer"])))
    return build_app(tmp_path, config=loop_config(loopback))


def users(app: TractApp) -> list[str]:
    return [u.text for u in app.query(UserMessage)]


def queued(app: TractApp) -> str:
    view = app.query_one(QueuedView)
    return str(view.render()) if view.display else ""


def notes(app: TractApp) -> list[str]:
    return [str(n.render()) for n in app.query(".note")]


def sent_last(loopback: LoopbackServer) -> str:
    """The last user message of the last request the server got."""
    return [m for m in loopback.requests[-1].json["messages"] if m["role"] == "user"][-1]["content"]


async def test_a_message_typed_while_a_reply_streams_is_queued_and_sent_when_it_ends(tmp_path, loopback):
    """Enter on a message mid-reply was refused (the text stayed in the prompt, the Enter a line
    break) and had to be sent again by hand once the reply ended."""
    gate = asyncio.Event()
    app = gated_app(tmp_path, loopback, gate)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        box = app.query_one("#input")
        await type_line(pilot, "and then \x1b[31mthis")
        await pilot.pause()
        assert box.text == "" and app.chat.holding
        shown = queued(app)
        assert shown.startswith("⏸ queued · sent when the reply ends · ↑ takes it back to edit")
        assert "this" in shown and "\x1b" not in shown  # drawn inert, as every message of the user's
        assert users(app) == ["first"] and len(loopback.requests) == 1
        gate.set()
        await wait_for(pilot, lambda: any(a.text == "second answer" for a in app.query(AnswerView)))
        await settle(pilot)
        assert users(app)[0] == "first" and users(app)[1].endswith("this") and len(users(app)) == 2
        assert [a.text for a in app.query(AnswerView)] == ["Half and done.", "second answer"]
        assert not app.chat.holding and not app.query_one(QueuedView).display
        user_commits = [c.content.text for c in app.conversation.history() if c.kind == "user"]
        assert user_commits == ["first", "and then \x1b[31mthis"]  # what was typed is what is sent and kept
        assert sent_last(loopback) == "and then \x1b[31mthis" and len(loopback.requests) == 2
        assert box.sent[-1] == "and then \x1b[31mthis"  # in the input history, as any line sent


async def test_messages_queued_during_one_reply_go_as_one_message_in_the_order_typed(tmp_path, loopback):
    gate = asyncio.Event()
    app = gated_app(tmp_path, loopback, gate)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "one")
        await type_line(pilot, "//two starts with a slash")
        await pilot.pause()
        assert queued(app).startswith("⏸ 2 queued · sent as one message when the reply ends · ↑ takes them back")
        gate.set()
        await wait_for(pilot, lambda: any(a.text == "second answer" for a in app.query(AnswerView)))
        await settle(pilot)
        assert users(app) == ["first", "one\n\n/two starts with a slash"]
        assert sent_last(loopback) == "one\n\n/two starts with a slash" and len(loopback.requests) == 2


async def test_esc_gives_a_queued_message_back_to_the_prompt_unsent(tmp_path, loopback):
    app = stalled_app(tmp_path, loopback)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "later")
        await type_line(pilot, "typed since", enter=False)
        await pilot.press("escape")
        await settle(pilot)
        box = app.query_one("#input")
        assert box.text == "later\n\ntyped since"  # in front of what was typed since
        assert notes(app)[-1] == "The reply was cancelled: your queued message is back in the prompt, not sent."
        assert users(app) == ["first"] and len(loopback.requests) == 1
        assert not app.chat.holding and not app.query_one(QueuedView).display


async def test_many_queued_lines_are_shown_to_a_few_and_counted(tmp_path, loopback):
    """The prompt stays in view: each message to its first lines, all of them to a few more."""
    app = stalled_app(tmp_path, loopback)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "one\ntwo\nthree\nfour\nfive")
        for n in range(4):
            await type_line(pilot, f"question {n}\nsecond line")
        await pilot.pause()
        lines = queued(app).split("\n")
        assert lines[1:4] == ["› one", "  two", "  … 3 more lines"]
        assert len(lines) == 8 and lines[-1] == "  … 5 more lines"
        assert app.query_one(QueuedView).size.height == 8
        await pilot.press("escape")
        await settle(pilot)
        assert app.query_one("#input").text.count("second line") == 4  # shown in part, kept whole


async def test_a_reply_that_fails_gives_the_queued_message_back(tmp_path, loopback):
    gate = asyncio.Event()
    app = gated_app(tmp_path, loopback, gate, cut=True)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "later")
        await pilot.pause()
        gate.set()  # the connection is cut: the reply ends in an error
        await wait_for(pilot, lambda: not app.chat.streaming and not app.chat.holding)
        await settle(pilot)
        assert app.query_one("#input").text == "later"
        assert notes(app)[-1] == "The reply failed: your queued message is back in the prompt, not sent."
        assert users(app) == ["first"] and len(loopback.requests) == 1


async def test_up_on_an_empty_prompt_takes_the_queued_messages_back_to_edit(tmp_path, loopback):
    gate = asyncio.Event()
    app = gated_app(tmp_path, loopback, gate)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "one")
        await type_line(pilot, "two")
        await pilot.press("up")
        box = app.query_one("#input")
        assert box.text == "one\n\ntwo" and not app.chat.holding and not app.query_one(QueuedView).display
        await pilot.press(*" too", "enter")  # queued again, edited
        await pilot.pause()
        assert app.chat.holding and "› one" in queued(app)
        gate.set()
        await wait_for(pilot, lambda: any(a.text == "second answer" for a in app.query(AnswerView)))
        assert users(app) == ["first", "one\n\ntwo too"]
        await pilot.press("up")  # nothing queued: Up walks the input history as before
        assert box.text == "one\n\ntwo too"


async def test_a_command_typed_while_a_message_is_queued_still_runs(tmp_path, loopback):
    app = stalled_app(tmp_path, loopback)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "later")
        await type_line(pilot, "/set temperature 0.5")
        await pilot.pause()
        assert app.settings.get("temperature") == 0.5 and app.chat.holding
        await type_line(pilot, "/clear")  # cannot run while the reply streams: it stays in the prompt
        await pilot.pause()
        box = app.query_one("#input")
        assert box.text == "/clear\n" and "still streaming" in notes(app)[-1] and app.chat.holding
        await pilot.press("escape")
        await settle(pilot)
        assert box.text == "later\n\n/clear\n" and users(app) == ["first"]


async def test_a_queued_message_not_sent_on_quit_is_kept_as_the_draft(tmp_path, loopback):
    app = stalled_app(tmp_path, loopback)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "later")
        await wait_for(pilot, lambda: draft_path().exists())  # kept against a kill as soon as it is queued
        assert draft_path().read_text() == "later"
        await type_line(pilot, "and this", enter=False)
        await pilot.press("ctrl+c")
        assert "queued message is not sent" in str(app.screen.query_one("Toast").render())
        await pilot.press("ctrl+c")
    assert draft_path().read_text() == "later\n\nand this"
    again = build_app(tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.query_one("#input").text == "later\n\nand this"


def tool_call(name: str, arguments: str) -> bytes:
    """The rest of a Chat Completions reply that calls ``name``."""
    from loopback import encode_sse

    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loop-model"}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return encode_sse(
        [
            {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ]
    )


async def test_a_message_queued_during_a_tool_loop_waits_for_the_loops_last_reply(tmp_path, loopback):
    """The reply that calls a tool is not the turn's end: the call's result goes back first, and
    the queued message only after the reply that answers with it."""
    from tractui.config.mcp import McpConfig
    from tractui.tools.consent import ConsentPolicy
    from tractui.tools.setup import demo_server
    from tractui.tools.toolbox import Toolbox

    gate = asyncio.Event()
    loopback.add(held(gate, rest=tool_call("demo__add", '{"a": 2, "b": 3}')))
    loopback.add(sse(chat_stream([], ["It is 5."])))
    loopback.add(sse(chat_stream([], ["second answer"])))
    app = build_app(tmp_path, config=loop_config(loopback))
    consent = ConsentPolicy(allow_all=True)
    app.conversation.tools = Toolbox(
        McpConfig(servers={"demo": demo_server()}), log_dir=tmp_path / "mcp", consent=consent
    )
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await type_line(pilot, "later")
        await pilot.pause()
        gate.set()
        await wait_for(pilot, lambda: any(a.text == "second answer" for a in app.query(AnswerView)), timeout=60)
        await settle(pilot)
        assert [m["role"] for m in loopback.requests[1].json["messages"]][-2:] == ["assistant", "tool"]
        assert sent_last(loopback) == "later" and len(loopback.requests) == 3
        assert users(app) == ["first", "later"]


def test_queued_messages_given_back_send_what_they_would_have_sent():
    """A ``//`` starts a message that begins with a slash: given back, the first keeps it (the
    text then sends as it would have), a later one's is already read."""
    from tractui.ui.outbox import Outbox, as_message

    box = Outbox()
    box.hold("//etc is a folder")
    box.hold("//and so is /usr")
    assert box.messages == ["/etc is a folder", "/and so is /usr"]
    assert box.in_front_of("typed since") == "//etc is a folder\n\n/and so is /usr\n\ntyped since"
    assert as_message(box.take()) == "/etc is a folder\n\n/and so is /usr"
    assert not box and box.in_front_of("typed") == "typed"
