"""``tractui -p`` as a user runs it: a real subprocess against the loopback server."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import os
import sys
from pathlib import Path

import pytest
import tomlkit
from loopback import FIXTURES, error, openai_chat_reply, sse

from tractui.cli.main import main
from tractui.core.content import Content
from tractui.store.history import HistoryStore

KEY = "sk-print-mode-SECRET-0123456789"


async def run_cli(tmp_path: Path, *args: str, timeout: float = 60) -> tuple[int, str, str]:
    env = {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
        "TRACTUI_DATA_DIR": str(tmp_path / "data"),
        "PRINT_TEST_KEY": KEY,
        "PYTHONIOENCODING": "utf-8",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tractui",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode(), err.decode()


def meta(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.meta.json").read_text())


PROTOCOLS = [
    ("openai", "openai_reasoning_content/deepseek_reasoner_stream_hello", "/v1"),
    ("anthropic", "anthropic_thinking/claude_sonnet4_stream_thinking_signature", ""),
    ("gemini", "gemini_thoughts/gemini25pro_stream_thought_parts", ""),
    ("openai-responses", "openai_responses/openai_o3mini_stream_reasoning_summary_multi_part", "/v1"),
]


@pytest.mark.parametrize(("provider", "fixture", "suffix"), PROTOCOLS, ids=[p[0] for p in PROTOCOLS])
async def test_answer_on_stdout_thinking_on_stderr(tmp_path, loopback, provider, fixture, suffix):
    loopback.add(sse(FIXTURES / f"{fixture}.sse", seed=5))
    expected = meta(fixture)
    code, out, err = await run_cli(
        tmp_path,
        "-p",
        "hello",
        "--provider",
        provider,
        "--model",
        "m",
        "--base-url",
        loopback.url + suffix,
        "--api-key-env",
        "PRINT_TEST_KEY",
    )
    assert code == 0, err
    text = expected["expected_text"]
    assert out == text + ("" if text.endswith("\n") else "\n")
    assert expected["expected_reasoning"].strip()[:200] in err
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        chain = store.chain(store.latest_session())
        assert chain[-1].content.text == text and chain[-1].status == "complete"
        assert chain[-1].provider == provider


async def test_json_shape(tmp_path, loopback):
    fixture = "anthropic_thinking/claude_sonnet4_stream_thinking_signature"
    loopback.add(sse(FIXTURES / f"{fixture}.sse", seed=9))
    expected = meta(fixture)
    code, out, err = await run_cli(
        tmp_path,
        "-p",
        "cross the street?",
        "--json",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-0",
        "--base-url",
        loopback.url,
        "--api-key-env",
        "PRINT_TEST_KEY",
    )
    assert code == 0, err
    result = json.loads(out)
    assert set(result) >= {
        "text",
        "reasoning",
        "reasoning_blocks",
        "usage",
        "effective_context_tokens",
        "finish_reason",
        "session",
    }
    assert result["text"] == expected["expected_text"]
    assert result["reasoning"] == expected["expected_reasoning"]
    assert result["reasoning_blocks"] == [
        {"source_field": "thinking", "signed": True, "redacted": False, "text": expected["expected_reasoning"]}
    ]
    assert result["usage"] == {"input": 43, "output": 282, "reasoning": result["usage"]["reasoning"], "cached": 0}
    assert result["effective_context_tokens"] > 43
    assert result["finish_reason"] == "end_turn"
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        assert store.latest_session() == result["session"]
    assert expected["expected_reasoning"] not in err  # --json prints nothing else


async def test_json_context_counts_the_tools_of_a_running_mcp_server(tmp_path, loopback):
    """``effective_context_tokens`` is the footer's figure after the turn: the last call's input and
    output, the tools it offered still offered. Until 2026-11-28 it was read after the MCP servers had
    stopped, so their definitions came off the call's input: 0 with any server configured."""
    (tmp_path / "config").mkdir()
    demo = {"command": sys.executable, "args": ["-m", "tractui.tools.demo_server"]}
    (tmp_path / "config" / "config.toml").write_text(tomlkit.dumps({"mcp": {"servers": {"demo": demo}}}))
    loopback.add(openai_chat_reply("Hello there.", prompt_tokens=60, completion_tokens=30))
    flags = ("--provider", "openai", "--model", "m", "--base-url", loopback.url + "/v1", "--api-key-env", "")
    code, out, err = await run_cli(tmp_path, "-p", "plain q", "--json", *flags)
    assert code == 0, err
    assert "demo__add" in [t["function"]["name"] for t in loopback.requests[0].json["tools"]]
    assert json.loads(out)["effective_context_tokens"] == 60 + 30


