"""A profile chooses the MCP servers also when loaded mid-session: the app as ``tractui`` builds it
(config.toml, profiles, ``build_toolbox``), real MCP servers over stdio, a loopback model recording
what each request offers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from loopback import LoopbackServer, openai_chat_reply
from ui_support import FakeClock, screen_text, settle, type_line, wait_for

from tractui.config.options import CliOptions
from tractui.config.paths import config_dir
from tractui.config.profiles import ProfileStore
from tractui.config.startup import resolve_startup
from tractui.store.history import HistoryStore
from tractui.ui.app import TractApp
from tractui.ui.launch import _conversation
from tractui.ui.pending import PendingConversation
from tractui.ui.screens.consent import TYPING_PAUSE, ConsentScreen
from tractui.ui.screens.tools import ToolsScreen
from tractui.ui.widgets.footer import GaugeFooter
from tractui.ui.widgets.tool_call import ToolCallView

SIZE = (110, 36)
TEST_SERVER = Path(__file__).with_name("mcp_test_server.py")
SERVERS = f"""
[mcp.servers.demo]
command = {sys.executable!r}
args = ["-m", "tractui.tools.demo_server"]

[mcp.servers.test]
command = {sys.executable!r}
args = [{str(TEST_SERVER)!r}]
"""


def profiles(url: str) -> None:
    """``kimi-local``: the shipped kimi profile pointed at the loopback server; ``ldemoonly``: the
    same with ``mcp_servers = ["demo"]``."""
    store = ProfileStore()
    kimi = store.load("kimi").model_copy(update={"base_url": f"{url}/v1", "api_key_env": ""})
    store.write(kimi.model_copy(update={"name": "kimi-local"}))
    store.write(kimi.model_copy(update={"name": "ldemoonly", "mcp_servers": ("demo",)}))


def started(tmp_path: Path, profile: str) -> TractApp:
    """The app as ``tractui --profile PROFILE`` builds it."""
    startup = resolve_startup(CliOptions(profile=profile))
    store = HistoryStore(tmp_path / "history.db")
    pending = PendingConversation(
        startup.config, startup.settings, startup.profile_name, lambda: _conversation(store, startup, None)
    )
    return TractApp(pending, notices=startup.notices, clock=FakeClock())


def with_servers(tmp_path: Path, loopback: LoopbackServer, profile: str) -> TractApp:
    """config.toml's servers, the profiles naming them and a model answering "ok": the app as
    ``tractui --profile PROFILE`` builds it."""
    (config_dir() / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(SERVERS)
    profiles(loopback.url)
    loopback.default = lambda request: openai_chat_reply("ok")
    return started(tmp_path, profile)


def offered(loopback: LoopbackServer) -> list[str]:
    """The tool names the last request offered."""
    return sorted(t["function"]["name"] for t in loopback.requests[-1].json.get("tools", []))


async def run(pilot, line: str) -> None:
    await type_line(pilot, line)
    await settle(pilot)


async def ready(pilot, app: TractApp, *names: str) -> None:
    """Until the servers in use are exactly ``names``, each ready and its tools counted by the footer."""
    box = app.chat.toolbox
    assert box is not None
    await wait_for(pilot, lambda: list(box.connections) == list(names), timeout=10)
    await wait_for(pilot, lambda: all(c.state == "ready" for c in box.connections.values()), timeout=60)
    await settle(pilot)


def gauge_tools(app: TractApp) -> int:
    """The tools part of the footer's reading, as drawn (refreshed by the app, not by the test)."""
    reading = app.query_one(GaugeFooter).reading
    assert reading is not None
    return reading.breakdown.tools


async def tools_listed(pilot, app: TractApp) -> str:
    await run(pilot, "/tools")
    assert isinstance(app.screen, ToolsScreen)
    text = screen_text(app)
    await pilot.press("escape")
    return text


DEMO_TOOLS = ["demo__add", "demo__multiply", "demo__now", "demo__read_file"]


