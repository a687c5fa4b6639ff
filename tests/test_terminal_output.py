"""What tractui prints outside the app: inert on a terminal, exact to a pipe, exports inert unless ``--raw``."""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import error, openai_chat_reply
from pty_run import foreign_controls, run_in_tty

from tractui.cli.main import main
from tractui.config.paths import history_path
from tractui.core.content import Content, TextBlock, ThinkingBlock
from tractui.store.history import HistoryStore

TITLE = "\x1b]0;PWNED-TITLE\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
EVIL = f"{CLIPBOARD}\x1b[2J\x1b[1;1Hgone\x9b31m\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\x07\x08\u202e"
SEQUENCES = [
    TITLE,
    CLIPBOARD,
    "\x1b[2J",
    "\x1b[1;1H",
    "\x1b[31m",
    "\x9b2J",
    "\x9d0;T\x9c",
    "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",
    "\x1bP+q\x1b\\",
    "\x1b",
    "\x07",
    "\x08",
    "\r",
    "\r\n",
    "\u202e",
    "\x00",
    "\x7f",
]
HOSTILE = st.lists(
    st.one_of(
        st.sampled_from(SEQUENCES),
        st.characters(max_codepoint=0xA0),
        st.text(st.characters(codec="utf-8"), max_size=4),
    ),
    min_size=1,
    max_size=24,
).map("".join)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


def hostile_session(path: Path, title: str, user: str, thought: str, answer: str, model: str, why: str) -> str:
    with HistoryStore(path) as store:
        sid = store.create_session(title)
        store.append(sid, "user", Content.human(user))
        store.append(
            sid,
            "reasoning",
            Content(speaker="ai", blocks=[ThinkingBlock(thought=thought, source_field="thinking")]),
            model=model,
        )
        store.append(
            sid,
            "assistant",
            Content(speaker="ai", blocks=[TextBlock(text=answer)]),
            provider=model,
            model=model,
            status="error",
            metadata={"error": {"message": why}},
        )
        return sid


def run(*argv: str, out: io.StringIO | None = None, err: io.StringIO | None = None) -> tuple[int, str, str]:
    out = out if out is not None else io.StringIO()
    err = err if err is not None else io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [("sessions",), ("log",), ("export", "--format", "md")])
def test_history_commands_are_inert_on_a_terminal(data, argv):
    hostile_session(history_path(), TITLE, EVIL, EVIL, EVIL, f"m{EVIL}", EVIL)
    code, out, err = run(*argv, out=Tty(), err=Tty())
    assert code == 0, err
    assert foreign_controls(out) == [] and "\u202e" not in out
    assert "\\x1b]0;PWNED-TITLE\\x07" in out  # shown, so the reader sees what was there
    assert argv == ("sessions",) or "⟨U+202E⟩" in out


@pytest.mark.parametrize("argv", [("sessions",), ("log",)])
def test_history_commands_to_a_pipe_stay_exact(data, argv):
    hostile_session(history_path(), TITLE, EVIL, EVIL, EVIL, "m", EVIL)
    code, out, _ = run(*argv)
    assert code == 0 and TITLE in out


def test_a_title_cannot_forge_rows_in_sessions(data):
    hostile_session(history_path(), "one\nFAKE-ROW  0  x", "a", "b", "c", "m", "d")
    _code, out, _ = run("sessions")
    assert len(out.splitlines()) == 2 and "one FAKE-ROW" in out


def test_markdown_export_is_inert_in_files_and_pipes_unless_raw(data, tmp_path):
    hostile_session(history_path(), TITLE, EVIL, EVIL, EVIL, "m", EVIL)
    target = tmp_path / "s.md"
    assert run("export", "--format", "md", "-o", str(target))[0] == 0
    text = target.read_text(encoding="utf-8")
    assert foreign_controls(text) == [] and "\\x1b]52;c;cm0gLXJmIH4=\\x07" in text
    _code, piped, _ = run("export", "--format", "md")
    assert piped == text
    assert run("export", "--format", "md", "--raw", "-o", str(target))[0] == 0
    assert CLIPBOARD in target.read_text(encoding="utf-8")
    _code, raw, _ = run("export", "--format", "md", "--raw")
    assert CLIPBOARD in raw


