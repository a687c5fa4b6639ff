"""SVG snapshots of the states a user must be able to read at a glance.

Deterministic: a frozen clock, the demo provider at zero pace, loopback
streams that stall at a fixed point, no cursor blink.
"""

from __future__ import annotations

import pytest
from loopback import LoopbackServer, error, sse
from ui_support import build_app, chat_stream, loop_config, settle, stalled, type_line, wait_for

from tractui.core.settings import Settings
from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.thinking import ThinkingView

SIZE = (100, 36)
REASONING = [
    "The user wants to reverse a list. ",
    "Slicing with [::-1] returns a new list; list.reverse() works in place.\n\n",
    "I should show both and say which one copies. ",
]


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))


async def _serve(app, *replies) -> LoopbackServer:
    """A loopback server in the app's own event loop (snap_compare runs the app in a fresh loop)."""
    server = LoopbackServer()
    await server.start()
    for reply in replies:
        server.add(reply)
    conversation = app.conversation
    conversation.switch_profile(loop_config(server), conversation.settings, None)
    app.chat.profile_switched()
    return server


async def _still(pilot) -> None:
    pilot.app.query_one("#input").cursor_blink = False
    await pilot.pause()


def test_thinking_while_streaming(snap_compare, tmp_path):
    app = build_app(tmp_path)

    async def run_before(pilot):
        await _serve(app, stalled(chat_stream(REASONING, [], usage=None, finish=False)))
        await type_line(pilot, "How do I reverse a list in Python?")
        await wait_for(pilot, lambda: any("copies." in v.text for v in app.query(ThinkingView)))
        app.clock.advance(7)
        await app.chat.frames.tick()
        await _still(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_thinking_hidden(snap_compare, tmp_path):
    app = build_app(tmp_path)

    async def run_before(pilot):
        await type_line(pilot, "How do I reverse a list?")
        await settle(pilot)
        await type_line(pilot, "/set reasoning.includeInResponse false")
        await settle(pilot)
        await _still(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_gauge_warning(snap_compare, tmp_path):
    settings = Settings({"context-limit": "2000", "max-tokens": "256"})
    app = build_app(tmp_path, settings=settings)

    async def run_before(pilot):
        await _serve(app, sse(chat_stream(REASONING, ["Use `items[::-1]`."], usage=(1330, 60))))
        await type_line(pilot, "How do I reverse a list?")
        await settle(pilot)
        await _still(pilot)
        assert app.query_one("#footer").has_class("-warning")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_context_overlay(snap_compare, tmp_path):
    app = build_app(tmp_path)

    async def run_before(pilot):
        await type_line(pilot, "How do I reverse a list?")
        await settle(pilot)
        await type_line(pilot, "/context")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_light_theme(snap_compare, tmp_path):
    app = build_app(tmp_path, theme="tractui-light")

    async def run_before(pilot):
        await type_line(pilot, "How do I reverse a list?")
        await settle(pilot)
        await _still(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_inline_error(snap_compare, tmp_path):
    app = build_app(tmp_path, settings=Settings({"retries": "0"}))

    async def run_before(pilot):
        await _serve(app, error(429, {"error": {"message": "Rate limit reached for requests"}}, retry_after=30))
        await type_line(pilot, "Hello?")
        await settle(pilot)
        await _still(pilot)
        assert not app.query(AnswerView)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_queued_message(snap_compare, tmp_path):
    """Messages typed while the reply streams: above the prompt, dim, said to be queued."""
    app = build_app(tmp_path)

    async def run_before(pilot):
        await _serve(app, stalled(chat_stream(REASONING, ["Use slicing: "], usage=None, finish=False)))
        await type_line(pilot, "How do I reverse a list in Python?")
        await wait_for(pilot, lambda: any(a.text == "Use slicing: " for a in app.query(AnswerView)))
        await type_line(pilot, "And a tuple?")
        await type_line(pilot, "Show both\nin one example,\nwith comments\nand the output")
        await _still(pilot)
        assert app.chat.holding

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
