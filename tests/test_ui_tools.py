"""Tools in the app: each call drawn with its result, the user asked before it runs, /tools."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.errors import NoWidget
from textual.widget import Widget
from textual.widgets import Button, Input, SelectionList
from ui_support import build_app, loop_config, screen_text, settle, type_line, wait_for

from tractui.config.mcp import McpConfig, McpServer
from tractui.tools.consent import ConsentPolicy
from tractui.tools.setup import demo_server
from tractui.tools.toolbox import Toolbox
from tractui.ui.app import TractApp
from tractui.ui.screens.consent import HELD, TYPING_PAUSE, ConsentScreen
from tractui.ui.widgets.footer import GaugeFooter
from tractui.ui.widgets.tool_call import ToolCallView

SIZE = (110, 36)
QUESTION = "what is 17 times 23?"
HOSTILE = Path(__file__).with_name("mcp_test_server.py")


def demo_box(tmp_path: Path, **servers: McpServer) -> Toolbox:
    return Toolbox(
        McpConfig(servers=servers or {"demo": demo_server()}), log_dir=tmp_path / "mcp", consent=ConsentPolicy()
    )


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[TractApp]:
    built = build_app(tmp_path)
    built.conversation.tools = demo_box(tmp_path)
    yield built


async def asked(pilot, app: TractApp) -> None:
    """Wait until the consent question is on screen with its buttons, and the user has paused
    (keys typed right after the question opened go on into the prompt)."""

    def shown() -> bool:
        focused = app.focused
        return (
            isinstance(app.screen, ConsentScreen)
            and focused is not None
            and focused.id == "consent-once"
            and focused.region.width > 0
        )

    await wait_for(pilot, shown, timeout=60)
    app.chat.clock.advance(TYPING_PAUSE)


def untimed(screen: str) -> str:
    """The screen's text without how long thinking took (not recorded) and the scrollbar's thumb
    (it moves with what is above the compared part)."""
    lines = re.sub(r"Thought for \d+s", "Thought", screen[screen.index(QUESTION) :]).splitlines()
    lines = lines[: next(i for i, line in enumerate(lines) if "╭─" in line)]  # up to the prompt
    return "\n".join(stripped for line in lines if (stripped := re.sub(r"\s*[▁▂▃▄▅▆▇█]?\s*$", "", line)))


def tool_commits(app: TractApp) -> list[dict[str, object]]:
    return [dict(c.content.metadata) for c in app.conversation.history() if c.kind == "tool"]


async def test_a_call_waits_for_consent_then_runs_and_the_reply_goes_on(app):
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await wait_for(pilot, lambda: "Run the tool demo.multiply?" in screen_text(app), timeout=60)
        await wait_for(pilot, lambda: [v.status for v in app.query(ToolCallView)] == ["waiting"])
        app.chat.clock.advance(TYPING_PAUSE)
        await pilot.press("y")
        await settle(pilot)
        view = app.query_one(ToolCallView)
        assert view.status == "done" and view.result == "391" and view.label == "demo.multiply"
        shown = screen_text(app)
        assert '⚙ demo.multiply {"a": 17, "b": 23} · ✓' in shown and "→ 391" in shown
        assert "391" in shown.split("→ 391", 1)[1]  # the answer after the call uses the result
        assert [m["status"] for m in tool_commits(app)] == ["done"]
        reading = app.conversation.gauge()  # the demo reports the tools it was offered in its input, as servers do
        assert reading.breakdown.tools > 0 and not reading.warnings


async def test_a_call_waiting_in_its_round_is_drawn_under_the_name_it_runs_as(tmp_path, loopback):
    """Two calls in one reply: while the first waits for consent, the second waits its turn, drawn
    as ``demo.multiply`` (as it is once run, and on a resume), not as the name the model was
    offered (``demo__multiply``)."""
    from strict_servers import Step, StrictChat

    calls = [("demo__add", {"a": 2, "b": 3}), ("demo__multiply", {"a": 5, "b": 7})]
    loopback.default = StrictChat([Step("Both at once.", calls=calls), Step("Done.", text="5 and 35.")])
    app = build_app(tmp_path, config=loop_config(loopback, "kimi-k2.6"))
    app.conversation.tools = demo_box(tmp_path)

    def headers() -> list[str]:
        return [str(view.query_one(".tool-header").render()) for view in app.query(ToolCallView)]

    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "add 2 and 3, multiply 5 by 7")
        await asked(pilot, app)
        assert [v.status for v in app.query(ToolCallView)] == ["waiting", None]
        assert headers() == [
            '▸ ⚙ demo.add {"a": 2, "b": 3} · waiting for your consent',
            '▸ ⚙ demo.multiply {"a": 5, "b": 7}',
        ]
        await pilot.press("y")
        await wait_for(pilot, lambda: [v.status for v in app.query(ToolCallView)] == ["done", "waiting"])
        await asked(pilot, app)
        await pilot.press("y")
        await settle(pilot)
        assert [(v.label, v.status, v.result) for v in app.query(ToolCallView)] == [
            ("demo.add", "done", "5"),
            ("demo.multiply", "done", "35"),
        ]
        assert "demo__" not in screen_text(app) and "5 and 35." in screen_text(app)


async def test_esc_in_a_round_draws_each_call_after_it_as_the_history_holds_it(tmp_path, loopback):
    """Esc at the first of two calls: both are answered as cancelled in the history, and the screen
    says so for both (the second stayed drawn with no status), as a resume draws them."""
    from strict_servers import Step, StrictChat

    calls = [("demo__add", {"a": 2, "b": 3}), ("demo__multiply", {"a": 5, "b": 7})]
    loopback.default = StrictChat([Step("Both at once.", calls=calls)])
    app = build_app(tmp_path, config=loop_config(loopback, "kimi-k2.6"))
    app.conversation.tools = demo_box(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "add 2 and 3, multiply 5 by 7")
        await asked(pilot, app)
        await pilot.press("escape")
        await settle(pilot)
        assert [m["status"] for m in tool_commits(app)] == ["cancelled", "cancelled"]
        assert [v.status for v in app.query(ToolCallView)] == ["cancelled", "cancelled"]
        live = screen_text(app)
    resumed = build_app(tmp_path, config=loop_config(loopback, "kimi-k2.6"))
    resumed.conversation.open_session(app.conversation.session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [v.status for v in resumed.query(ToolCallView)] == ["cancelled", "cancelled"]
        assert "interrupted" not in screen_text(resumed) and "interrupted" not in live


async def test_keys_typed_as_the_question_opens_go_on_into_the_prompt_not_into_the_answer(app, tmp_path):
    """The question opened in the middle of a word: its letters (an ``a`` would always allow the
    tool), Enter (allow once) and space (the focused button) are the prompt's until a pause."""
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await wait_for(pilot, lambda: isinstance(app.screen, ConsentScreen), timeout=60)
        await pilot.press(*"a yes", "backspace", "enter", "n")  # the clock stands still: one burst
        await wait_for(pilot, lambda: HELD in screen_text(app))  # the reply waits: no settling
        await pilot.pause()
        assert isinstance(app.screen, ConsentScreen) and app.query_one(ToolCallView).status == "waiting"
        # Backspace too; Enter kept it (not queued, as it is while a reply streams: it may have been
        # meant for the question): a line break, what follows below it
        assert app.chat.query_one("#input").text == "a ye\nn"
        assert not (tmp_path / "config" / "config.toml").exists()  # nothing always allowed
        app.chat.clock.advance(TYPING_PAUSE)  # a pause: the next key is an answer
        await pilot.press("y")
        await settle(pilot)
        assert app.query_one(ToolCallView).status == "done"
        assert app.chat.query_one("#input").text == "a ye\nn"  # kept, not sent


