"""The app drawn before its conversation exists: footer at once, typed input kept until it is ready."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from ui_support import DEMO, FakeClock, chat_stream, loop_config, settle, stalled, type_line, wait_for

from tractui.conversation.conversation import Conversation
from tractui.core.content import Content, TextBlock
from tractui.core.settings import Settings
from tractui.providers.config import ProviderConfig
from tractui.providers.demo import DemoProvider
from tractui.store.history import HistoryStore
from tractui.ui import app as app_module
from tractui.ui.app import TractApp
from tractui.ui.draft import draft_path
from tractui.ui.internals import watch_painted
from tractui.ui.launch import opened
from tractui.ui.pending import PendingConversation
from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.footer import GaugeFooter
from tractui.ui.widgets.message import AssistantMessage, UserMessage


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))


def pending_app(
    tmp_path,
    gate: threading.Event,
    *,
    resuming: bool = False,
    session: str | None = None,
    config: ProviderConfig = DEMO,
) -> tuple[TractApp, HistoryStore]:
    """As ``tractui`` (or ``-c`` when ``resuming``) builds it, the build held until ``gate`` is set."""
    store = HistoryStore(tmp_path / "history.db")
    settings = Settings()
    if resuming:
        session = session or store.create_session("resumed")

    def build() -> Conversation:
        gate.wait(10)
        provider = DemoProvider(DEMO, pace=0) if config is DEMO else None
        return Conversation(store, settings, config, session_id=session, provider=provider)

    pending = PendingConversation(
        config, settings, None, build, opened=opened(store, session) if session is not None else None
    )
    return TractApp(pending, clock=FakeClock()), store


def resumable(tmp_path: Path) -> str:
    """A session of three questions and answers in the history file."""
    with HistoryStore(tmp_path / "history.db") as store:
        session = store.create_session("resumed")
        for i in range(3):
            store.append(session, "user", Content.human(f"question {i}"))
            store.append(session, "assistant", Content(speaker="ai", blocks=[TextBlock(text=f"answer {i}")]))
    return session


async def test_a_resumed_session_says_so_then_draws_its_newest_message_before_the_conversation_is_built(tmp_path):
    """The newest message waits for neither the conversation's imports (provider, tools,
    compaction) nor the tokenizer: it is read from the history file the app opened."""
    from ui_support import screen_text

    gate = threading.Event()
    app, store = pending_app(tmp_path, gate, resuming=True, session=resumable(tmp_path))
    painted: list[str] = []
    watch_painted(app, lambda screen, update: painted.append(screen_text(app)) if update is not None else None)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: "answer 2" in screen_text(app))
            assert not app.chat.ready  # its build still held
            assert "Loading this session…" not in screen_text(app)
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            assert [m.text for m in app.query(UserMessage)] == ["question 0", "question 1", "question 2"]
    finally:
        gate.set()
        store.close()
    newest = next(i for i, text in enumerate(painted) if "answer 2" in text)
    assert any("Loading this session…" in text for text in painted[:newest])  # not a blank screen meanwhile


async def test_a_resumed_session_goes_on_from_the_messages_drawn_when_another_window_writes_meanwhile(tmp_path):
    """Another tractui on the session wrote between the drawing of its newest messages and the
    build: this window's conversation continues the branch it shows, not the other's."""
    from ui_support import screen_text

    session = resumable(tmp_path)
    gate = threading.Event()
    app, store = pending_app(tmp_path, gate, resuming=True, session=session)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: "answer 2" in screen_text(app))
            with HistoryStore(tmp_path / "history.db") as other:
                other.append(session, "user", Content.human("from the other window"))
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            assert [c.content.text for c in app.conversation.history()][-2:] == ["question 2", "answer 2"]
            await type_line(pilot, "mine")
            await wait_for(pilot, lambda: len(app.query(AssistantMessage)) == 4)
            await settle(pilot)
            asked = [c.content.text for c in app.conversation.history() if c.kind == "user"]
            assert asked == ["question 0", "question 1", "question 2", "mine"]
    finally:
        gate.set()
        store.close()


async def test_a_resumed_session_goes_from_loading_to_its_newest_message_with_no_empty_frame(tmp_path):
    """Taking the loading note away was painted on its own: a frame of an empty log, then the
    newest message."""
    from ui_support import screen_text

    gate = threading.Event()
    app, store = pending_app(tmp_path, gate, resuming=True, session=resumable(tmp_path))
    painted: list[str] = []
    watch_painted(app, lambda screen, update: painted.append(screen_text(app)) if update is not None else None)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
    finally:
        gate.set()
        store.close()
    loading = next(i for i, text in enumerate(painted) if "Loading this session…" in text)
    assert "answer 2" in painted[-1]
    assert [text for text in painted[loading:] if "Loading this session…" not in text and "answer 2" not in text] == []


async def test_a_session_that_cannot_be_counted_still_opens_and_takes_what_was_typed(tmp_path, monkeypatch):
    """Counting the session for the first gauge failed (a damaged message): the failure is the
    gauge's, logged; the app still opens the session and sends what was typed meanwhile."""
    with HistoryStore(tmp_path / "history.db") as store:
        session = store.create_session("resumed")
        store.append(session, "user", Content.human("question"))
        store.append(session, "assistant", Content(speaker="ai", blocks=[TextBlock(text="answer")]))

    def damaged(self, step=50):
        raise ValueError("damaged")
        yield

    monkeypatch.setattr(Conversation, "counting", damaged)
    gate = threading.Event()
    app, store = pending_app(tmp_path, gate, resuming=True, session=session)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await type_line(pilot, "typed meanwhile")
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            assert [m.text for m in app.query(UserMessage)] == ["question", "typed meanwhile"]
    finally:
        gate.set()
        store.close()


