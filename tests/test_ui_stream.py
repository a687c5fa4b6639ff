"""The conversation view: thinking inline, markdown answer, errors, cancel, inert output."""

from __future__ import annotations

import pytest
from loopback import encode_sse, error, sse
from ui_support import FakeClock, build_app, chat_stream, loop_config, screen_text, settle, stalled, type_line, wait_for

from tractui.core.events import ThinkingDelta
from tractui.core.tokens import count_tokens
from tractui.ui.app import TractApp
from tractui.ui.internals import capture_strips as capture
from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.footer import GaugeFooter
from tractui.ui.widgets.message import AssistantMessage, StatusLine, UserMessage
from tractui.ui.widgets.thinking import ThinkingView
from tractui.ui.widgets.tool_call import ToolCallView

SIZE = (100, 40)


async def test_demo_reply_shows_thinking_before_a_markdown_answer(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "reverse a list")
        await settle(pilot)
        reply = app.query_one(AssistantMessage)
        thinking, answer = reply.parts[0], reply.parts[-1]
        assert isinstance(thinking, ThinkingView) and isinstance(answer, AnswerView)
        assert "reverse a list" in thinking.text
        assert thinking.tokens == count_tokens(thinking.text)
        assert str(app.query_one(".thinking-header").render()).startswith("Thought for 0s")
        assert "reverse a list" in answer.text and "```" in answer.text
        code = answer.text.split("```")[1].splitlines()[1].strip()  # the code block's first line
        line = next(strip for strip in capture(answer) if code in strip.text)
        assert len({segment.style.color for segment in line if segment.text.strip()}) > 1  # highlighted
        stored = app.conversation.history()[-1].content.text
        assert answer.text == stored
        totals = str(app.query_one("#footer-totals").render())
        assert "thinking" in totals and "out" in totals


async def test_thinking_header_counts_time_and_tokens_while_streaming(tmp_path, loopback):
    reasoning = ["First, ", "consider the list.\n\n", "Then reverse it ", "with slicing."]
    loopback.add(stalled(chat_stream(reasoning, [], usage=None, finish=False)))
    clock = FakeClock()
    app = build_app(tmp_path, config=loop_config(loopback), clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "how?")
        await wait_for(pilot, lambda: any(v.text.endswith("slicing.") for v in app.query(ThinkingView)))
        view = app.query_one(ThinkingView)
        expected = count_tokens("".join(reasoning))
        assert view.tokens == expected
        clock.advance(12)
        await app.chat.frames.tick()
        assert str(app.query_one(".thinking-header").render()) == f"Thinking… 12s · {expected} tokens"
        assert "consider the list.\n\nThen" in str(view.query_one(".thinking-text").render())
        await pilot.press("escape")
        await settle(pilot)
        assert str(app.query_one(".thinking-header").render()).startswith("Thought for 12s")


async def test_escape_cancels_and_keeps_what_arrived(tmp_path, loopback):
    loopback.add(stalled(chat_stream(["pondering"], ["Half an ans", "wer"], usage=None, finish=False)))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "go")
        await wait_for(pilot, lambda: any(a.text == "Half an answer" for a in app.query(AnswerView)))
        await pilot.press("escape")
        await settle(pilot)
        assert not app.chat.streaming
        statuses = [s for s in app.query(StatusLine) if s.kind == "interrupted"]
        assert statuses and "interrupted" in str(statuses[0].render())
        assert "Half an answer" in screen_text(app)
        last = app.conversation.history()[-1]
        assert last.status == "interrupted" and last.content.text == "Half an answer"


def _error_text(app) -> str:
    return str(next(s for s in app.query(StatusLine) if s.kind == "error").render())