def test_json_export_holds_no_raw_controls_and_loses_nothing(data):
    sid = hostile_session(history_path(), TITLE, EVIL, EVIL, EVIL, "m", EVIL)
    code, out, _ = run("export", "--format", "json", out=Tty())
    assert code == 0 and foreign_controls(out) == [] and "\u202e" not in out
    loaded = json.loads(out)
    assert loaded["session"]["id"] == sid and loaded["session"]["title"] == TITLE
    assert loaded["commits"][0]["content"]["blocks"][0]["text"] == EVIL


def tty_env(tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp / "config"),
        "TRACTUI_DATA_DIR": str(tmp / "data"),
        "TTY_TEST_KEY": "sk-tty-test-0123456789",
    }


def print_argv(loopback_url: str, prompt: str = "hi") -> list[str]:
    return [
        "-p",
        prompt,
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        loopback_url + "/v1",
        "--api-key-env",
        "TTY_TEST_KEY",
    ]


async def test_print_mode_on_a_terminal_is_inert_and_exact_in_the_store(tmp_path, loopback):
    loopback.add(openai_chat_reply(f"answer {EVIL} end", reasoning=f"think {EVIL} more"))
    result = await run_in_tty(["-m", "tractui", *print_argv(loopback.url)], tty_env(tmp_path))
    assert result.code == 0, result.err
    assert foreign_controls(result.out) == [] and foreign_controls(result.err) == []
    assert "answer \\x1b]52;c;" in result.out and "think \\x1b]52;c;" in result.err
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        assert store.chain(store.latest_session())[-1].content.text == f"answer {EVIL} end"


async def test_print_mode_error_line_from_a_hostile_400_is_inert(tmp_path, loopback):
    loopback.add(error(400, {"error": {"message": f"bad {TITLE}{CLIPBOARD}\x9b2J request", "type": "invalid"}}))
    result = await run_in_tty(["-m", "tractui", *print_argv(loopback.url)], tty_env(tmp_path))
    assert result.code == 1
    assert foreign_controls(result.err) == [] and "PWNED-TITLE" in result.err
    assert "Traceback" not in result.err


DRIVER = """
import json, sys
from tractui.cli.main import main
for argv in json.loads(sys.argv[1]):
    main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
"""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=HOSTILE, text=HOSTILE, thought=HOSTILE, why=HOSTILE)
async def test_nothing_printed_to_a_terminal_carries_controls(tmp_path, loopback, title, text, thought, why):
    """``sessions``, ``log``, ``export`` and ``-p`` (an answer, then a 400) with hostile text everywhere."""
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))
    hostile_session(tmp / "data" / "history.db", title, text, thought, text, why, why)
    loopback.add(openai_chat_reply(text, reasoning=thought))
    loopback.add(error(400, {"error": {"message": why}}))
    argvs = [["sessions"], ["log"], ["export", "--format", "md"], print_argv(loopback.url), print_argv(loopback.url)]
    result = await run_in_tty(["-c", DRIVER, json.dumps(argvs)], tty_env(tmp))
    assert result.code == 0, result.err
    assert "Traceback" not in result.err, result.err
    assert foreign_controls(result.out) == [], result.out
    assert foreign_controls(result.err) == [], result.err


async def test_mcp_list_on_a_terminal_is_inert(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(
        tomlkit.dumps({"mcp": {"servers": {"odd": {"command": f"no-such-{TITLE}{CLIPBOARD}\x9b2J"}}}})
    )
    result = await run_in_tty(["-m", "tractui", "mcp", "list"], tty_env(tmp_path))
    assert result.code == 1, result.err
    assert "PWNED-TITLE" in result.out and foreign_controls(result.out) == [] and foreign_controls(result.err) == []