async def test_input_typed_before_the_conversation_is_built_is_sent_after(tmp_path):
    gate = threading.Event()
    app, store = pending_app(tmp_path, gate)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert not app.chat.ready
            assert "demo" in str(app.query_one(GaugeFooter).query_one("#footer-where").render())
            await type_line(pilot, "first")
            await type_line(pilot, "/set temperature 0.5")
            await type_line(pilot, "second")
            assert not app.query(UserMessage) and app.settings.get("temperature") is None
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            users = [m.text for m in app.query(UserMessage)]
            assert users == ["first", "second"]
            assert len(app.query(AssistantMessage)) == 2
            assert app.settings.get("temperature") == 0.5
            assert [c.kind for c in app.conversation.history() if c.kind == "user"] == ["user", "user"]
    finally:
        gate.set()
        store.close()


@pytest.mark.parametrize("quit_keys", [("ctrl+q",), ("ctrl+c", "ctrl+c")])
async def test_quitting_while_a_line_typed_during_start_up_waits_for_a_reply_runs_nothing_and_keeps_it(
    tmp_path, loopback, quit_keys
):
    """``/new`` typed during start-up waits behind the reply to the line before it. Quitting
    then cancelled the reply and the start-up work together, but Textual's ``Worker.wait`` took
    the cancel for the reply's: ``/new`` ran against the screen being taken down (a new session
    made; ``NoMatches`` for ``GaugeFooter`` or a ``MountError``), and was lost."""
    loopback.add(stalled(chat_stream(["pondering"], ["Half"], usage=None, finish=False)))
    gate = threading.Event()
    app, store = pending_app(tmp_path, gate, config=loop_config(loopback))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await type_line(pilot, "first")
            await type_line(pilot, "/new")
            assert not app.chat.ready
            gate.set()
            await wait_for(pilot, lambda: any(a.text == "Half" for a in app.query(AnswerView)))
            session = app.conversation.session_id
            await pilot.press(*quit_keys)
        assert app.return_code == 0
        assert app.conversation.session_id == session and len(store.list_sessions()) == 1
        assert draft_path().read_text() == "/new"  # not run, kept for the next start as queued messages are
    finally:
        gate.set()
        store.close()


async def test_a_message_sent_while_a_resumed_session_is_drawn_is_drawn_once(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    conversation = Conversation(store, Settings(), DEMO, provider=DemoProvider(DEMO, pace=0))
    async for _ in conversation.send("earlier"):
        pass
    drawing = asyncio.Event()

    class SlowToDraw(TractApp):
        CSS_PATH = str(Path(app_module.__file__).with_name("styles") / "app.tcss")

        async def show_history(self, *, initial: bool = False) -> None:
            await drawing.wait()  # as a long session or a slow tokenizer load holds the first drawing
            await super().show_history(initial=initial)

    app = SlowToDraw(conversation, clock=FakeClock())
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await type_line(pilot, "sent at once")  # before the history is drawn
            await pilot.pause()
            drawing.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            assert [m.text for m in app.query(UserMessage)] == ["earlier", "sent at once"]
    finally:
        store.close()


def started(argv: list[str], gate: threading.Event) -> tuple[TractApp, HistoryStore]:
    """The app as ``tractui ARGV`` prepares it (``launch._prepare``), its build held until ``gate``."""
    from tractui.cli.main import parse_options
    from tractui.ui.launch import _prepare

    prepared = _prepare(parse_options(argv))
    assert not isinstance(prepared, int)
    app, store = prepared
    pending = app.chat._pending
    build = pending.build

    def held() -> Conversation:
        gate.wait(10)
        return build()

    pending.build = held
    return app, store


async def session_under(tmp_path: Path, profile: str) -> None:
    """A profile ``profile`` (the demo, model ``demo-2``) and a session whose reply came from it."""
    from tractui.config.profiles import ProfileStore

    ProfileStore().save(profile, dataclasses.replace(DEMO, model="demo-2"), Settings())
    (tmp_path / "data").mkdir(exist_ok=True)
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        first = Conversation(store, Settings(), DEMO, provider=DemoProvider(DEMO, pace=0), profile_name=profile)
        async for _ in first.send(f"asked under {profile}"):
            pass
        await first.aclose()


def footer_where(app: TractApp) -> str:
    return str(app.query_one(GaugeFooter).query_one("#footer-where").render())


@pytest.mark.parametrize(("argv", "model"), [(["-c"], "demo-2"), (["-c", "--provider", "demo"], "demo")])
async def test_a_session_resumed_from_the_command_line_shows_its_profile_from_the_first_frame(tmp_path, argv, model):
    """``-c`` goes on with the profile the session's last reply came from, named in the footer
    before the conversation is built (it said ``demo`` until the first gauge); a setup chosen
    on the command line wins."""

    await session_under(tmp_path, "mine")
    gate = threading.Event()
    app, store = started(argv, gate)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.query(AssistantMessage))
            assert not app.chat.ready  # the build still held
            assert model in footer_where(app) and ("mine" in footer_where(app)) is (model == "demo-2")
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            assert app.conversation.profile_name == ("mine" if model == "demo-2" else None)
            assert app.conversation.config.model == model
            notes = " ".join(str(n.render()) for n in app.query(".note"))
            assert ("continuing with profile 'mine'" in notes) is (model == "demo-2")
    finally:
        gate.set()
        store.close()