async def test_a_server_settling_before_the_first_gauge_leaves_the_count_to_start_up(app, monkeypatch):
    """Start-up counts a resumed session in steps; a server becoming ready meanwhile must not count
    it all at once on the event loop (the gauge's own count), only once the first gauge is drawn."""
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        box = app.chat.toolbox
        assert box is not None
        counted: list[bool] = []
        monkeypatch.setattr(app.chat, "refresh_gauge", lambda: counted.append(True))
        app.chat._gauged = False  # as before start-up's first gauge
        app.chat._tools_changed(box.connections["demo"])
        assert counted == []
        app.chat._gauged = True
        app.chat._tools_changed(box.connections["demo"])
        assert counted == [True]


async def test_a_key_that_changes_no_text_is_typing_too(app):
    """Up/Down in the completion list, the arrows: the guard counts from the last key the prompt
    handled, not from its last change of text (Enter picking from the list would allow a tool)."""
    async with app.run_test(size=SIZE) as pilot:
        box = app.chat.query_one("#input")
        await type_line(pilot, "/mod", enter=False)
        app.chat.clock.advance(5)
        await pilot.press("down")
        assert box.text == "/mod" and box.keyed_at == app.chat.clock()


async def test_denied_with_a_reason_the_model_is_told_and_nothing_runs(app):
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.click("#consent-reason", offset=(5, 1))
        await pilot.press(*"not now")  # letters go to the reason box, not to the y/s/a/n keys
        await pilot.press("enter")
        await settle(pilot)
        view = app.query_one(ToolCallView)
        assert view.status == "denied" and view.result == "denied by the user: not now"
        assert [m["status"] for m in tool_commits(app)] == ["denied"]


