"""Tools from the shell: print mode's consent flags and tool lines, ``tractui mcp list | import``,
and a real ``tractui -p`` SIGKILLed mid-call whose session goes on whole afterwards."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import sys
from pathlib import Path

import tomlkit
from strict_servers import Step, StrictChat

from tractui.cli.main import main
from tractui.store.history import HistoryStore

HERE = Path(__file__).parent


def configure(tmp_path: Path, servers: dict[str, dict[str, object]]) -> dict[str, str]:
    config = tmp_path / "c"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text(tomlkit.dumps({"mcp": {"servers": servers}}))
    return {**os.environ, "TRACTUI_CONFIG_DIR": str(config), "TRACTUI_DATA_DIR": str(tmp_path / "d")}


TEST_SERVER = {"command": sys.executable, "args": [str(HERE / "mcp_test_server.py")]}
DEMO_SERVER = {"command": sys.executable, "args": ["-m", "tractui.tools.demo_server"]}
RAW_SERVER = {"command": sys.executable, "args": [str(HERE / "mcp_raw_server.py")], "timeout": 20}


async def tractui(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tractui", *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode or 0, out.decode(), err.decode()


def provider_flags(loopback) -> list[str]:
    return ["--provider", "openai", "--model", "kimi-k2.6", "--base-url", f"{loopback.url}/v1", "--api-key-env", ""]


async def test_print_mode_runs_an_allowed_tool_and_reports_it_on_stderr_and_in_json(tmp_path, loopback):
    env = configure(tmp_path, {"demo": DEMO_SERVER})
    model = StrictChat([Step("add them", calls=[("demo__add", {"a": 40, "b": 2})]), Step("ok", text="It is 42.")])
    loopback.default = model
    code, out, err = await tractui(env, "-p", "40+2?", *provider_flags(loopback), "--allow-tool", "demo.add")
    assert code == 0, err
    assert out.strip() == "It is 42." and model.refusals == []
    assert 'tool demo.add {"a": 40, "b": 2}' in err and "tool demo.add → done" in err and ": 42" in err
    again = StrictChat(
        [Step("once more", calls=[("demo__add", {"a": 40, "b": 2})]), Step("ok", text="Still 42.")],
        issued=dict(model.issued),
        _ids=itertools.count(10),
    )
    loopback.default = again
    code, out, err = await tractui(env, "-p", "again", "-c", *provider_flags(loopback), "--json", "--allow-all-tools")
    assert code == 0, err
    result = json.loads(out)
    assert [(t["server"], t["tool"], t["status"], t["result"]) for t in result["tools"]] == [
        ("demo", "add", "done", "42")
    ]


async def test_print_mode_denies_a_tool_it_was_not_allowed_to_run(tmp_path, loopback):
    env = configure(tmp_path, {"demo": DEMO_SERVER})
    model = StrictChat([Step("time?", calls=[("demo__now", {"zone": "UTC"})]), Step("ok", text="No clock for me.")])
    loopback.default = model
    code, out, err = await tractui(env, "-p", "what time is it?", *provider_flags(loopback), "--allow-tool", "demo.add")
    assert code == 0 and out.strip() == "No clock for me."
    # what the model asked for is shown with the refusal (no start line came with it, until 2026-11-28 none at all)
    assert 'tool demo.now {"zone": "UTC"} → denied' in err and "--allow-tool" in err
    assert model.refusals == []


async def test_the_offline_demo_shows_a_whole_tool_loop(tmp_path):
    env = {**os.environ, "TRACTUI_CONFIG_DIR": str(tmp_path / "c"), "TRACTUI_DATA_DIR": str(tmp_path / "d")}
    code, out, err = await tractui(env, "-p", "what is 17 times 23?", "--json", "--allow-all-tools")
    assert code == 0, err
    result = json.loads(out)
    assert [(t["tool"], t["result"]) for t in result["tools"]] == [("multiply", "391")]
    assert "391" in result["text"] and "tool" in result["reasoning"]


async def test_mcp_list_shows_each_server_its_state_and_its_tools(tmp_path):
    env = configure(tmp_path, {"demo": DEMO_SERVER, "broken": {"command": "no-such-program-here"}})
    code, out, err = await tractui(env, "mcp", "list")
    assert code == 1, err  # one server did not come up
    lines = out.splitlines()
    assert lines[0].startswith("demo  ready") and "    demo__add  Add two numbers." in lines
    assert any(line.startswith("broken  failed: command not found: no-such-program-here") for line in lines)


async def test_mcp_list_exits_0_when_every_server_came_up(tmp_path):
    """A script can tell: 0 when all are ready (their state was read after closing them, all stopped)."""
    code, out, err = await tractui(configure(tmp_path, {"demo": DEMO_SERVER}), "mcp", "list")
    assert code == 0, (out, err)
    assert out.startswith("demo  ready")


async def test_mcp_list_says_a_server_exited_before_it_answered_with_its_last_line(tmp_path):
    """A process that prints a blank line (or its usage) on stdout and exits. Until 2026-11-28 the
    reason was the SDK's "MCPError: Connection closed" and pydantic's parse error of the blank line."""
    blank = {"command": sys.executable, "args": ["-c", "print()"]}
    usage = {"command": sys.executable, "args": ["-c", "print(); print('usage: frob [--port N]'); print()"]}
    code, out, err = await tractui(configure(tmp_path, {"blank": blank, "usage": usage}), "mcp", "list")
    assert code == 1, err
    reasons = dict(line.split("  ")[:2] for line in out.splitlines())
    assert reasons == {
        "blank": "failed: the server exited before it answered",
        "usage": "failed: the server exited before it answered (usage: frob [--port N])",
    }


def test_mcp_import_adds_servers_and_says_what_it_left_out(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "c"))
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(
        json.dumps({"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"], "alwaysAllow": ["x"]}}})
    )
    assert main(["mcp", "import", str(source)]) == 0
    out = capsys.readouterr().out
    assert "imported 1 server" in out and "alwaysAllow" in out
    text = (tmp_path / "c" / "config.toml").read_text()
    assert '[mcp.servers.t]\ncommand = "uvx"' in text
    assert main(["mcp", "import", str(source)]) == 0 and "already configured" in capsys.readouterr().out
    source.write_text("not json")
    assert main(["mcp", "import", str(source)]) == 2


def test_mcp_import_refuses_a_lone_surrogate_escape_leaving_the_config_as_it_was(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "c"))
    source = tmp_path / "mcp.json"
    source.write_text(json.dumps({"mcpServers": {"t": {"command": "uvx", "args": ["time\udfff"]}}}))
    assert "\\udfff" in source.read_text()
    assert main(["mcp", "import", str(source)]) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [
        f"tractui: cannot import {source}: mcpServers.t.args.0: holds a lone surrogate escape (\\ud800–\\udfff), "
        "which is not text"
    ]
    assert not (tmp_path / "c" / "config.toml").exists()


async def test_sigkill_mid_call_leaves_a_session_that_goes_on_whole(tmp_path, loopback):
    env = configure(tmp_path, {"test": TEST_SERVER})
    model = StrictChat(
        [Step("wait a while", calls=[("test__sleep", {"seconds": 60})]), Step("resumed", text="Back after the crash.")]
    )
    loopback.default = model
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tractui",
        "-p",
        "sleep please",
        *provider_flags(loopback),
        "--allow-all-tools",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stderr is not None
    async with asyncio.timeout(60):
        while b"tool test.sleep" not in (await proc.stderr.readline()):
            pass
    os.killpg(proc.pid, signal.SIGKILL)  # tractui and the MCP server with it
    await proc.wait()
    with HistoryStore(tmp_path / "d" / "history.db") as store:
        chain = store.chain(store.latest_session() or "")
    assert [c.kind for c in chain] == ["user", "reasoning", "assistant"]  # the call was made, no result stored
    code, out, err = await tractui(env, "-p", "are you back?", "-c", *provider_flags(loopback))
    assert code == 0, err
    assert out.strip() == "Back after the crash." and model.refusals == []
    sent = loopback.requests[-1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2]["content"].startswith("no result was recorded")


async def test_a_server_answering_with_a_lone_surrogate_escape_is_read_with_a_replacement_character(tmp_path, loopback):
    """A Python server listing a file name that is not UTF-8 writes ``"caf\\udce9.txt"``: the SDK
    could not parse the line, logged a traceback (on print mode's stderr) and the call waited for its
    timeout. The line is read with U+FFFD now; a line on stdout that is not JSON-RPC at all is
    noted in the server's log, and the call it came before still gets its answer."""
    env = configure(tmp_path, {"raw": RAW_SERVER})
    model = StrictChat(
        [
            Step("list", calls=[("raw__listing", {}), ("raw__chatty", {})]),
            Step("ok", text="Two files."),
        ]
    )
    loopback.default = model
    code, out, err = await tractui(env, "-p", "what files?", *provider_flags(loopback), "--allow-all-tools")
    assert code == 0, err
    assert out.strip() == "Two files." and model.refusals == []
    assert "Traceback" not in err and "Failed to parse" not in err
    sent = [m for m in loopback.requests[-1].json["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in sent] == ["caf\ufffd.txt notes.md", "chatted"]
    log = (tmp_path / "d" / "mcp" / "raw.log").read_text(encoding="utf-8")
    assert "tractui: a message from the server could not be read: " in log and "starting the chatty" in log


def talking_loop() -> StrictChat:
    """Three requests: two steps that say something and call a tool, then the answer."""
    return StrictChat(
        [
            Step("add first", calls=[("demo__add", {"a": 1, "b": 2})], text="Let me add those first."),
            Step("then multiply", calls=[("demo__multiply", {"a": 3, "b": 4})], text="And multiply."),
            Step("both known", text="It is 3 and 12."),
        ]
    )


async def test_print_mode_json_covers_every_step_of_a_tool_loop(tmp_path, loopback):
    """Until 2026-11-28 ``--json`` held the last reply only: the earlier steps' text and thinking were
    missing and ``usage`` counted one request of three."""
    env = configure(tmp_path, {"demo": DEMO_SERVER})
    model = loopback.default = talking_loop()
    code, out, err = await tractui(env, "-p", "1+2, 3*4?", *provider_flags(loopback), "--json", "--allow-all-tools")
    assert code == 0, err
    assert model.refusals == []
    result = json.loads(out)
    assert result["text"] == "Let me add those first.\n\nAnd multiply.\n\nIt is 3 and 12."
    assert result["reasoning"] == "add first\n\nthen multiply\n\nboth known"
    assert [b["text"] for b in result["reasoning_blocks"]] == ["add first", "then multiply", "both known"]
    one = {"input": 50, "output": 20, "reasoning": 0, "cached": 0}  # what the strict server reports per request
    assert result["usage"] == {"input": 150, "output": 60, "reasoning": 0, "cached": 0}
    assert result["finish_reason"] == "stop" and result["error"] is None
    calls = [t["id"] for t in result["tools"]]
    assert [t["tool"] for t in result["tools"]] == ["add", "multiply"]
    assert result["steps"] == [
        {
            "text": "Let me add those first.",
            "reasoning": "add first",
            "usage": one,
            "finish_reason": "tool_calls",
            "tool_calls": calls[:1],
        },
        {
            "text": "And multiply.",
            "reasoning": "then multiply",
            "usage": one,
            "finish_reason": "tool_calls",
            "tool_calls": calls[1:],
        },
        {"text": "It is 3 and 12.", "reasoning": "both known", "usage": one, "finish_reason": "stop", "tool_calls": []},
    ]


async def test_print_mode_prints_each_steps_text_as_a_paragraph_of_its_own(tmp_path, loopback):
    """As the app shows them; until 2026-11-28 stdout ran them together (``first.And multiply.It is``)."""
    env = configure(tmp_path, {"demo": DEMO_SERVER})
    model = loopback.default = talking_loop()
    code, out, err = await tractui(env, "-p", "1+2, 3*4?", *provider_flags(loopback), "--allow-all-tools")
    assert code == 0, err
    assert model.refusals == []
    assert out == "Let me add those first.\n\nAnd multiply.\n\nIt is 3 and 12.\n"


async def test_print_mode_says_when_the_tool_loop_stops_at_its_step_limit(tmp_path, loopback):
    """A model that keeps calling tools meets ``tools.maxSteps``: one ``tractui:`` line saying so and how to
    raise it, exit 1, ``error`` in ``--json``; until 2026-11-28 it exited 0 with nothing on stdout and
    ``error: null``. The session goes on with ``-c``."""
    env = configure(tmp_path, {"demo": DEMO_SERVER})
    model = loopback.default = StrictChat([Step("once more", calls=[("demo__add", {"a": 1, "b": 1})])])
    limit = ("--set", "tools.maxSteps=2", "--allow-all-tools")
    code, out, err = await tractui(env, "-p", "add forever", *provider_flags(loopback), *limit)
    assert (code, out) == (1, "")
    told = err.splitlines()[-1]
    assert told.startswith("tractui: the tool loop stopped at its limit of 2 rounds of tool calls (tools.maxSteps)")
    assert "--set tools.maxSteps=N" in told and "Traceback" not in err
    code, out, err = await tractui(env, "-p", "add forever", *provider_flags(loopback), *limit, "--json")
    assert code == 1, err
    result = json.loads(out)
    assert result["error"] == {"kind": "max_steps", "message": told.removeprefix("tractui: ")}
    assert result["finish_reason"] == "tool_calls" and len(result["steps"]) == 2 and len(result["tools"]) == 2
    assert result["usage"]["input"] == 100 and model.refusals == []
    model.steps = [Step("done", text="Enough adding.")]
    code, out, err = await tractui(env, "-p", "stop now", "-c", *provider_flags(loopback), "--allow-all-tools")
    assert (code, out) == (0, "Enough adding.\n"), err
    assert model.refusals == []


async def test_print_mode_says_which_allow_tool_names_allow_nothing(tmp_path, loopback):
    """A mistyped ``--allow-tool`` was a silent denial until 2026-11-28. Once the servers have listed their
    tools, each name that matches none is one line; a name for a server that did not start says that."""
    env = configure(tmp_path, {"test": TEST_SERVER, "demo": DEMO_SERVER, "broken": {"command": "no-such-program-x"}})
    model = loopback.default = StrictChat([Step("hi", text="Hello.")])
    names = ["test.hugee", "test", "test.*", "broken.sleep", "demo.add", "demo__multiply", "now", "test.huge"]
    allowed = [arg for name in names for arg in ("--allow-tool", name)]
    code, out, err = await tractui(env, "-p", "hi", *provider_flags(loopback), *allowed)
    assert (code, out) == (0, "Hello.\n"), err
    assert model.refusals == []
    warnings = [line for line in err.splitlines() if line.startswith("warning: --allow-tool")]
    assert len(warnings) == 4, err
    hugee, server, pattern, broken = warnings
    assert hugee.startswith("warning: --allow-tool 'test.hugee' matches no tool: test has no tool 'hugee'")
    assert "did you mean test.huge?" in hugee
    assert server.startswith("warning: --allow-tool 'test' names a server, not a tool") and "huge" in server
    assert pattern.startswith("warning: --allow-tool 'test.*' is a pattern, which --allow-tool does not read")
    assert broken.startswith("warning: --allow-tool 'broken.sleep' cannot be checked: the server broken did not start")
    assert "command not found: no-such-program-x" in broken
    code, out, err = await tractui(configure(tmp_path, {}), "-p", "hi", *provider_flags(loopback), "--allow-tool", "x")
    assert (code, out) == (0, "Hello.\n"), err
    assert "warning: --allow-tool 'x' allows nothing: no MCP server is in use" in err.splitlines()


async def test_print_mode_says_which_servers_failed_to_start(tmp_path, loopback):
    """Print mode said nothing of a server that failed to start (unless an ``--allow-tool`` name pointed
    at it): the model simply had fewer tools. Now one line each on stderr, the answer unchanged."""
    env = configure(tmp_path, {"demo": DEMO_SERVER, "broken": {"command": "no-such-program-x"}})
    model = loopback.default = StrictChat([Step("hi", text="Hello.")])
    code, out, err = await tractui(env, "-p", "hi", *provider_flags(loopback))
    assert (code, out) == (0, "Hello.\n"), err
    (told,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert told.startswith("warning: MCP server broken failed: command not found: no-such-program-x;")
    assert "its tools are not offered" in told and "broken.log" in told
    assert "Traceback" not in err and model.refusals == []


async def test_print_mode_offers_none_of_a_servers_tools_after_it_crashed_under_the_rounds_last_call(
    tmp_path, loopback
):
    """The crash was the round's last call: the next request still offered every tool of the dead server."""
    env = configure(tmp_path, {"demo": DEMO_SERVER, "test": TEST_SERVER})
    model = loopback.default = StrictChat([Step("crash it", calls=[("test__crash", {})]), Step("ok", text="Gone.")])
    code, out, err = await tractui(env, "-p", "crash", *provider_flags(loopback), "--allow-all-tools")
    assert (code, out) == (0, "Gone.\n"), err
    assert "not finished: the MCP server test exited while the call ran" in err and model.refusals == []
    first, after = ([t["function"]["name"] for t in r.json.get("tools", [])] for r in loopback.requests[-2:])
    assert "test__crash" in first
    assert after and all(name.startswith("demo__") for name in after)
