"""The app's writes to hand-written files, as a user makes them: ``/theme``, "always allow" in the
tool consent dialog and ``/profile save`` change their one value, and the comments, blank lines,
key order and unknown keys around it stay, byte for byte."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

from hand_written import CONFIG, PROFILE
from ui_support import FakeClock, build_app, settle, type_line, wait_for

from tractui.config.options import CliOptions
from tractui.config.paths import config_dir
from tractui.config.startup import resolve_startup
from tractui.store.history import HistoryStore
from tractui.ui.app import TractApp
from tractui.ui.launch import _conversation
from tractui.ui.pending import PendingConversation
from tractui.ui.screens.consent import TYPING_PAUSE, ConsentScreen
from tractui.ui.widgets.tool_call import ToolCallView

SIZE = (110, 36)


def notes(app: TractApp) -> list[str]:
    return [str(n.render()) for n in app.query(".note")]


async def run(pilot, line: str) -> None:
    await type_line(pilot, line)
    await settle(pilot)


def started(tmp_path: Path, profile: str | None = None) -> TractApp:
    """The app as ``tractui [--profile PROFILE]`` builds it: config.toml, profiles, its MCP servers."""
    startup = resolve_startup(CliOptions(profile=profile))
    store = HistoryStore(tmp_path / "history.db")
    pending = PendingConversation(
        startup.config, startup.settings, startup.profile_name, lambda: _conversation(store, startup, None)
    )
    return TractApp(pending, notices=startup.notices, clock=FakeClock())


def written(name: str, text: str) -> Path:
    path = config_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def test_theme_changes_the_theme_line_of_a_hand_written_config_and_nothing_else(tmp_path):
    path = written("config.toml", CONFIG)
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/theme tractui-light")
        assert notes(app)[-1] == "Theme: tractui-light (remembered)"
    assert path.read_text() == CONFIG.replace('theme = "tractui-dark"', 'theme = "tractui-light"')


async def test_always_allow_adds_its_line_to_the_servers_table_and_changes_nothing_else(tmp_path):
    hand_written = CONFIG.replace('"python3"', json.dumps(sys.executable))  # the demo server, run for real
    path = written("config.toml", hand_written)
    app = started(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await type_line(pilot, "what is 17 times 23?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConsentScreen), timeout=60)
        app.chat.clock.advance(TYPING_PAUSE)  # the user paused: the next key is an answer
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.chat.streaming, timeout=60)
        await settle(pilot)
        assert app.query_one(ToolCallView).status == "done"
    fingerprint = tomllib.loads(path.read_text())["mcp"]["servers"]["demo"]["allowed"]["multiply"]
    enabled = "enabled = true       # said, though it is the default\n"
    assert path.read_text() == hand_written.replace(enabled, f'{enabled}allowed.multiply = "{fingerprint}"\n')


async def test_profile_save_changes_the_one_setting_in_a_hand_written_profile(tmp_path):
    path = written("profiles/work.toml", PROFILE)
    app = started(tmp_path, "work")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.ready)
        await run(pilot, "/set temperature 0.3")
        await run(pilot, "/profile save")
        assert notes(app)[-1].startswith("saved profile 'work'")
    assert path.read_text() == PROFILE.replace("temperature = 0.7 ", "temperature = 0.3 ")