async def test_a_call_whose_server_stopped_under_the_question_is_drawn_not_run(app):
    """It was drawn "✗ failed", as if it had run and failed: it never ran."""
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        box = app.chat.toolbox
        assert box is not None
        await box.connections["demo"].stop()
        await pilot.press("y")
        await settle(pilot)
        view = app.query_one(ToolCallView)
        assert view.status == "not_run" and view.result.startswith("not run: the MCP server demo")
        assert "demo.multiply" in screen_text(app) and "⊘ not run" in screen_text(app)
        assert [m["status"] for m in tool_commits(app)] == ["not_run"]


async def test_esc_at_the_question_stops_the_reply_and_answers_the_call(app):
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ConsentScreen)
        assert app.query_one(ToolCallView).status == "cancelled"
        assert [m["status"] for m in tool_commits(app)] == ["cancelled"]
        assert not app.chat.streaming
        await type_line(pilot, "hello again")  # the prompt has the keys again
        await settle(pilot)
        assert "hello again" in screen_text(app)


async def test_always_allowed_for_the_session_asks_once(app):
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.press("s")
        await settle(pilot)
        await type_line(pilot, "and 6 times 7?")
        await settle(pilot)
        assert not isinstance(app.screen, ConsentScreen)
        assert [v.result for v in app.query(ToolCallView)] == ["391", "42"]


async def test_a_resumed_session_draws_each_call_with_its_result_inside_its_reply(tmp_path, app):
    async with app.run_test(size=SIZE) as pilot:
        box = app.chat.toolbox
        assert box is not None
        # no "waiting for MCP servers" notice: notices are not stored, so a resume would not draw it
        await wait_for(pilot, lambda: box.connections["demo"].state == "ready", timeout=60)
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.press("y")
        await settle(pilot)
        live = screen_text(app)
        session = app.conversation.session_id
    resumed = build_app(tmp_path)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (view,) = resumed.query(ToolCallView)
        assert (view.status, view.result, view.label) == ("done", "391", "demo.multiply")
        assert len(resumed.query(".assistant-message")) == 1  # the call and the answer after it: one reply
        shown = screen_text(resumed)
        assert "Thought · 16 tokens" in shown  # how long it thought is not recorded; the rest is as it was
        assert untimed(shown) == untimed(live)


async def test_a_call_the_history_holds_no_result_for_is_drawn_as_what_the_model_is_sent(tmp_path):
    """tractui was killed during a call: no result was stored. A resume drew the call as one still
    to come (no status); it is drawn interrupted, with the text the next request sends for it."""
    from tractui.core.content import Content, TextBlock, ToolCallBlock
    from tractui.store.compile import UNANSWERED

    app = build_app(tmp_path)
    store = app.conversation.store
    session = store.create_session("killed mid-call")
    store.append(session, "user", Content.human("sleep please"))
    call = ToolCallBlock(id="c1", name="test__sleep", arguments='{"seconds": 20}')
    store.append(session, "assistant", Content(speaker="ai", blocks=[TextBlock(text="Sleeping."), call]))
    app.conversation.open_session(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (view,) = app.query(ToolCallView)
        assert (view.status, view.result) == ("interrupted", UNANSWERED)
        assert "✗ interrupted" in screen_text(app)


async def test_ctrl_o_opens_the_newest_call_with_its_arguments_and_result(tmp_path):
    from ui_support import DEMO

    from tractui.providers.demo import DemoProvider

    app = build_app(tmp_path, provider=DemoProvider(DEMO, pace=0.01))  # streamed, as a user sees it
    app.conversation.tools = demo_box(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.chat.streaming, timeout=60)
        await settle(pilot)
        view = app.query_one(ToolCallView)
        assert view.region.height == 1  # folded: one line, no room kept for what is hidden
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: "arguments:" in screen_text(app) and "result:" in screen_text(app))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: "result:" not in screen_text(app) and "→ 391" in screen_text(app))
        assert view.region.height == 1