async def test_continue_makes_multi_turn_from_the_shell(tmp_path, loopback):
    loopback.add(openai_chat_reply("Nice to meet you, Ada."), openai_chat_reply("You are Ada."))
    common = (
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        loopback.url + "/v1",
        "--api-key-env",
        "PRINT_TEST_KEY",
    )
    code1, out1, _ = await run_cli(tmp_path, "-p", "I am Ada", "--json", *common)
    code2, out2, _ = await run_cli(tmp_path, "-p", "Who am I?", "-c", "--json", *common)
    assert (code1, code2) == (0, 0)
    assert json.loads(out1)["session"] == json.loads(out2)["session"]
    assert [m["content"] for m in loopback.requests[1].json["messages"]] == [
        "I am Ada",
        "Nice to meet you, Ada.",
        "Who am I?",
    ]
    # no flags: the session goes on with the endpoint its last reply came from, not the demo
    loopback.add(openai_chat_reply("Still Ada."))
    code3, out3, err3 = await run_cli(tmp_path, "-p", "And now?", "-c", "--json")
    assert code3 == 0, err3
    assert json.loads(out3)["text"] == "Still Ada." and loopback.requests[2].json["model"] == "m"
    assert loopback.requests[2].headers["authorization"] == f"Bearer {KEY}"  # from the variable the session named


async def test_resume_continues_that_session_on_its_own_setup(tmp_path, loopback):
    """``-p --resume SESSION`` goes on in that session (a unique prefix, any case; the latest without
    one), with the endpoint its last reply came from, as ``-p -c`` does; until 2026-11-28 it was
    ignored: a new session on the default provider."""
    loopback.add(openai_chat_reply("Hello Ada."), openai_chat_reply("Hello Bob."))
    common = ("--provider", "openai", "--model", "m", "--base-url", loopback.url + "/v1", "--api-key-env")
    _, out_ada, _ = await run_cli(tmp_path, "-p", "I am Ada", "--json", *common, "PRINT_TEST_KEY")
    _, out_bob, _ = await run_cli(tmp_path, "-p", "I am Bob", "--json", *common, "PRINT_TEST_KEY")
    ada, bob = json.loads(out_ada)["session"], json.loads(out_bob)["session"]
    unique = next(i for i, (a, b) in enumerate(zip(ada, bob, strict=True)) if a != b) + 1
    loopback.add(openai_chat_reply("You are Bob."), openai_chat_reply("You are Ada."))
    code, out, err = await run_cli(tmp_path, "-p", "Who am I?", "--resume", "--json")  # no SESSION: the latest
    assert code == 0, err
    assert (json.loads(out)["session"], json.loads(out)["text"]) == (bob, "You are Bob.")
    code, out, err = await run_cli(tmp_path, "-p", "Who am I?", "--resume", ada[:unique].lower(), "--json")
    assert code == 0, err
    assert (json.loads(out)["session"], json.loads(out)["text"]) == (ada, "You are Ada.")
    sent = loopback.requests[3]
    assert [m["content"] for m in sent.json["messages"]] == ["I am Ada", "Hello Ada.", "Who am I?"]
    assert sent.json["model"] == "m" and sent.headers["authorization"] == f"Bearer {KEY}"  # the session's own setup
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        assert {s.id for s in store.list_sessions()} == {ada, bob}


async def test_continue_with_a_setting_stays_on_the_sessions_setup(tmp_path, loopback):
    """``-c --set KEY=VALUE`` changes that setting for the session's own endpoint, as the max-steps
    error advises (``--set tools.maxSteps=N``, then ``-c``); until 2026-11-28 any ``--set`` chose a
    new setup: the session went on, quietly, with the offline demo model."""
    loopback.add(openai_chat_reply("Hello Ada."), openai_chat_reply("Still Ada."))
    common = ("--provider", "openai", "--model", "m", "--base-url", loopback.url + "/v1", "--api-key-env")
    _, out, _ = await run_cli(tmp_path, "-p", "I am Ada", "--json", *common, "PRINT_TEST_KEY")
    code, out2, err = await run_cli(tmp_path, "-p", "Who am I?", "-c", "--set", "temperature=0.2", "--json")
    assert code == 0, err
    assert (json.loads(out2)["session"], json.loads(out2)["text"]) == (json.loads(out)["session"], "Still Ada.")
    sent = loopback.requests[1].json
    assert sent["model"] == "m" and sent["temperature"] == 0.2
    assert [m["content"] for m in sent["messages"]] == ["I am Ada", "Hello Ada.", "Who am I?"]


async def test_provider_error_exits_1_with_message_on_stderr(tmp_path, loopback):
    loopback.add(error(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}))
    code, out, err = await run_cli(
        tmp_path,
        "-p",
        "hi",
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        loopback.url + "/v1",
        "--api-key-env",
        "PRINT_TEST_KEY",
    )
    assert code == 1 and out == ""
    assert "tractui:" in err and len(err.strip().splitlines()) == 1
    assert KEY not in err


