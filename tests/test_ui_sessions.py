"""The ``/sessions`` dialog in a running app: search, open, delete, on a real SQLite file."""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList
from ui_support import build_app, screen_text, settle, terminal_sends, type_line

from tractui.core.content import Content
from tractui.ui.app import TractApp
from tractui.ui.screens.sessions import SessionsScreen
from tractui.ui.widgets.message import UserMessage

SIZE = (100, 40)
TITLES = ("fix the parser", "lunch plans", "Parser speed-up", "rate 50% off", "trip to Lyon")


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)


def _app(tmp_path) -> tuple[TractApp, dict[str, str]]:
    """An app in the session "lunch plans", beside the others of ``TITLES`` (the last the newest)."""
    app = build_app(tmp_path)
    store = app.conversation.store
    ids = {}
    for title in TITLES:
        ids[title] = store.create_session()
        store.append(ids[title], "user", Content.human(title))
    app.conversation.open_session(ids["lunch plans"])
    return app, ids


async def _open(pilot) -> SessionsScreen:
    await type_line(pilot, "/sessions")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionsScreen)
    return screen


def _listed(screen: SessionsScreen) -> list[str]:
    return [info.title for info in screen.sessions]


def _highlighted(screen: SessionsScreen) -> str:
    return screen.sessions[screen.query_one(OptionList).highlighted].title


def _status(screen: SessionsScreen) -> str:
    return screen.said if screen.query_one("#sessions-status").display else ""


async def test_typing_filters_the_list_and_an_empty_result_says_so(tmp_path):
    app, _ = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        assert screen.focused is screen.query_one(Input)
        assert _listed(screen) == list(reversed(TITLES))
        await pilot.press(*"PARSER")
        await settle(pilot)
        assert _listed(screen) == ["Parser speed-up", "fix the parser"]
        await pilot.press(*"xyz")
        await settle(pilot)
        assert _listed(screen) == [] and _status(screen) == "no session matches 'PARSERxyz'"
        assert "no session matches 'PARSERxyz'" in screen_text(app)
        for _ in range(9):
            await pilot.press("backspace")
        await pilot.press(*"50%")
        await settle(pilot)
        assert _listed(screen) == ["rate 50% off"] and _status(screen) == ""


async def test_every_character_is_search_text_even_the_dialogs_letters(tmp_path):
    app, _ = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press(*"yon q")
        await settle(pilot)
        assert screen.query_one(Input).value == "yon q" and isinstance(app.screen, SessionsScreen)
        await pilot.press("backspace", "backspace")
        await settle(pilot)
        assert _listed(screen) == ["trip to Lyon"]


async def test_the_current_session_is_marked(tmp_path):
    app, _ = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        rows = [
            line
            for line in screen_text(app).splitlines()
            if "│" in line and ("lunch plans" in line or "trip to Lyon" in line)
        ]
        assert len(rows) == 2
        assert "• " in rows[1] and "•" not in rows[0]  # "trip to Lyon" (newest) first, then the current one


async def test_up_down_and_enter_open_the_highlighted_session_while_the_search_keeps_focus(tmp_path):
    app, ids = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press(*"p")  # parser ×2, lunch plans, trip: every title but "rate 50% off"
        await settle(pilot)
        assert _listed(screen) == ["trip to Lyon", "Parser speed-up", "lunch plans", "fix the parser"]
        await pilot.press("down", "down", "down", "up")
        await settle(pilot)
        assert _highlighted(screen) == "lunch plans" and screen.focused is screen.query_one(Input)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, SessionsScreen)
        assert app.conversation.session_id == ids["fix the parser"]
        assert [str(u.render()) for u in app.query(UserMessage)] == ["fix the parser"]


async def test_esc_closes_and_leaves_the_session_as_it_was(tmp_path):
    app, ids = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press(*"trip", "escape")
        await settle(pilot)
        assert not isinstance(app.screen, SessionsScreen) and app.conversation.session_id == ids["lunch plans"]