async def test_a_resumed_session_whose_profile_no_longer_loads_says_so_and_stays(tmp_path):
    from tractui.config.profiles import ProfileStore

    await session_under(tmp_path, "gone")
    ProfileStore().path_for("gone").write_text("provider = [", encoding="utf-8")
    gate = threading.Event()
    gate.set()
    app, store = started(["-c"], gate)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            assert app.conversation.profile_name == "demo" and app.conversation.config.model == "demo"
            notes = " ".join(str(n.render()) for n in app.query(".note"))
            assert "this session's replies came from profile 'gone', which does not load" in notes
            assert "staying on profile 'demo'" in notes
    finally:
        store.close()


@pytest.mark.parametrize(
    ("argv", "chose"),
    [
        (["-c"], False),
        (["--resume", "01ab"], False),
        (["-c", "--profile", "kimi"], True),
        (["-c", "--provider", "demo"], True),
        (["-c", "--model", "other"], True),
        (["-c", "--base-url", "http://127.0.0.1:9/v1"], True),
        (["-c", "--api-key-env", "MY_KEY"], True),
        (["-c", "--set", "temperature=0.2"], False),  # a setting of the session's own setup
    ],
)
def test_a_resumed_session_keeps_what_the_command_line_chose(argv, chose):
    from tractui.cli.main import parse_options

    assert parse_options(argv).chose_setup is chose


async def test_a_session_from_the_command_line_resumes_on_its_endpoint_with_no_profile_name(tmp_path, loopback):
    from loopback import sse
    from ui_support import chat_stream, loop_config, type_line

    from tractui.config.profiles import ProfileStore

    loopback.add(sse(chat_stream([], ["from the server"])))
    config = loop_config(loopback)  # as --provider openai --base-url URL --model M --api-key-env ""
    (tmp_path / "data").mkdir(exist_ok=True)
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        first = Conversation(store, Settings(), config)
        async for _ in first.send("asked the server"):
            pass
        await first.aclose()
        stamps = next(c for c in reversed(first.history()) if c.kind == "assistant").content.metadata
    assert stamps["api_key_env"] == config.api_key_env  # the variable's name is recorded, never a key
    gate = threading.Event()
    app, store = started(["-c"], gate)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.query(AssistantMessage))
            assert not app.chat.ready and f"openai · {config.model}" in footer_where(app)
            gate.set()
            await wait_for(pilot, lambda: app.chat.ready)
            await settle(pilot)
            got = app.conversation.config
            assert (got.provider, got.model, got.base_url, got.api_key_env) == (
                config.provider,
                config.model,
                config.base_url,
                config.api_key_env,
            )
            assert app.conversation.profile_name is None
            shown = " ".join(str(n.render()) for n in app.query(".note"))
            assert f"continuing with {config.provider} · {config.model}" in shown and "profile" not in shown
            await type_line(pilot, "/model other-model")
            await settle(pilot)
            assert app.conversation.profile_name is None  # no internal name appears
            await type_line(pilot, "/profile save")
            await settle(pilot)
            assert "give the profile a name" in str(app.query(".note")[-1].render())
            assert ProfileStore().entries() == [] or all(e.name != "session" for e in ProfileStore().entries())
    finally:
        gate.set()
        store.close()


async def test_the_answers_markdown_parser_and_python_lexer_are_made_while_the_user_types(tmp_path, monkeypatch):
    from tractui.ui.widgets import answer_segment

    warmed: list[bool] = []  # on a thread of its own?
    monkeypatch.setattr(
        answer_segment, "warm", lambda: warmed.append(threading.current_thread() is not threading.main_thread())
    )
    gate = threading.Event()
    gate.set()
    app, store = pending_app(tmp_path, gate)
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(warmed))
        assert warmed == [True]
    store.close()


def test_warming_makes_the_python_lexer_in_a_fresh_interpreter():
    """``warm`` leaves nothing for the first code block to make (pygments keeps a lexer's
    compiled rules on its class: ``_tokens``)."""
    code = (
        "import pygments.lexers.python as p; from tractui.ui.widgets.answer_segment import warm; "
        "before = '_tokens' in p.PythonLexer.__dict__; warm(); print(before, '_tokens' in p.PythonLexer.__dict__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