async def test_errors_show_inline_and_keep_their_http_status_when_resumed(tmp_path, loopback):
    loopback.add(error(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello")
        await settle(pilot)
        text = _error_text(app)
        assert text.startswith("✗ auth (401)") and "Incorrect API key" in text
        session = app.conversation.session_id

    resumed = build_app(tmp_path)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        line = _error_text(resumed)
    assert line.startswith("✗ auth (401): ") and "Incorrect API key" in line


async def test_an_error_inside_a_200_stream_is_said_as_one_with_no_http_status(tmp_path, loopback):
    """OpenRouter's mid-stream chunk carries a ``code`` 500; the answer was HTTP 200, so the line says
    where the error came from (until 2026-11-28: "server (500): HTTP 500: …"), and still offers /retry."""
    failed = {"error": {"code": 500, "message": "Internal server error"}, "choices": []}
    body = chat_stream([], ["Half an ans"], usage=None, finish=False) + encode_sse([failed], done=False)
    loopback.add(sse(body))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello")
        await settle(pilot)
        line = _error_text(app)
        assert line == (
            "✗ server: server error in the stream (its code 500): Internal server error — /retry to try again"
        )
        assert app.query_one(AnswerView).text == "Half an ans"  # what arrived is kept
    assert len(loopback.requests) == 1  # said after content: not retried behind the user's back


async def test_a_resumed_error_reads_as_it_did_live_without_the_retry_hint(tmp_path, loopback):
    body = chat_stream([], ["Half an ans", "wer"], usage=None, finish=False)
    loopback.add(sse(body, cut_after=len(body) - 10))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello")
        await settle(pilot)
        live = _error_text(app)
        session = app.conversation.session_id
    assert live.startswith("✗ cut: ") and live.endswith(" — /retry to try again")

    resumed = build_app(tmp_path)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        line = _error_text(resumed)
    assert line == live.removesuffix(" — /retry to try again")


async def test_retry_countdown_is_live_then_replaced_by_the_answer(tmp_path, loopback):
    loopback.add(error(429, {"error": {"message": "slow down"}}, retry_after=1))
    loopback.add(sse(chat_stream([], ["finally here"])))
    clock = FakeClock()
    app = build_app(tmp_path, config=loop_config(loopback), clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello")
        await wait_for(pilot, lambda: any(s.kind == "retry" for s in app.query(StatusLine)))
        line = next(s for s in app.query(StatusLine) if s.kind == "retry")
        assert "retrying in 1s (attempt 1/" in str(line.render())
        await settle(pilot)
        assert not [s for s in app.query(StatusLine) if s.kind == "retry"]
        assert app.query_one(AnswerView).text == "finally here"


async def test_esc_during_a_retry_countdown_says_nothing_had_arrived_live_and_on_resume(tmp_path, loopback):
    """It said "what arrived is kept" of a reply nothing had arrived for (until 2026-11-28)."""
    loopback.add(error(429, {"error": {"message": "slow down"}}, retry_after=30))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello")
        await wait_for(pilot, lambda: any(s.kind == "retry" for s in app.query(StatusLine)))
        await pilot.press("escape")
        await settle(pilot)
        live = [str(s.render()) for s in app.query(StatusLine) if s.kind == "interrupted"]
        assert live == ["⏹ interrupted before anything arrived"]
        session = app.conversation.session_id
    resumed = build_app(tmp_path)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [str(s.render()) for s in resumed.query(StatusLine) if s.kind == "interrupted"] == live


async def test_model_output_is_inert_on_screen_and_in_exports(tmp_path, loopback):
    evil = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[1;1H\x07"
    loopback.add(sse(chat_stream([f"think {evil}hard"], [f"**bold** {evil}", "tail\x1b]0;title\x1b\\ end"])))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "be evil")
        await settle(pilot)
        shown = screen_text(app)
        assert "\x1b" not in shown and "\x07" not in shown
        assert "think hard" in shown and "tail end" in shown and "[2J" not in shown
        assert "\x1b" not in app.export_screenshot()
        await type_line(pilot, "/copy")
        await settle(pilot)
        assert "\x1b" not in app.clipboard and "tail end" in app.clipboard
        # the store keeps the reply exactly as it came (lossless); only display is cleaned
        assert "\x1b]52" in app.conversation.history()[-1].content.text


async def test_gauge_moves_while_streaming_and_says_estimated_first(tmp_path, loopback):
    loopback.add(stalled(chat_stream(["x " * 400], ["y " * 300], usage=None, finish=False)))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)  # the first gauge reading comes right after the first frame
        before = app.query_one(GaugeFooter).reading.effective
        assert "est." in str(app.query_one("#footer-gauge").render())
        await type_line(pilot, "go")
        await wait_for(pilot, lambda: app.query_one(GaugeFooter).reading.effective > before + 50)
        await pilot.press("escape")
        await settle(pilot)


async def test_scrolled_up_reader_gets_a_hint_instead_of_a_jump(tmp_path, loopback):
    app = build_app(tmp_path, config=loop_config(loopback))
    loopback.add(sse(chat_stream([], ["line\n\n" * 40])))
    # held a second once "more" has come: still streaming when the reader scrolls up, however loaded the machine
    body = chat_stream([], ["more\n\n"] * 40)
    loopback.add(sse(body, pace=0.01, max_chunk=64, stall_after=len(body) // 4, stall=1.0))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "fill the screen")
        await settle(pilot)
        chat = app.query_one("#chat")
        prompt, footer = app.query_one("#input").region, app.query_one("#footer").region
        await type_line(pilot, "stream slowly")
        await wait_for(
            pilot,
            lambda: len(app.query(AssistantMessage)) == 2 and "more" in app.query(AssistantMessage)[-1].answer_text,
        )
        chat.scroll_to(y=0, animate=False, immediate=True)
        await settle(pilot)
        assert chat.scroll_y == 0
        hint = app.query_one("#new-below")
        assert hint.display
        # a row of its own between the conversation and the prompt, which does not move
        assert hint.region.y == chat.region.bottom and hint.region.bottom == prompt.y
        assert (app.query_one("#input").region, app.query_one("#footer").region) == (prompt, footer)
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert not app.query_one("#new-below").display
        assert chat.scroll_y == chat.max_scroll_y


async def test_hidden_thinking_still_says_the_model_is_thinking(tmp_path, loopback):
    loopback.add(stalled(chat_stream(["weighing the options"], [], usage=None, finish=False)))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.settings.set("reasoning.includeInResponse", "false")
        await type_line(pilot, "how?")
        await wait_for(pilot, lambda: any(v.text for v in app.query(ThinkingView)))
        await pilot.pause()
        view = app.query_one(ThinkingView)
        assert view.display and view.query_one(".thinking-header").display
        assert not view.query_one(".thinking-body").visible or view.query_one(".thinking-body").styles.display == "none"
        assert "Thinking…" in screen_text(app) and "weighing the options" not in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        assert "Thinking…" not in screen_text(app) and "Thought" not in screen_text(app)


async def test_a_tool_call_shows_as_one_inert_line_with_its_result_live_and_when_resumed(tmp_path, loopback):
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loop-model"}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather\x1b[2J", "arguments": ""}}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"content": "Let me look."}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Oslo"}'}}]},
                    "finish_reason": None,
                }
            ],
        },
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    loopback.add(sse(encode_sse(chunks)))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "weather in Oslo?")
        await settle(pilot)
        await wait_for(pilot, lambda: "not offered" in screen_text(app))
        shown = screen_text(app)
        assert '⚙ get_weather {"city": "Oslo"}' in shown and "[2J" not in shown and "\x1b" not in shown
        assert shown.index("Let me look.") < shown.index("⚙ get_weather")
        session = app.conversation.session_id

    resumed = build_app(tmp_path)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (view,) = resumed.query(ToolCallView)
        assert view.status == "unknown" and view.call_id == "call_1"
        shown = screen_text(resumed)
        assert '⚙ get_weather {"city": "Oslo"} · ✗ not offered' in shown and "[2J" not in shown