@pytest.mark.parametrize("yes", ["y", "enter"])
async def test_ctrl_d_and_yes_deletes_the_highlighted_session(tmp_path, yes):
    app, ids = _app(tmp_path)
    store = app.conversation.store
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press("down", "ctrl+d")  # "rate 50% off"
        await settle(pilot)
        assert _status(screen).startswith("delete 'rate 50% off' with all its messages?")
        assert screen.query_one(Input).value == ""  # Ctrl+D is the dialog's, not the box's
        await pilot.press(yes)
        await settle(pilot)
        assert store.session(ids["rate 50% off"]) is None and screen.query_one(Input).value == ""
        assert _listed(screen) == ["trip to Lyon", "Parser speed-up", "lunch plans", "fix the parser"]
        assert _highlighted(screen) == "Parser speed-up" and _status(screen) == "deleted 'rate 50% off'"
        assert isinstance(app.screen, SessionsScreen)  # still open, to go on


@pytest.mark.parametrize("no", ["n", "escape"])
async def test_ctrl_d_and_no_keeps_the_session(tmp_path, no):
    app, ids = _app(tmp_path)
    store = app.conversation.store
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press("ctrl+d", no)
        await settle(pilot)
        assert store.session(ids["trip to Lyon"]) is not None and _status(screen) == "not deleted"
        assert isinstance(app.screen, SessionsScreen) and screen.query_one(Input).value == ""
        await pilot.press("y")  # no question asked any more: a letter to search for
        await settle(pilot)
        assert store.session(ids["trip to Lyon"]) is not None and screen.query_one(Input).value == "y"


async def test_typing_on_after_ctrl_d_is_a_no(tmp_path):
    app, ids = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press("ctrl+d", "t", "y")
        await settle(pilot)
        assert screen.query_one(Input).value == "ty" and screen.doomed is None
        assert app.conversation.store.session(ids["trip to Lyon"]) is not None


async def test_the_current_session_is_not_deleted(tmp_path):
    app, ids = _app(tmp_path)
    store = app.conversation.store
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press(*"lunch", "ctrl+d")
        await settle(pilot)
        assert _status(screen) == "this is the session you are in; it cannot be deleted (/new first)"
        await pilot.press("y")
        await settle(pilot)
        assert store.session(ids["lunch plans"]) is not None and screen.query_one(Input).value == "lunchy"


async def test_moving_on_after_ctrl_d_is_a_no(tmp_path):
    app, ids = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press("ctrl+d", "down", "y")
        await settle(pilot)
        assert screen.doomed is None and screen.query_one(Input).value == "y"
        assert app.conversation.store.session(ids["trip to Lyon"]) is not None


async def test_a_session_open_in_another_window_is_not_deleted(tmp_path):
    """Deleting it left that window failing every send ("free some space") until 2026-11-28."""
    from tractui.store.history import HistoryStore

    app, ids = _app(tmp_path)
    store = app.conversation.store
    other = HistoryStore(store.path)  # another tractui, in "trip to Lyon"
    other.hold(ids["trip to Lyon"])
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = await _open(pilot)
            await pilot.press("ctrl+d", "y")
            await settle(pilot)
            assert _status(screen).startswith(f"session '{ids['trip to Lyon'][:8]}' is open in another tractui window")
            assert store.session(ids["trip to Lyon"]) is not None and _listed(screen)[0] == "trip to Lyon"
            other.hold(None)  # it moved on (/new): now it goes
            await pilot.press("ctrl+d", "y")
            await settle(pilot)
            assert store.session(ids["trip to Lyon"]) is None and _status(screen) == "deleted 'trip to Lyon'"
    finally:
        other.close()


@pytest.mark.parametrize(
    ("burst", "typed"), [("\x7fd", "abd"), ("d\x7f\x7fx", "abx"), ("\x1b[Dx", "abxc"), ("\x1b[Hx", "xabc")]
)
async def test_backspace_in_a_burst_of_keys_deletes_where_it_was_typed(tmp_path, burst, typed):
    """Backspace, a binding of the box, ran once the key had gone up to the app, after the
    characters typed behind it: ``BSpace d`` left ``abc``, the ``d`` deleted."""
    app, _ = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        await pilot.press(*"abc")
        terminal_sends(app, burst)
        await settle(pilot)
        assert screen.query_one(Input).value == typed