async def test_slash_tools_lists_the_servers_and_a_tool_switched_off_is_not_offered(app):
    async with app.run_test(size=SIZE) as pilot:
        box = app.chat.toolbox
        assert box is not None
        await wait_for(pilot, lambda: box.connections["demo"].state == "ready", timeout=60)
        await type_line(pilot, "/tools")
        await wait_for(pilot, lambda: "demo.multiply" in screen_text(app))
        shown = screen_text(app)
        assert re.search(r"demo  ready in \d+(\.\d)?s · 4 tools", shown) and "demo.add" in shown  # 12s under load
        listing = app.screen.query_one("#tools-list", SelectionList)

        def highlighted() -> object:
            return None if listing.highlighted is None else listing.get_option_at_index(listing.highlighted).value

        for _ in range(listing.option_count + 1):
            if highlighted() == ("demo", "multiply"):
                break
            await pilot.press("down")
        assert highlighted() == ("demo", "multiply")
        footer = app.chat.query_one(GaugeFooter)
        offered = footer.reading.effective
        assert offered == app.conversation.gauge().effective
        await pilot.press("space")
        await pilot.press("escape")
        assert ("demo", "multiply") in box.switched_off
        assert "demo__multiply" not in [s.name for s in app.conversation.next_tools()]
        await pilot.pause()
        assert footer.reading.effective == app.conversation.gauge().effective < offered  # the gauge follows
        await type_line(pilot, "multiply 17 by 23")  # the demo model answers without the tool it was not offered
        await settle(pilot)
        assert not app.query(ToolCallView) and not isinstance(app.screen, ConsentScreen)


async def test_slash_tools_without_servers_says_how_to_add_one(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "/tools")
        await settle(pilot)
        assert "no MCP servers configured" in screen_text(app)


async def test_characters_typed_over_slash_tools_close_it_and_go_to_the_prompt(app):
    """They went nowhere (until 2026-11-28), among them a command typed right after Esc, which the
    terminal's reader takes as Alt with its first character (``alt+slash``); Space, r, q and Esc
    keep their meaning in the list."""
    from textual import events

    from tractui.ui.screens.tools import ToolsScreen

    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "/tools")
        await settle(pilot)
        tools = app.screen
        assert isinstance(tools, ToolsScreen)
        tools.post_message(events.Key("alt+slash", "/"))
        for char in "set temperature 0.5":
            tools.post_message(events.Key("space" if char == " " else char, char))
        tools.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        assert app.screen is app.chat and app.settings.get("temperature") == 0.5
        await type_line(pilot, "/tools")
        await settle(pilot)
        await pilot.press("q")
        await settle(pilot)
        assert app.screen is app.chat and app.query_one("#input").text == ""