async def test_a_key_typed_during_a_stream_is_painted_before_the_next_frame_of_the_reply(tmp_path, loopback):
    loopback.add(stalled(chat_stream(["pondering"], [], usage=None, finish=False)))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "go")
        await wait_for(pilot, lambda: app.chat.renderer is not None and bool(app.query(ThinkingView)))
        renderer = app.chat.renderer
        assert renderer is not None
        order: list[str] = []
        painted, flush = app.chat.frames.painted, renderer.flush

        async def paint() -> None:
            order.append("paint")
            await painted()

        async def show() -> None:
            order.append("flush")
            await flush()

        app.chat.frames.painted, renderer.flush = paint, show  # type: ignore[method-assign]
        await pilot.press("x")
        renderer.feed(ThinkingDelta(" more"))
        await app.chat.frames.frame()
        assert order == ["paint", "flush", "paint"]  # the key first, then the reply's frame
        order.clear()
        renderer.feed(ThinkingDelta(" and more"))
        await app.chat.frames.frame()
        assert order == ["flush", "paint"]  # nothing typed: the frame alone
        assert app.query_one("#input").text == "x"
        await pilot.press("escape")
        await settle(pilot)


def _chat_rows(app) -> list[str]:
    """The conversation's lines as the screen shows them, without the scrollbar."""
    chat = app.query_one("#chat").scrollable_content_region
    rows = screen_text(app).splitlines()[chat.y : chat.bottom]
    return [row[chat.x : chat.right].strip() for row in rows]


def _top_line(app) -> str:
    """The first non-blank line of the conversation as the screen shows it."""
    return next(row for row in _chat_rows(app) if row)


async def _reading(pilot, app, text: str) -> None:
    """Scroll until ``text`` is the conversation's top line: a page at a time until it is
    on screen, then to its row."""
    chat = app.query_one("#chat")
    page = max(1, chat.scrollable_content_region.height - 1)
    for y in range(0, int(chat.max_scroll_y) + page, page):
        chat.scroll_to(y=y, animate=False, immediate=True)
        await pilot.pause()
        rows = _chat_rows(app)
        if text in rows:
            chat.scroll_to(y=chat.scroll_y + rows.index(text), animate=False, immediate=True)
            await pilot.pause()
            if _top_line(app) == text:
                return
    raise AssertionError(f"{text!r} never reached the top")


