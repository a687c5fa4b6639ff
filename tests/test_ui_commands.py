"""Every slash command, typed into the prompt of a running app."""

from __future__ import annotations

import json
import tomllib

import pytest
from ui_support import build_app, screen_text, settle, type_line, wait_for

from tractui.ui import format as fmt
from tractui.ui.app import TractApp
from tractui.ui.screens.context import ContextScreen
from tractui.ui.screens.help import HelpScreen
from tractui.ui.screens.sessions import SessionsScreen
from tractui.ui.widgets.footer import GaugeFooter
from tractui.ui.widgets.message import AssistantMessage, UserMessage

SIZE = (100, 40)


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)


def notes(app) -> list[str]:
    return [str(n.render()) for n in app.query(".note")]


async def run(pilot, line: str) -> None:
    await type_line(pilot, line)
    await settle(pilot)


async def test_help_set_and_unknown_commands(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/help")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await run(pilot, "/set")
        assert "reasoning.includeInResponse" in notes(app)[-1]
        await run(pilot, "/set temperature 9")
        assert "temperature" in notes(app)[-1] and app.settings.get("temperature") is None
        await run(pilot, "/sett")
        assert notes(app)[-1] == "unknown command /sett; did you mean /set?"


async def test_help_on_a_short_terminal_keeps_its_close_hint_in_view_and_scrolls(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await run(pilot, "/help")
        shown = screen_text(app)
        assert "Esc to close" in shown and "Ctrl+O" not in shown  # the keys are further down
        for _ in range(40):
            await pilot.press("down")
        await settle(pilot)
        assert "Ctrl+O" in screen_text(app) and "Esc to close" in screen_text(app)


async def test_toasts_stay_clear_of_the_prompt(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+c")  # "Press Ctrl+C again to quit"
        await settle(pilot)
        toast = app.screen.query_one("Toast")  # by its type's name: Textual does not export it
        prompt = app.query_one("#input").region
        assert toast.region.height and toast.region.bottom <= prompt.y - 3


async def test_the_palette_offers_one_theme_command(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"theme")
        await pilot.pause(0.5)
        await settle(pilot)
        entries = [line.strip() for line in screen_text(app).splitlines() if line.strip() in ("Theme", "/theme")]
        assert entries == ["/theme"]  # Textual's picker would not remember the choice


async def test_the_palettes_own_commands_are_the_ones_that_work_here(tmp_path):
    """Textual's Maximize blew the prompt up over the conversation, Screenshot said nothing of where its
    file went, and Keys opened a panel of the prompt's editing keys that Esc did not close (until
    2026-11-28): the first two are gone, Keys opens tractui's help."""
    from tractui.ui.screens.help import HelpScreen

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Quit" in titles and "Keys" in titles
        assert not {"Theme", "Maximize", "Minimize", "Screenshot"} & set(titles)
        keys = next(c for c in app.get_system_commands(app.screen) if c.title == "Keys")
        await keys.callback()
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)


async def test_ctrl_o_with_no_tool_call_says_so(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")  # it did nothing a user could see (until 2026-11-28)
        await wait_for(pilot, lambda: notes(app)[-1:] == ["no tool call on screen to open (Ctrl+O opens the newest)"])


async def test_ctrl_t_with_no_thinking_on_screen_says_what_it_did(tmp_path):
    """It said nothing (until 2026-11-28), yet thinking drawn after it (an older message scrolled
    to, the next reply) comes folded: the note says so, and a second press undoes it."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+t")
        await wait_for(
            pilot, lambda: notes(app)[-1:] == ["no thinking on screen; thinking drawn from now on comes folded"]
        )
        assert app.chat.thinking_folded
        await pilot.press("ctrl+t")
        await wait_for(
            pilot, lambda: notes(app)[-1:] == ["no thinking on screen; thinking drawn from now on comes unfolded"]
        )
        assert not app.chat.thinking_folded


async def test_hiding_thinking_applies_to_past_and_future_replies(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "one")
        await run(pilot, "/set reasoning.includeInResponse false")
        assert all(
            not v.display or not v.visible or app.query_one("#chat").has_class("-hide-thinking")
            for v in app.query(".thinking")
        )
        assert all(v.region.height == 0 for v in app.query(".thinking"))
        await run(pilot, "two")
        assert len(app.query(".thinking")) == 2 and all(v.region.height == 0 for v in app.query(".thinking"))
        await run(pilot, "/set reasoning.includeInResponse true")
        assert all(v.region.height > 0 for v in app.query(".thinking"))


async def test_hiding_thinking_keeps_the_reading_position(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for word in ("one", "two", "three", "four", "five", "six", "seven"):
            await run(pilot, word)
        chat = app.query_one("#chat")
        users = list(app.query(UserMessage))
        chat.scroll_to(y=users[3].virtual_region.y - 1, animate=False, immediate=True)
        await pilot.pause()
        place = chat.reading_place()
        assert place[-1][0] is users[3] and place[-1][1] == 1
        app.settings.set("reasoning.includeInResponse", "false")
        await settle(pilot)
        assert chat.reading_place() == place


async def test_profiles_model_and_footer(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/set temperature 0.5")
        await run(pilot, "/profile save mine")
        assert (tmp_path / "config" / "profiles" / "mine.toml").exists()
        await run(pilot, "/profile list")
        assert "mine" in notes(app)[-1]
        await run(pilot, "/model demo-2")
        assert app.conversation.config.model == "demo-2"
        assert "demo-2" in str(app.query_one("#footer-where").render())
        await run(pilot, "/profile load mine")
        assert app.conversation.profile_name == "mine" and app.conversation.config.model == "demo"
        assert "mine" in str(app.query_one("#footer-where").render())
        await run(pilot, "/profile load nosuch")
        assert "nosuch" in notes(app)[-1] and app.conversation.profile_name == "mine"


async def test_context_overlay_shows_breakdown(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "hello")
        await run(pilot, "/context")
        assert isinstance(app.screen, ContextScreen)
        text = screen_text(app)
        for word in ("messages", "thinking", "system", "output reserve", "free", "basis: last call read"):
            assert word in text
        reading = app.conversation.gauge()
        label = f"{reading.effective} / {fmt.tokens(reading.usable)} · compacts at {fmt.tokens(reading.threshold)}"
        assert label in text and "┆ marks" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, ContextScreen)


async def test_context_overlay_on_a_small_terminal_says_how_to_close_and_scrolls_to_the_rest(tmp_path):
    """At 50×20 its last lines, "Esc to close" among them, were cut off (until 2026-11-28)."""
    app = build_app(tmp_path)
    async with app.run_test(size=(50, 20)) as pilot:
        await run(pilot, "hello")
        await run(pilot, "/context")
        assert isinstance(app.screen, ContextScreen)
        assert "Esc to close" in screen_text(app)
        box = app.screen.query_one("#context-box")
        assert box.max_scroll_y > 0  # more than fits: it scrolls
        box.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert "basis: last call read" in screen_text(app) and "Esc to close" in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, ContextScreen)


@pytest.mark.parametrize("overlay", ["/context", "/help"])
async def test_characters_typed_over_an_overlay_close_it_and_go_into_the_prompt(tmp_path, overlay):
    """They went nowhere (until 2026-11-28); its own keys (q, Esc) still only close it."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "hello")
        await run(pilot, overlay)
        assert isinstance(app.screen, (ContextScreen, HelpScreen))
        await pilot.press("q")
        await settle(pilot)
        assert not isinstance(app.screen, (ContextScreen, HelpScreen)) and app.query_one("#input").text == ""
        await run(pilot, overlay)
        await pilot.press(*"why?")
        await settle(pilot)
        assert not isinstance(app.screen, (ContextScreen, HelpScreen))
        assert app.query_one("#input").text == "why?"


@pytest.mark.parametrize("overlay", ["/context", "/help"])
@pytest.mark.parametrize(
    ("burst", "typed"),
    [("ab", "ab"), ("你好", "你好"), ("\x1bCxyz", "Cxyz"), ("q\x1bz", "z"), ("\x1b\x1bok\x1b", "ok")],
)
async def test_a_burst_of_keys_over_an_overlay_closes_it_once_and_types_the_rest(tmp_path, overlay, burst, typed):
    """Keys already on their way to it when it closed (two characters at once, an IME's text)
    each closed it again, and the second close took the chat screen: a traceback (until
    2026-11-28). Now they go on to the prompt in order, but for its own closing keys."""
    from textual import events

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "hello")
        await run(pilot, overlay)
        overlay_screen = app.screen
        assert isinstance(overlay_screen, (ContextScreen, HelpScreen))
        for char in burst:  # all in its queue before it handles the first
            key = "escape" if char == "\x1b" else char
            overlay_screen.post_message(events.Key(key, None if char == "\x1b" else char))
        await settle(pilot)
        assert app.screen is app.chat and app.is_running
        assert app.query_one("#input").text == typed


async def test_an_enter_typed_after_characters_over_context_sends_them(tmp_path):
    """``Esc h i Enter`` in one burst: the Enter, a closing key of /context, was dropped as one
    once the overlay had closed, and ``hi`` stayed unsent in the prompt (2026-11-28)."""
    from textual import events

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "hello")
        await run(pilot, "/context")
        overlay_screen = app.screen
        for key, char in [("escape", None), ("h", "h"), ("i", "i"), ("enter", "\r")]:
            overlay_screen.post_message(events.Key(key, char))
        await settle(pilot)
        assert app.screen is app.chat and app.query_one("#input").text == ""
        assert "hi" in screen_text(app)


async def test_new_sessions_and_resume(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "first session question")
        first = app.conversation.session_id
        await run(pilot, "/new")
        assert app.conversation.session_id is None and not app.query(UserMessage)
        await run(pilot, "second")
        await run(pilot, "/sessions")
        assert isinstance(app.screen, SessionsScreen)
        picker = app.screen.query_one("#sessions-list")
        index = next(i for i, s in enumerate(app.screen.sessions) if s.id == first)
        picker.highlighted = index
        await pilot.press("enter")
        await settle(pilot)
        assert app.conversation.session_id == first
        assert [str(u.render()) for u in app.query(UserMessage)] == ["first session question"]
        assert app.query(".thinking")  # history shows its thinking too


async def test_a_session_opened_shows_its_own_totals_before_its_earlier_messages_are_drawn(tmp_path, monkeypatch):
    """The footer kept the previous session's totals until a batch of the opened one's earlier
    messages was drawn (seconds on a long session)."""
    import asyncio

    from tractui.ui.screens.chat import ChatScreen

    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "first session question")
        first, totals = app.conversation.session_id, app.chat.totals
        await run(pilot, "/new")
        assert app.chat.totals != totals  # a new session: nothing yet
        held = asyncio.Event()
        drawing = ChatScreen.show_earlier

        async def slow_earlier(self, **kwargs):
            await held.wait()
            await drawing(self, **kwargs)

        monkeypatch.setattr(ChatScreen, "show_earlier", slow_earlier)
        app.chat.run_worker(app.chat.host._open_session(first))
        try:
            await wait_for(pilot, lambda: app.conversation.session_id == first and app.query(UserMessage))
            await wait_for(pilot, lambda: app.chat.totals == totals)  # while the earlier messages are held
        finally:
            held.set()
        await settle(pilot)