async def test_loading_a_profile_runs_the_servers_it_names_and_stops_the_others(tmp_path, loopback):
    app = with_servers(tmp_path, loopback, "ldemoonly")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await ready(pilot, app, "demo")
        only_demo = gauge_tools(app)
        assert only_demo > 0  # counted once the server is ready, before any request
        await run(pilot, "first")
        assert offered(loopback) == DEMO_TOOLS

        await run(pilot, "/profile load kimi-local")
        await ready(pilot, app, "demo", "test")  # the test server starts now
        await run(pilot, "second")
        both = offered(loopback)
        assert set(DEMO_TOOLS) < set(both) and "test__sleep" in both
        assert gauge_tools(app) > only_demo
        assert gauge_tools(app) == app.conversation.gauge().breakdown.tools
        listed = await tools_listed(pilot, app)
        assert "demo  ready" in listed and "test  ready" in listed

        box = app.chat.toolbox
        assert box is not None
        test = box.connections["test"]
        await run(pilot, "/profile load ldemoonly")
        assert list(box.connections) == ["demo"]
        await wait_for(pilot, lambda: test.state == "stopped", timeout=10)  # stopped, not just hidden
        await run(pilot, "/model kimi-k2.5")  # another model, the same profile: the same servers
        assert list(box.connections) == ["demo"]
        await run(pilot, "third")
        assert offered(loopback) == DEMO_TOOLS
        assert gauge_tools(app) == only_demo
        listed = await tools_listed(pilot, app)
        assert "demo  ready" in listed and "test" not in listed
        await run(pilot, "/set retries 1")
        await run(pilot, "/profile save")
        assert ProfileStore().load("ldemoonly").mcp_servers == ("demo",)
        assert not [line for line in screen_text(app).splitlines() if "failed" in line]  # a stop is no failure