async def test_hiding_or_folding_thinking_keeps_the_line_being_read_in_place(tmp_path, loopback):
    thinking = "".join(f"Step {i} of the reasoning.\n\n" for i in range(60))
    answer = "".join(f"Paragraph {i} of the answer.\n\n" for i in range(80))
    loopback.add(sse(chat_stream([thinking], [answer])))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "a long one")
        await settle(pilot)
        await _reading(pilot, app, "Paragraph 24 of the answer.")
        app.settings.set("reasoning.includeInResponse", "false")
        await settle(pilot)
        assert _top_line(app) == "Paragraph 24 of the answer."
        app.settings.set("reasoning.includeInResponse", "true")
        await settle(pilot)
        assert _top_line(app) == "Paragraph 24 of the answer."
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert _top_line(app) == "Paragraph 24 of the answer."
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert _top_line(app) == "Paragraph 24 of the answer."

        # reading the thinking when it goes: what follows it takes its place
        await _reading(pilot, app, "Step 30 of the reasoning.")
        app.settings.set("reasoning.includeInResponse", "false")
        await settle(pilot)
        assert _top_line(app) == "Paragraph 0 of the answer."
        app.settings.set("reasoning.includeInResponse", "true")
        await settle(pilot)
        assert not app.query_one("#chat").following

        await _reading(pilot, app, "Paragraph 24 of the answer.")
        # the segment being read removed meanwhile (redrawn for a new width or theme):
        # the answer that held it stays where it was
        chat = app.query_one("#chat")
        place = chat.reading_place()
        (segment, _), (answer, row) = place[0], place[1]
        assert isinstance(answer, AnswerView)
        await segment.remove()
        await settle(pilot)
        chat.restore(place)
        await pilot.pause()
        top = sum(
            w.virtual_region.y
            for w in (answer, *answer.ancestors)
            if w.parent is not None and w is not chat and chat in w.ancestors
        )
        assert chat.scroll_y == min(chat.max_scroll_y, top - row)


def stalled_app(tmp_path, loopback) -> TractApp:
    """The app on a server whose reply stalls after "Half"."""
    loopback.add(stalled(chat_stream(["pondering"], ["Half"], usage=None, finish=False)))
    return build_app(tmp_path, config=loop_config(loopback))


async def mid_reply(pilot, app: TractApp) -> None:
    """ "first" sent and its reply stalled after "Half". Ready first: a line typed during start-up
    is queued, and the queue holds later commands until its reply ends (under load a command was
    queued behind the stalled reply, and said nothing)."""
    await wait_for(pilot, lambda: app.chat.ready)
    await type_line(pilot, "first")
    await wait_for(pilot, lambda: any(a.text == "Half" for a in app.query(AnswerView)))


async def test_lines_refused_while_a_reply_streams_stay_in_the_prompt_said_once(tmp_path, loopback):
    """Each refused line said "still streaming" again, and the lines stayed under the finished
    answer; a burst typed after a refused Enter ran on into the line (``/newdef``); /compact took the
    command out of the prompt. Now: one line, gone with the reply; the burst on a line of its own;
    a command refused stays in the prompt. (A message is queued: tests/test_ui_queued.py.)"""
    app = stalled_app(tmp_path, loopback)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await pilot.press(*"/new", "enter", *"def")
        await pilot.pause()
        assert app.query_one("#input").text == "/new\ndef"  # it ran on as "/newdef"
        app.query_one("#input").clear()
        await type_line(pilot, "/compact")
        await pilot.pause()
        assert app.query_one("#input").text == "/compact\n"
        still = [n for n in app.query(".note") if "still streaming" in str(n.render())]
        assert len(still) == 1 and "your command stays in the prompt" in str(still[0].render())
        await pilot.press("escape")
        await settle(pilot)
        assert not [n for n in app.query(".note") if "still streaming" in str(n.render())]