async def test_a_failed_server_is_one_line_with_its_reason(tmp_path):
    app = build_app(tmp_path)
    app.conversation.tools = demo_box(tmp_path, broken=McpServer(command="tractui-no-such-command-xyz"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "MCP server broken failed" in screen_text(app), timeout=60)
        assert "Traceback" not in screen_text(app)


async def test_what_a_hostile_server_describes_is_shown_inert(tmp_path):
    import sys

    app = build_app(tmp_path)
    app.conversation.tools = demo_box(tmp_path, hostile=McpServer(command=sys.executable, args=[str(HOSTILE)]))
    async with app.run_test(size=SIZE) as pilot:
        box = app.chat.toolbox
        assert box is not None
        await wait_for(pilot, lambda: box.connections["hostile"].state != "starting", timeout=60)
        await type_line(pilot, "/tools")
        await wait_for(pilot, lambda: "hostile.disguised" in screen_text(app))
        shown = screen_text(app)
        assert "hostile.disguised  Looks harmless" in shown
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "harmless ⟨U+202E⟩evil" in shown  # the override is shown, not obeyed


async def test_a_running_call_shows_how_long_it_has_run():
    from textual.app import App, ComposeResult
    from ui_support import FakeClock

    clock = FakeClock()
    view = ToolCallView("hostile.sleep", arguments='{"seconds": 30}', clock=clock)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield view

    async with One().run_test() as pilot:
        view.update_state("running")
        clock.advance(7)
        view.tick()  # the app ticks once a second
        await pilot.pause()
        assert "· running 7s" in str(view.query_one(".tool-header").render())
        view.update_state("done", result="slept", took=7.2)
        await pilot.pause()
        assert "· ✓ 7s · → slept" in str(view.query_one(".tool-header").render())


async def test_the_footer_follows_the_tools_switched_after_a_reply_at_once(app):
    """After a reply, the last call's reported input holds the tools it was offered: switching them
    off (tools.enabled, or one in /tools) or on again moves the footer at once, not at the next
    request, and /context adds up without a warning."""
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.press("y")
        await settle(pilot)
        footer = app.chat.query_one(GaugeFooter)
        conversation = app.conversation
        tools = conversation.tool_tokens(conversation.next_tools())
        with_tools = footer.reading.effective
        assert tools > 0 and footer.reading.basis is not None  # anchored on the reply's reported usage

        await type_line(pilot, "/set tools.enabled false")
        await settle(pilot)
        assert footer.reading.effective == with_tools - tools and footer.reading.breakdown.tools == 0
        await type_line(pilot, "/set tools.enabled true")
        await settle(pilot)
        assert footer.reading.effective == with_tools and not footer.reading.warnings

        await type_line(pilot, "/tools")
        await wait_for(pilot, lambda: "demo.now" in screen_text(app))
        await pilot.press("down", "space")  # the first tool: demo.now
        await wait_for(pilot, lambda: ("demo", "now") in app.chat.toolbox.switched_off)
        await pilot.pause()
        fewer = conversation.tool_tokens(conversation.next_tools())
        assert footer.reading.effective == with_tools - (tools - fewer) < with_tools  # the screen still open
        await pilot.press("escape")
        await type_line(pilot, "/context")
        await wait_for(pilot, lambda: "Context" in screen_text(app))
        assert "⚠" not in screen_text(app)


async def test_a_server_that_fails_as_the_app_closes_changes_nothing(app):
    """Between the screen going and ``aclose`` unhooking the toolbox, a server's change of state
    (one that fails as the app quits) found no footer to count into: a ``NoMatches`` at exit."""
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: app.chat.toolbox is not None and app.chat.toolbox.connections["demo"].state == "ready"
        )
        await settle(pilot)
        chat = app.chat
    connection = chat.toolbox.connections["demo"]
    connection.state, connection.reason = "failed", "went away"
    chat._tools_changed(connection)  # the screen is gone: nothing to redraw, and no error


def drawn(app: TractApp, widget: Widget) -> bool:
    """Every cell of ``widget`` is on the screen and shows it: not cut off by the box, not under another."""
    screen, region = app.screen, widget.region
    if not region or not screen.region.contains_region(region):
        return False
    try:
        return all(
            screen.get_widget_at(x, y)[0] is widget
            for y in range(region.y, region.bottom)
            for x in range(region.x, region.right)
        )
    except NoWidget:
        return False


def text_in(app: TractApp, widget: Widget) -> str:
    """What the screen shows in ``widget`` (without its scrollbar), its lines joined without spaces."""
    region = widget.scrollable_content_region
    lines = screen_text(app).splitlines()[region.y : region.bottom]
    return "".join("".join(line[region.x : region.right].split()) for line in lines)


def answers_drawn(app: TractApp) -> bool:
    screen = app.screen
    return all(drawn(app, widget) for widget in [*screen.query(Button), screen.query_one("#consent-hint")])


SMALL = [(44, 16), (40, 12), (80, 24), (70, 24)]  # the last two: Deny (n) was cut off or gone by width alone


