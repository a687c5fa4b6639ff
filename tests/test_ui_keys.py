"""Keys: Enter, Shift+Enter / Ctrl+J, Up/Down history, Tab completion, Ctrl+C, Ctrl+P, Ctrl+T."""

from __future__ import annotations

import pytest
from ui_support import FakeClock, build_app, settle, type_line

from tractui.ui.screens.context import ContextScreen
from tractui.ui.widgets.completion import CompletionPopup
from tractui.ui.widgets.message import UserMessage
from tractui.ui.widgets.thinking import ThinkingView

SIZE = (100, 40)


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))


async def test_enter_sends_and_ctrl_j_or_shift_enter_add_lines(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        box = app.query_one("#input")
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        assert box.text == "a\nb\nc"
        await pilot.press("enter")
        await settle(pilot)
        assert [u.text for u in app.query(UserMessage)] == ["a\nb\nc"]
        assert box.text == ""


async def test_up_and_down_walk_the_input_history(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for line in ("first", "second"):
            await type_line(pilot, line)
            await settle(pilot)
        box = app.query_one("#input")
        box.insert("draft")
        await pilot.press("up")
        assert box.text == "second"
        await pilot.press("up")
        assert box.text == "first"
        await pilot.press("down")
        assert box.text == "second"
        await pilot.press("down")
        assert box.text == "draft"


async def test_slash_completion_offers_commands_keys_and_values(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        popup = app.query_one(CompletionPopup)
        box = app.query_one("#input")
        await type_line(pilot, "/se", enter=False)
        assert popup.display and [s.label for s in popup.suggestions] == ["/set", "/sessions"]
        assert popup.suggestions[0].help == "show or change settings"
        await pilot.press("tab")
        assert box.text == "/set "
        box.insert("reasoning.includeInR")
        await pilot.pause()
        await pilot.press("tab")
        assert box.text == "/set reasoning.includeInResponse "
        await pilot.pause()
        assert [s.label for s in popup.suggestions] == ["true", "false"]
        await pilot.press("down", "down", "enter")
        assert box.text == "/set reasoning.includeInResponse false"
        await pilot.press("enter")
        await settle(pilot)
        assert app.settings.get("reasoning.includeInResponse") is False
        assert not popup.display


async def test_ctrl_c_copies_a_selection_and_quits_when_pressed_twice(tmp_path):
    clock = FakeClock()
    app = build_app(tmp_path, clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        box = app.query_one("#input")
        box.insert("copy me")
        box.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "copy me"
        box.load_text("")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        clock.advance(5)  # too late: arms again instead of quitting
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0


async def palette(pilot, command: str) -> None:
    """Run ``command`` from the command palette (Ctrl+P), as a user types it there."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    for char in command:
        await pilot.press(char)
    await pilot.pause(0.3)  # the palette searches after a short delay
    await pilot.press("enter")
    await settle(pilot)


async def test_command_palette_offers_the_slash_commands(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await palette(pilot, "/context")
        assert isinstance(app.screen, ContextScreen)
        await pilot.press("escape")
        await palette(pilot, "/profile")  # it cannot run without saying which: put in the prompt to finish
        assert app.query_one("#input").text == "/profile "
        app.query_one("#input").clear()
        await palette(pilot, "/theme")  # an optional argument: runs at once
        assert str(app.query(".note")[-1].render()).startswith("theme: ") and app.query_one("#input").text == ""


async def test_edit_from_the_palette_gives_the_draft_back_after_esc_or_the_resend(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "original")
        await settle(pilot)
        box = app.query_one("#input")
        for attempt in ("esc", "enter"):
            box.load_text("a draft I am still writing")
            await palette(pilot, "/edit")
            assert app.chat.editing and box.text == "original"
            await palette(pilot, "/edit")  # again: the draft is still the one from before the first
            if attempt == "esc":
                await pilot.press("escape")
            else:
                box.load_text("edited")
                await pilot.press("enter")
            await settle(pilot)
            assert not app.chat.editing and box.text == "a draft I am still writing"
        assert [u.text for u in app.query(UserMessage)] == ["edited"]


async def test_ctrl_t_folds_thinking_to_its_header(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "why?")
        await settle(pilot)
        view = app.query_one(ThinkingView)
        tall = view.region.height
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert view.folded and view.region.height == 1
        assert "(folded)" in str(view.query_one(".thinking-header").render())
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert view.region.height == tall


def notes(app) -> list[str]:
    return [str(n.render()) for n in app.query(".note")]


def typed_at_once(box, text: str) -> None:
    """Post every key of ``text`` (``\\r`` for Enter) to the prompt without waiting: a fast typist."""
    from textual import events

    for char in text:
        key = "enter" if char == "\r" else "space" if char == " " else char
        box.post_message(events.Key(key, None if char == "\r" else char))


async def test_keys_typed_right_after_enter_belong_to_the_next_line(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#input")
        typed_at_once(box, "/set temperature 0.5\r/set retries 2\r")
        await settle(pilot)
        assert app.settings.get("temperature") == 0.5 and app.settings.get("retries") == 2
        assert box.text == ""


def pressed_at_once(box, *keys: str) -> None:
    """Post ``keys`` (Textual's key names) to the prompt without waiting: a fast typist's Up/Down."""
    from textual import events

    for key in keys:
        box.post_message(events.Key(key, None))


async def test_backspace_typed_fast_deletes_where_it_was_typed(tmp_path):
    """Backspace and Delete among characters typed at once act in their place in the burst."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#input")
        for _ in range(3):
            typed_at_once(box, "abcdef")
            pressed_at_once(box, "backspace", "backspace")
            typed_at_once(box, "xy")
            pressed_at_once(box, "backspace")
            typed_at_once(box, "z ")
        pressed_at_once(box, "home", "delete")
        await settle(pilot)
        assert box.text == "bcdxz abcdxz abcdxz "


async def test_lines_typed_fast_after_enter_with_the_completion_list_open_run_each_as_typed(tmp_path):
    """Enter with the list open (``all`` also begins ``allButLast``) sends the text as typed and
    empties the prompt then, not once the screen has looked at the list: what comes after is the
    next line (the screen's view of the list may be older or newer than the text at Enter)."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#input")
        await type_line(pilot, "/set reasoning.stripFromContext al", enter=False)
        assert app.query_one(CompletionPopup).display  # all, allButLast
        typed_at_once(box, "l\r/set retries 2\r/set reasoning.includeInContext true\r/new\rhello w\r")
        await settle(pilot)
        assert not [n for n in notes(app) if "bad value" in n or "unknown command" in n]
        assert app.settings.get("reasoning.stripFromContext") == "all" and app.settings.get("retries") == 2
        assert app.settings.get("reasoning.includeInContext") is True
        assert [u.text for u in app.query(UserMessage)] == ["hello w"]  # after /new, which cleared the view
        assert box.text == ""


async def test_up_down_and_enter_typed_fast_pick_from_the_list_for_the_text_as_typed(tmp_path):
    """Up/Down and Enter choose from the list for the text as it is when each key comes, so a
    suggestion picked in a burst is the one the keys pick, and the next line stays apart."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#input")
        await type_line(pilot, "/set reasoning.stripFromContext ", enter=False)
        assert app.query_one(CompletionPopup).display  # all, allButLast, none
        pressed_at_once(box, "down", "down", "enter", "enter")
        typed_at_once(box, "/set retries 2\r/set reasoning.includeInR")
        pressed_at_once(box, "tab", "up")
        typed_at_once(box, "\r\r/new")
        await settle(pilot)
        assert not [n for n in notes(app) if "bad value" in n or "unknown command" in n]
        assert app.settings.get("reasoning.stripFromContext") == "allButLast" and app.settings.get("retries") == 2
        assert app.settings.get("reasoning.includeInResponse") is False  # Tab, then Up to the last row
        assert box.text == "/new" and not app.query_one(CompletionPopup).display


async def test_a_message_typed_ahead_while_a_reply_streams_is_kept_whole(tmp_path, loopback):
    from ui_support import chat_stream, loop_config, stalled, wait_for

    from tractui.ui.widgets.answer import AnswerView

    loopback.add(stalled(chat_stream(["pondering"], ["Half"], usage=None, finish=False)))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "first")
        await wait_for(pilot, lambda: any(a.text == "Half" for a in app.query(AnswerView)))
        box = app.query_one("#input")
        typed_at_once(box, "too soon\rand more")
        await wait_for(pilot, lambda: app.chat.holding and box.text == "and more")  # the line queued, the rest typed
        await pilot.press("escape")
        await settle(pilot)
        # nothing typed is lost and it stays in order: the queued line back in front of the rest
        assert box.text == "too soon\n\nand more"


async def test_the_prompt_keeps_the_keys_whatever_is_clicked_or_tabbed(tmp_path):
    from tractui.ui.widgets.thinking import ThinkingView

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "hello")
        await settle(pilot)
        box = app.query_one("#input")
        await pilot.press("tab")  # nothing to complete
        assert box.has_focus
        await pilot.click(".thinking-header")  # folds the thinking
        await pilot.click("#chat", offset=(5, 2))
        await pilot.press(*"/ses")
        assert box.has_focus and box.text == "/ses"
        assert app.query_one(ThinkingView).folded
        app.set_focus(None)  # however focus went (a dialog closed, a widget took it)
        await pilot.press("x")
        assert box.has_focus and box.text == "/sesx"  # the key is in the prompt, not lost
        app.set_focus(None)
        await pilot.press("escape")
        assert box.has_focus


async def test_an_unsent_draft_survives_a_kill_and_comes_back(tmp_path):
    from ui_support import wait_for

    from tractui.ui.draft import draft_path

    draft = "a long thought I have not sent yet\nwith a second line"
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        app.query_one("#input").insert(draft)
        await wait_for(pilot, lambda: draft_path().exists())  # written a moment after the typing stops
        assert draft_path().read_text() == draft and draft_path().stat().st_mode & 0o777 == 0o600
        await pilot.press("ctrl+c")
        assert "your draft is kept for next time" in str(app.screen.query_one("Toast").render())
    again = build_app(tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.query_one("#input").text == draft
        assert any("unsent draft" in str(n.render()) for n in again.query(".note"))
        await pilot.press("enter")  # sent: no draft is left behind
        await settle(pilot)
        await wait_for(pilot, lambda: not draft_path().exists())


async def test_a_quit_keeps_what_the_prompt_holds_though_the_screen_has_not_heard_of_it(tmp_path):
    """The prompt paints a key at once; the screen hears of the change from a message, which a
    quit right then drops with the screen's queue. The draft is the prompt's text as it ends."""
    from tractui.ui.draft import draft_path

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#input").insert("typed just before the quit")  # its Changed message not handled yet
        await app.chat.aclose()
        assert draft_path().read_text() == "typed just before the quit"


async def test_a_key_typed_while_a_reply_streams_is_drawn_at_once_as_a_whole_screen_draw_shows_it(
    tmp_path, loopback, monkeypatch
):
    """The prompt paints a typed key itself (``internals.paint_now``) instead of waiting for the
    screen's next update, which waits behind the streaming reply's layout. A key it paints shows
    in an update that draws prompt rows only (one that comes while a layout is pending, which
    could move the prompt, waits for the next update: on a loaded machine, a few); those rows are
    then what drawing the whole screen at once shows; and a terminal fed every update ends as
    the whole screen drawn at once."""
    import pyte
    from loopback import sse
    from ui_support import chat_stream, loop_config, wait_for

    from tractui.ui import internals
    from tractui.ui.widgets import input_box

    width, height = SIZE
    body = chat_stream([], [f"Paragraph {i}: a few words that make the answer grow.\n\n" for i in range(150)])
    loopback.add(sse(body, rate=len(body) / 3))  # three seconds of reply
    app = build_app(tmp_path, config=loop_config(loopback))

    def drawn_whole() -> pyte.Screen:
        whole = pyte.Screen(width, height)
        pyte.Stream(whole).feed(internals.frame_output(app.screen))
        return whole

    def cells(screen: pyte.Screen, rows: range) -> list[list[object]]:
        return [[screen.buffer[y][x] for x in range(width)] for y in rows]

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#input")
        terminal = drawn_whole()
        feed = pyte.Stream(terminal).feed
        echoes: list[
            tuple[bool, bool, bool]
        ] = []  # per key shown: painted at once?, prompt rows only?, as drawn whole?
        at_once = False

        def paint_now(widget) -> bool:
            nonlocal at_once
            at_once = True
            try:
                return internals.paint_now(widget)
            finally:
                at_once = False

        monkeypatch.setattr(input_box, "paint_now", paint_now)

        def painted(screen, update) -> None:
            if update is None:
                return
            rows = range(box.region.y, box.region.bottom)
            before = sum(terminal.display[y].count("z") for y in rows)
            feed(internals.update_output(app, update))
            if sum(terminal.display[y].count("z") for y in rows) > before:
                outside = internals.painted_rows(update, 0, rows.start) + internals.painted_rows(
                    update, rows.stop, height
                )
                echoes.append((at_once, not any(outside), cells(terminal, rows) == cells(drawn_whole(), rows)))

        internals.watch_painted(app, painted)
        await type_line(pilot, "go")
        await wait_for(pilot, lambda: app.chat.renderer is not None)
        while app.chat.renderer is not None and len(echoes) < 12:
            shown = len(echoes)
            internals.send_key(app, "z")
            await wait_for(pilot, lambda shown=shown: len(echoes) > shown)
            await pilot.pause(0.05)
        assert sum(now for now, _, _ in echoes) >= 3, "keys were painted at once while the reply streamed"
        assert all(alone for now, alone, _ in echoes if now), "a key painted at once was drawn with the reply's frame"
        assert all(same for _, _, same in echoes)
        await settle(pilot)
        await pilot.pause(0.2)
        assert cells(terminal, range(height)) == cells(drawn_whole(), range(height))
        assert box.text == "z" * len(echoes)