@pytest.mark.parametrize("command", ["/clear", "/new", "/retry"])
async def test_a_command_that_redraws_the_view_waits_for_the_streaming_reply(tmp_path, loopback, command):
    """It would remove the message the reply draws into: one line says why, the reply goes on."""
    app = stalled_app(tmp_path, loopback)
    async with app.run_test(size=SIZE) as pilot:
        await mid_reply(pilot, app)
        await app.chat.run_command(command)  # as the palette runs it: never in the prompt, not put there
        await pilot.pause()
        assert "still streaming" in str(app.query(".note")[-1].render()) and app.query_one("#input").text == ""
        assert app.chat.streaming
        assert [u.text for u in app.query(UserMessage)] == ["first"]
        assert [a.text for a in app.query(AnswerView)] == ["Half"]
        await pilot.press("escape")
        await settle(pilot)
        await app.chat.run_command("/clear")
        await settle(pilot)
        assert not app.query(UserMessage)


async def test_a_long_paste_is_shown_folded_and_sent_whole(tmp_path):
    app = build_app(tmp_path)
    pasted = "\n".join(f"log line {i}" for i in range(801))
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#input").insert(pasted)
        await pilot.press("enter")
        await settle(pilot)
        (message,) = app.query(UserMessage)
        shown = str(message.render())
        assert "log line 11" in shown and "log line 12" not in shown and "789 more lines" in shown
        assert app.conversation.history()[0].content.text == pasted  # what was sent is whole
        await pilot.click(message)
        await settle(pilot)
        assert "log line 800" in str(message.render())


async def test_a_silent_server_is_said_to_be_waited_for_and_the_line_goes_when_it_speaks(tmp_path, loopback):
    loopback.add(sse(chat_stream(["weighing"], ["Half"], usage=None, finish=False), stall_after=0, stall=8))
    clock = FakeClock()
    app = build_app(tmp_path, config=loop_config(loopback), clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello?")
        await wait_for(pilot, lambda: app.chat.streaming)
        clock.advance(3)
        await app.chat.frames.tick()
        assert not app.query(".status.-stall")  # a few seconds is a model thinking, not a silence
        clock.advance(9)
        await app.chat.frames.tick()
        await pilot.pause()
        (line,) = app.query(".status.-stall")
        assert str(line.render()) == "⏳ waiting for the server · 12s · Esc cancels"
        await wait_for(pilot, lambda: any(a.text == "Half" for a in app.query(AnswerView)))  # it speaks again
        await pilot.pause()
        assert not app.query(".status.-stall")
        await pilot.press("escape")


async def test_thinking_the_provider_omits_is_one_line_live_and_after_a_resume(tmp_path, loopback, monkeypatch):
    import json
    from pathlib import Path

    from tractui.providers.transport import ProviderConfig
    from tractui.ui.widgets.thinking import RedactedMarker

    recording = Path(__file__).parent / "fixtures/providers/anthropic_thinking"
    name = "claude_sonnet5_stream_thinking_display_omitted"
    model = json.loads((recording / f"{name}.meta.json").read_text())["model"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    loopback.add(sse((recording / f"{name}.sse").read_bytes()))
    config = ProviderConfig("anthropic", model, base_url=loopback.url, api_key_env="ANTHROPIC_API_KEY")
    app = build_app(tmp_path, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "think, but do not show it")
        await settle(pilot)
        live = [str(m.render()) for m in app.query(RedactedMarker)]
        session = app.conversation.session_id
        assert live and all(text == RedactedMarker.OMITTED for text in live)
        assert not app.query(ThinkingView)  # no empty "Thought" block
    resumed = build_app(tmp_path, config=config)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [str(m.render()) for m in resumed.query(RedactedMarker)] == live


def test_a_folded_paste_counts_the_lines_it_has_and_one_token_is_a_token():
    """A 60-line paste ends in a line break: "48 more lines" (it said 49); "· 1 token" (it said "1 tokens")."""
    from tractui.ui.widgets.thinking import ThinkingView

    pasted = "\n".join(f"line {i}" for i in range(60)) + "\n"
    assert str(UserMessage(pasted).render()).endswith("▸ … 48 more lines (click to show them)")
    view = ThinkingView(len, lambda: 0.0, text="one", elapsed=0.0)
    view.tokens = 1
    assert view._header().endswith("· 1 token")
    view.tokens = 2
    assert view._header().endswith("· 2 tokens")


@pytest.mark.parametrize("kind", ["overloaded", "rate_limit", "server"])
def test_an_error_said_mid_stream_by_a_busy_server_offers_retry(kind):
    """An error event inside the stream is not retried by tractui (what arrived would be doubled), and its
    line offered no /retry either (until 2026-11-28); the user may retry."""
    from tractui.core.events import StreamError
    from tractui.ui.streaming.renderer import error_line

    line = error_line(StreamError(kind, "stream error: Overloaded", retryable=False))  # type: ignore[arg-type]
    assert line.endswith(" — /retry to try again")
    assert not error_line(StreamError("bad_request", "stream error: no")).endswith("/retry to try again")