def run_in_process(tmp_path: Path, monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Cases that need no server run in-process: the same entry point, without a second interpreter's start-up."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_missing_key_exits_1_naming_the_variable(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("NO_SUCH_KEY_VAR_X", raising=False)
    code, _, err = run_in_process(
        tmp_path,
        monkeypatch,
        capsys,
        "-p",
        "hi",
        "--provider",
        "openai",
        "--model",
        "m",
        "--api-key-env",
        "NO_SUCH_KEY_VAR_X",
    )
    assert code == 1 and "NO_SUCH_KEY_VAR_X" in err


@pytest.mark.parametrize(
    "args",
    [
        ("-p", "hi", "--set", "no.such.key=1"),
        ("-p", "hi", "--set", "temperature=hot"),
        ("-p", "hi", "--model", "m"),
        ("-p", "  "),
        ("-p", "hi", "--provider", "nonsense", "--model", "m"),
    ],
    ids=["unknown-key", "bad-value", "model-without-provider", "empty-prompt", "unknown-provider"],
)
def test_bad_usage_exits_2_and_writes_nothing(tmp_path, monkeypatch, capsys, args):
    code, out, err = run_in_process(tmp_path, monkeypatch, capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    db = tmp_path / "data" / "history.db"
    if db.exists():
        with HistoryStore(db) as store:
            assert store.list_sessions() == []


@pytest.mark.parametrize(
    ("ref", "said"),
    [("zzz", "tractui: no session 'zzz' in "), (None, "tractui: session prefix '{}' is ambiguous"), ("", None)],
    ids=["unknown", "ambiguous", "latest-of-none"],
)
def test_resume_of_no_such_session_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, capsys, ref, said):
    """Until 2026-11-28 ``-p hi --resume ZZZ`` answered in a new session and exited 0."""
    db = tmp_path / "data" / "history.db"
    db.parent.mkdir(parents=True)
    with HistoryStore(db) as store:
        before = []
        for text in ("one", "two") if ref != "" else ():
            session = store.create_session()
            store.append(session, "user", Content.human(text))
            before.append((session, [c.id for c in store.chain(session)]))
    if ref is None:  # a prefix of both
        (one, _), (two, _) = before
        ref = one[: next(i for i, (a, b) in enumerate(zip(one, two, strict=True)) if a != b)]
        said = said.format(ref)
    code, out, err = run_in_process(tmp_path, monkeypatch, capsys, "-p", "hi", "--resume", ref)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith(said or "tractui: no sessions yet in ")
    with HistoryStore(db) as store:
        assert [(s, [c.id for c in store.chain(s)]) for s, _ in before] == before
        assert len(store.list_sessions()) == len(before)


async def test_demo_provider_with_nothing_configured(tmp_path):
    code, out, err = await run_cli(tmp_path, "-p", "hello", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["text"] and result["reasoning"] and result["usage"]["output"] > 0
    assert result["finish_reason"] is not None


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
async def test_an_answer_that_cannot_be_written_is_one_line_exit_2_and_kept(tmp_path, loopback):
    """stdout on a full disk: the reply stops, what arrived is kept and marked; the shell gets one line, no traceback."""
    fixture = "openai_reasoning_content/deepseek_reasoner_stream_hello"
    loopback.add(sse(FIXTURES / f"{fixture}.sse", seed=3))
    env = {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
        "TRACTUI_DATA_DIR": str(tmp_path / "data"),
        "PRINT_TEST_KEY": KEY,
    }
    args = ["-p", "hello", "--provider", "openai", "--model", "m", "--base-url", loopback.url + "/v1"]
    with open("/dev/full", "w") as full:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tractui",
            *args,
            "--api-key-env",
            "PRINT_TEST_KEY",
            stdout=full,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert "Traceback" not in err.decode()
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        session = store.latest_session()
        chain = store.chain(session)
    told = f"tractui: cannot write the output: No space left on device; what arrived is kept in session {session}"
    assert err.decode().splitlines()[-1] == told
    assert chain[-1].status == "interrupted"
    assert chain[-1].content.text and meta(fixture)["expected_text"].startswith(chain[-1].content.text)


class Full(io.StringIO):
    """A stream on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_an_answer_that_cannot_be_written_still_says_how_the_run_ended(tmp_path, monkeypatch):
    """The output failing does not swallow the rest: the provider's error and where the reply is kept come too."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("TRACTUI_TEST_NO_SUCH_KEY", raising=False)
    err = io.StringIO()
    argv = ["-p", "hi", "--json", "--provider", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--api-key-env", "TRACTUI_TEST_NO_SUCH_KEY"], out=Full(), err=err) == 2
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("tractui: set the environment variable TRACTUI_TEST_NO_SUCH_KEY")
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        session = store.latest_session()
    assert lines[1:] == [
        f"tractui: cannot write the output: No space left on device; what arrived is kept in session {session}"
    ]