async def _resume(pilot, app, session_id):
    await run(pilot, "/sessions")
    picker = app.screen.query_one("#sessions-list")
    picker.highlighted = next(i for i, s in enumerate(app.screen.sessions) if s.id == session_id)
    await pilot.press("enter")
    await settle(pilot)


async def test_a_resumed_session_goes_on_with_its_own_profile(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/model demo-2")
        await run(pilot, "/profile save mine")
        await run(pilot, "/model demo")
        await run(pilot, "/profile save other")
        await run(pilot, "/profile load mine")
        await run(pilot, "asked under mine")
        first = app.conversation.session_id
        await run(pilot, "/new")
        await run(pilot, "/profile load other")
        await run(pilot, "asked under other")
        await _resume(pilot, app, first)
        assert app.conversation.profile_name == "mine" and app.conversation.config.model == "demo-2"
        assert "switched to profile 'mine', which this session's replies came from" in notes(app)[-1]
        assert "mine" in str(app.query_one("#footer-where").render())

        (tmp_path / "config" / "profiles" / "mine.toml").write_text("provider = [broken")
        await run(pilot, "/profile load other")
        await _resume(pilot, app, first)
        assert app.conversation.profile_name == "other"
        assert "profile 'mine', which does not load" in notes(app)[-1] and "staying on other" in notes(app)[-1]


async def test_retry_edit_copy_clear(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "original")
        await run(pilot, "/retry")
        assert len(app.query(AssistantMessage)) == 1
        assert len(app.conversation.store.siblings(app.conversation.history()[-1].id)) >= 1
        await run(pilot, "/edit")
        assert app.query_one("#input").text == "original"
        app.query_one("#input").load_text("edited")
        await pilot.press("enter")
        await settle(pilot)
        assert [u.text for u in app.query(UserMessage)] == ["edited"]
        assert app.conversation.history()[0].content.text == "edited"
        await run(pilot, "/copy")
        assert app.clipboard == app.conversation.history()[-1].content.text and "edited" in app.clipboard
        await run(pilot, "/clear")
        assert not app.query(UserMessage) and app.conversation.history()


async def test_retry_keeps_the_notes_that_came_after_the_reply(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "original")
        await run(pilot, "/model demo-2")
        switched = notes(app)[-1]
        assert "demo-2" in switched
        await run(pilot, "/retry")
        assert switched in notes(app) and len(app.query(AssistantMessage)) == 1
        chat = list(app.query_one("#chat").children)
        assert chat.index(app.query_one(AssistantMessage)) > chat.index(app.query(".note")[-1])


async def test_a_note_while_reading_further_up_shows_the_new_content_bar(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for word in ("one", "two", "three", "four"):
            await run(pilot, word)
        chat = app.query_one("#chat")
        chat.scroll_to(y=0, animate=False, immediate=True)
        await settle(pilot)
        assert not app.query_one("#new-below").display
        await run(pilot, "/set temperature 0.3")
        assert app.query_one("#new-below").display


async def test_clear_while_reading_further_up_leaves_no_new_content_bar(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for word in ("one", "two", "three", "four"):
            await run(pilot, word)
        app.query_one("#chat").scroll_to(y=0, animate=False, immediate=True)
        await settle(pilot)
        await run(pilot, "/clear")
        assert not app.query_one("#new-below").display and app.query_one("#chat").following


async def test_export_theme_compact_quit(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/export")
        assert "nothing to export" in notes(app)[-1]
        await run(pilot, "exported words")
        await run(pilot, "/export md out.md")
        assert "exported words" in (tmp_path / "out.md").read_text()
        await run(pilot, "/export out.json")  # a PATH alone: its format from its name
        assert json.loads((tmp_path / "out.json").read_text())
        await run(pilot, "/export ./notes.txt")
        assert "exported words" in (tmp_path / "notes.txt").read_text() and not notes(app)[-1].startswith("unknown")
        await run(pilot, "/export pdf")
        assert notes(app)[-1] == "unknown export format 'pdf': md or json"
        await run(pilot, "/export json")
        exported = next((tmp_path / "data" / "exports").glob("tractui-*.json"))
        assert json.loads(exported.read_text()) and str(exported) in notes(app)[-1]
        assert not list(tmp_path.glob("tractui-*"))  # never into the folder the app runs in
        await run(pilot, "/theme tractui-light")
        assert app.theme == "tractui-light"
        assert tomllib.loads((tmp_path / "config" / "config.toml").read_text())["theme"] == "tractui-light"
        await run(pilot, "/theme tractui-lite")
        assert notes(app)[-1] == "unknown theme 'tractui-lite'; did you mean tractui-light?"
        await run(pilot, "/compact")
        assert notes(app)[-1]  # a result line: compacted, or why not
        await run(pilot, "/quit")
    assert app.return_value == 0


async def test_gauge_turns_warning_then_error_near_the_threshold(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "some words to fill the context a little")
        footer = app.query_one(GaugeFooter)
        assert footer.level == "ok"
        app.settings.set("context-limit", "256")
        app.chat.refresh_gauge()
        reading = footer.reading
        app.settings.set("compression-threshold", f"{reading.effective / (0.95 * reading.usable):.4f}")
        app.chat.refresh_gauge()
        assert footer.level == "warning" and footer.has_class("-warning")
        app.settings.set("compression-threshold", "0.1")
        app.chat.refresh_gauge()
        assert footer.level == "error" and footer.has_class("-error")


async def test_export_when_the_exports_folder_is_a_file_is_one_line_and_changes_nothing(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "exported words")
        exports = tmp_path / "data" / "exports"
        exports.parent.mkdir(parents=True, exist_ok=True)
        exports.write_text("not a folder")
        await run(pilot, "/export")
        assert notes(app)[-1].startswith(f"cannot write {exports}")
        assert exports.read_text() == "not a folder" and app.is_running


def slow_models(tmp_path, loopback, stall: float) -> TractApp:
    """The app on a loopback endpoint whose model list (loop-model, big-one) takes ``stall`` seconds."""
    import dataclasses

    from loopback import json_body
    from ui_support import loop_config

    listed = json_body({"data": [{"id": "loop-model"}, {"id": "big-one"}]})
    slow = dataclasses.replace(listed, stall_after=5, stall=stall)
    loopback.default = lambda request: slow
    return build_app(tmp_path, config=loop_config(loopback))


async def test_keys_in_the_model_list_do_not_start_its_fetch_again(tmp_path, loopback):
    """A slow endpoint: each completion key asked for the list again, cancelling the fetch under
    way, so on a slow server the ids never came while the user kept pressing keys."""
    app = slow_models(tmp_path, loopback, 1.5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"/model ")
        await pilot.press("down", "up", "down", "tab", "up")
        await wait_for(pilot, lambda: len(app.chat.host.known_models) == 2, timeout=20)
        assert len([r for r in loopback.requests if r.path.endswith("/models")]) == 1


async def test_the_model_list_shows_the_ids_once_they_come_with_no_key_pressed(tmp_path, loopback):
    """The list for "/model " stayed empty until the next key (until 2026-11-28): it is drawn again
    when the server's ids arrive."""
    from tractui.ui.widgets.completion import CompletionPopup

    app = slow_models(tmp_path, loopback, 0.5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"/model ")
        await wait_for(pilot, lambda: len(app.chat.host.known_models) == 2, timeout=20)
        await wait_for(pilot, lambda: "big-one" in screen_text(app))
        assert app.query_one(CompletionPopup).display


async def test_model_lists_what_the_server_offers_and_says_so_when_it_cannot(tmp_path, loopback):
    from loopback import json_body
    from ui_support import loop_config

    from tractui.providers.transport import ProviderConfig

    loopback.add(json_body({"data": [{"id": "loop-model"}, {"id": "big-one", "context_length": 1048576}]}))
    app = build_app(tmp_path, config=loop_config(loopback))
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/model")
        listed = notes(app)[-1]
        assert "the server lists 2" in listed and "* loop-model" in listed and "1,048,576-token window" in listed
        assert "loop-model  window not listed" in listed  # it said just "model"
        await run(pilot, "/model big-one")
        assert app.conversation.config.model == "big-one" and app.settings.get("context-limit") == 1048576
        assert len([r for r in loopback.requests if r.path.endswith("/models")]) == 1  # fetched once
    down = ProviderConfig("openai", "m", base_url="http://127.0.0.1:9/v1", api_key_env="")
    app = build_app(tmp_path, config=down)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/model")
        assert notes(app)[-1].startswith("model: m (provider openai); the server's list cannot be had (cannot reach")
        await run(pilot, "/model typed-id")
        assert app.conversation.config.model == "typed-id"  # offline, a typed id is still taken


async def test_the_footer_says_when_the_active_profile_is_deleted(tmp_path):
    """Its settings stay in use, so its name stays, marked: by /profile delete or by hand."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/set temperature 0.5")
        await run(pilot, "/profile save mine")
        await run(pilot, "/profile load mine")
        assert str(app.query_one("#footer-where").render()) == "demo · mine"
        await run(pilot, "/profile delete mine")
        assert str(app.query_one("#footer-where").render()) == "demo · mine (deleted)"
        assert app.conversation.settings.get("temperature") == 0.5
        await run(pilot, "/profile save")  # the session's settings, written back under its name
        assert str(app.query_one("#footer-where").render()) == "demo · mine"
        (tmp_path / "config" / "profiles" / "mine.toml").unlink()
        await run(pilot, "/set temperature 0.6")
        assert str(app.query_one("#footer-where").render()) == "demo · mine (deleted)"


async def test_a_deleted_profile_is_marked_though_a_shipped_one_of_its_name_is_back(tmp_path):
    """The settings in use are the deleted file's, not the shipped profile's that it hid."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/set temperature 0.5")
        await run(pilot, "/profile save demo")
        await run(pilot, "/profile load demo")
        await run(pilot, "/profile delete demo")
        assert "shipped profile of that name is visible again" in notes(app)[-1]
        assert str(app.query_one("#footer-where").render()) == "demo · demo (deleted)"