@pytest.mark.parametrize("size", SMALL)
@pytest.mark.parametrize(
    ("key", "status"), [("y", "done"), ("s", "done"), ("a", "done"), ("n", "denied"), ("escape", "cancelled")]
)
async def test_the_question_on_a_small_terminal_shows_its_answers_and_takes_its_keys(tmp_path, size, key, status):
    """At 44×16 the buttons and the hint were cut off under the reason box: ``y`` answered, but the
    user could not see the choices (until 2026-11-28)."""
    app = build_app(tmp_path)
    app.conversation.tools = demo_box(tmp_path)
    async with app.run_test(size=size) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.pause()
        assert answers_drawn(app)
        shown = screen_text(app)
        assert "Run the tool demo.multiply?" in shown and "Esc stops the reply" in shown  # the question, on top
        assert [str(b.label) for b in app.screen.query(Button)] == ["Once (y)", "Session (s)", "Always (a)", "Deny (n)"]
        await pilot.press(key)
        await settle(pilot)
        assert not isinstance(app.screen, ConsentScreen)
        assert [v.status for v in app.query(ToolCallView)] == [status]


LONG_PATH = "notes/" + "a-long-folder-name/" * 40 + "[bold]not bold[/bold] END-OF-PATH.txt"


@pytest.mark.parametrize("size", SMALL)
async def test_long_arguments_scroll_under_the_answers_and_tab_reaches_the_reason(tmp_path, loopback, size):
    """The arguments (untrusted, drawn inert) and the reason box scroll inside the box; the buttons and
    the hint stay where they are."""
    from strict_servers import Step, StrictChat

    calls = [("demo__read_file", {"path": LONG_PATH})]
    loopback.default = StrictChat([Step("Reading it.", calls=calls), Step("Denied.", text="Not read, then.")])
    app = build_app(tmp_path, config=loop_config(loopback, "kimi-k2.6"))
    app.conversation.tools = demo_box(tmp_path)
    async with app.run_test(size=size) as pilot:
        await type_line(pilot, "read that file")
        await asked(pilot, app)
        await pilot.pause()
        box = app.screen.query_one("#consent-box")
        assert answers_drawn(app) and "END-OF-PATH" not in screen_text(app)
        assert box.max_scroll_y > 0 and box.focusable  # it scrolls, by the keys too once Tab is on it
        await pilot.press("shift+tab")  # from "once" back to the arguments: scrolled into view whole
        await pilot.press("end")
        await pilot.pause()
        assert app.focused is app.screen.query_one("#consent-arguments") and answers_drawn(app)
        shown = text_in(app, app.screen.query_one("#consent-arguments"))
        assert "[bold]notbold[/bold]END-OF-PATH.txt" in shown  # its end; shown as written, not as markup
        reason = app.screen.query_one("#consent-reason", Input)
        for _ in range(len(app.screen.focus_chain)):
            if app.focused is reason:
                break
            await pilot.press("tab")
        await pilot.pause()
        assert app.focused is reason and drawn(app, reason) and answers_drawn(app)  # scrolled into view
        await pilot.press(*"too long", "enter")
        await settle(pilot)
        view = app.query_one(ToolCallView)
        assert view.status == "denied" and view.result == "denied by the user: too long"


async def test_the_question_at_a_normal_size_is_drawn_as_before_and_follows_a_resize(app):
    """120×40: one row of full buttons under the reason box, the box no stop for Tab; narrowed, the
    short labels; widened again, the long ones."""
    async with app.run_test(size=(120, 40)) as pilot:
        await type_line(pilot, QUESTION)
        await asked(pilot, app)
        await pilot.pause()
        screen = app.screen
        buttons = list(screen.query(Button))
        labels = ["Allow once (y)", "Allow this session (s)", "Always allow (a)", "Deny (n)"]
        assert [str(b.label) for b in buttons] == labels and answers_drawn(app)
        assert {(b.region.y, b.region.height) for b in buttons} == {(23, 3)}  # one row, with their borders
        reason = screen.query_one("#consent-reason")
        assert reason.region.bottom < buttons[0].region.y < screen.query_one("#consent-hint").region.y
        assert [w.id for w in screen.focus_chain] == [
            "consent-arguments",
            "consent-reason",
            *(f"consent-{choice}" for choice in ("once", "session", "always", "deny")),
        ]
        await pilot.resize_terminal(44, 16)
        await pilot.pause()
        assert [str(b.label) for b in buttons] == ["Once (y)", "Session (s)", "Always (a)", "Deny (n)"]
        assert answers_drawn(app)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert [str(b.label) for b in buttons] == labels and {(b.region.y, b.region.height) for b in buttons} == {
            (23, 3)
        }
        await pilot.press("y")
        await settle(pilot)
        assert [v.status for v in app.query(ToolCallView)] == ["done"]