async def test_the_demo_profile_brings_the_demo_server_when_none_is_configured(tmp_path, loopback):
    profiles(loopback.url)
    loopback.default = lambda request: openai_chat_reply("ok")
    app = started(tmp_path, "kimi-local")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await settle(pilot)
        await run(pilot, "/tools")
        assert "no MCP servers configured" in screen_text(app)

        await run(pilot, "/profile load demo")
        await type_line(pilot, "what is 17 times 23?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConsentScreen), timeout=60)
        app.chat.clock.advance(TYPING_PAUSE)  # a pause after typing: the next key answers
        await pilot.press("y")
        await settle(pilot)
        assert [(v.label, v.status, v.result) for v in app.query(ToolCallView)] == [("demo.multiply", "done", "391")]
        box = app.chat.toolbox
        assert box is not None
        demo = box.connections["demo"]

        await run(pilot, "/profile load kimi-local")  # the demo's tools are for the demo model only
        assert not box.connections
        await wait_for(pilot, lambda: demo.state == "stopped", timeout=10)
        await run(pilot, "and now?")
        assert offered(loopback) == []


@pytest.mark.parametrize("named", [("test",), ("nosuch",)])
async def test_a_profile_that_names_no_enabled_server_offers_none_and_says_why(tmp_path, loopback, named):
    (config_dir() / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(
        SERVERS.replace("[mcp.servers.test]", "[mcp.servers.test]\nenabled = false")
    )
    profiles(loopback.url)
    store = ProfileStore()
    store.write(store.load("kimi-local").model_copy(update={"name": "narrow", "mcp_servers": named}))
    loopback.default = lambda request: openai_chat_reply("ok")
    app = started(tmp_path, "kimi-local")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await ready(pilot, app, "demo")
        await run(pilot, "/profile load narrow")
        await run(pilot, "/tools")
        assert f"no MCP servers in use: the profile's mcp_servers ({named[0]}) names no enabled server" in screen_text(
            app
        )
        await run(pilot, "hello")
        assert offered(loopback) == []


async def crashed(pilot, app: TractApp) -> None:
    """The test server exits mid-call (its ``crash`` tool), and the app says so."""
    import contextlib

    box = app.chat.toolbox
    assert box is not None
    test = box.connections["test"]
    with contextlib.suppress(Exception):  # the call fails as the server exits: "Connection closed"
        await test.call("crash", {})
    await wait_for(pilot, lambda: test.state == "failed", timeout=30)
    await settle(pilot)


async def test_a_failed_server_is_restarted_from_slash_tools_or_by_loading_its_profile(tmp_path, loopback):
    from textual.widgets import SelectionList

    app = with_servers(tmp_path, loopback, "kimi-local")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await ready(pilot, app, "demo", "test")
        box = app.chat.toolbox
        assert box is not None
        await crashed(pilot, app)
        assert "MCP server test failed: the server exited (/tools, then r, starts it again)" in screen_text(app)

        await run(pilot, "/tools")
        assert isinstance(app.screen, ToolsScreen)
        shown = screen_text(app)
        assert "test  failed: the server exited" in shown and "test.sleep  unavailable: test failed" in shown
        assert "r restarts test" in shown
        listing = app.screen.query_one("#tools-list", SelectionList)

        def test_tools() -> list[tuple[bool, bool]]:  # (switched on, can be switched) of each test.* tool
            options = [listing.get_option_at_index(i) for i in range(listing.option_count)]
            return [(o.value in listing.selected, not o.disabled) for o in options if o.value[0] == "test"]

        assert test_tools() and set(test_tools()) == {(False, False)}  # not offered, nothing to switch
        await pilot.press("r")
        await wait_for(pilot, lambda: box.connections["test"].state == "ready", timeout=60)
        await wait_for(pilot, lambda: test_tools() and set(test_tools()) == {(True, True)})
        assert "test  ready" in screen_text(app) and "r restarts" not in screen_text(app)
        await pilot.press("escape")
        await run(pilot, "hello")
        assert "test__sleep" in offered(loopback)

        await crashed(pilot, app)
        await run(pilot, "/model kimi-k2.5")  # the same servers, as they are
        assert box.connections["test"].state == "failed"
        await run(pilot, "/profile load kimi-local")  # as `tractui --profile kimi-local` would: started again
        await ready(pilot, app, "demo", "test")
        await run(pilot, "and now?")
        assert "test__sleep" in offered(loopback)
        assert "Traceback" not in screen_text(app)


ORDER_AFTER_A_CRASH = ["test.crash", "test.huge", "failed: the server exited (/tools", "Done.", "It went away."]


async def test_a_call_after_one_its_server_crashed_under_is_answered_without_a_question(tmp_path, loopback):
    """The first call of a round crashes the test server: the second, to the same server, opened a
    consent question for a call that could not run; the request after them offered the dead
    server's tools. The note saying the server failed stood under the whole turn, below the answer
    made without it, instead of where the failure came."""
    from strict_servers import Step, StrictChat

    app = with_servers(tmp_path, loopback, "kimi-local")
    calls = [("test__crash", {}), ("test__huge", {"words": 3})]
    model = loopback.default = StrictChat([Step("Both.", calls=calls), Step("Done.", text="It went away.")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await ready(pilot, app, "demo", "test")
        await type_line(pilot, "crash it, then a long one")
        await wait_for(pilot, lambda: isinstance(app.screen, ConsentScreen), timeout=60)
        app.chat.clock.advance(TYPING_PAUSE)
        await pilot.press("y")
        await wait_for(pilot, lambda: [v.status for v in app.query(ToolCallView)] == ["error", "not_run"], timeout=60)
        await settle(pilot)
        assert not isinstance(app.screen, ConsentScreen)
        assert "not run: the MCP server test failed (the server exited)" in screen_text(app)
        assert "It went away." in screen_text(app) and model.refusals == []
        assert screen_text(app).count("MCP server test failed: the server exited") == 1
        assert offered(loopback) == DEMO_TOOLS
        lines = screen_text(app).splitlines()
        rows = [next(i for i, line in enumerate(lines) if text in line) for text in ORDER_AFTER_A_CRASH]
        assert rows == sorted(rows), lines


async def test_a_profile_loaded_mid_loop_is_said_where_it_took_effect_and_stays_on_retry(tmp_path, loopback):
    """``/profile load`` typed while the reply that calls a tool streams: the call runs and the next
    request goes with the new profile, but the note was drawn under the whole turn, below the
    answer that came from the profile it announced."""
    import asyncio

    from strict_servers import Step, StrictChat

    app = with_servers(tmp_path, loopback, "kimi-local")
    store = ProfileStore()
    store.write(store.load("kimi-local").model_copy(update={"name": "other", "model": "kimi-other"}))
    model = StrictChat([Step("Sleep first.", calls=[("test__sleep", {"seconds": 0})]), Step("Done.", text="Slept.")])
    gate = asyncio.Event()

    def held_after_thinking(request):  # the first reply stops after its thinking until the test sets the gate
        reply = model(request)
        if model.served == 1:
            reply.stall_after = reply.body.rfind(b"data:", 0, reply.body.index(b'"tool_calls"'))
            reply.stall, reply.until = 120, gate
        return reply

    loopback.default = held_after_thinking
    switched = "switched to profile 'other'"
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await ready(pilot, app, "demo", "test")
        await type_line(pilot, "sleep, then say so")
        await wait_for(pilot, lambda: "Sleep first." in screen_text(app), timeout=60)
        await type_line(pilot, "/profile load other")
        await wait_for(pilot, lambda: switched in screen_text(app))
        gate.set()
        await wait_for(pilot, lambda: isinstance(app.screen, ConsentScreen), timeout=60)
        app.chat.clock.advance(TYPING_PAUSE)
        await pilot.press("y")
        await wait_for(pilot, lambda: "Slept." in screen_text(app), timeout=60)
        await settle(pilot)
        lines = screen_text(app).splitlines()

        def row(text: str) -> int:
            return next(i for i, line in enumerate(lines) if text in line)

        assert row("Sleep first.") < row(switched) < row("test.sleep") < row("Done.") < row("Slept.")
        assert [r.json["model"] for r in loopback.requests] == ["kimi-k2.6", "kimi-other"] and model.refusals == []

        await run(pilot, "/retry")  # the reply goes, its note stays: the profile is still the one loaded
        await wait_for(pilot, lambda: "Slept." in screen_text(app), timeout=60)
        assert screen_text(app).count(switched) == 1
