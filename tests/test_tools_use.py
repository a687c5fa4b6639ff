"""``Toolbox.use``: a profile switch starts the servers it names and stops the others, with real
MCP servers over stdio; what a call on a stopped server gets, and which key variables a server
started after a switch may not name."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tractui.config.mcp import McpConfig, McpServer
from tractui.core.content import ToolCallBlock
from tractui.core.tokens import TokenCounter
from tractui.providers.config import ProviderConfig
from tractui.tools.consent import ConsentPolicy
from tractui.tools.server import McpConnection
from tractui.tools.toolbox import Toolbox, ToolOutcome

TEST_SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
KIMI = ProviderConfig("openai", "kimi-k2.6", api_key_env="MOONSHOT_API_KEY")
COUNTER = TokenCounter("gpt-4o")


async def stopped(connection: McpConnection) -> None:
    while connection.state != "stopped":
        await asyncio.sleep(0.02)


def box(tmp_path: Path, **servers: McpServer) -> Toolbox:
    return Toolbox(McpConfig(servers=servers), log_dir=tmp_path, consent=ConsentPolicy(allow_all=True))


async def test_a_call_running_on_a_server_a_switch_leaves_out_ends_as_an_error(tmp_path):
    toolbox = box(
        tmp_path,
        demo=McpServer(command=sys.executable, args=["-m", "tractui.tools.demo_server"]),
        test=McpServer(command=sys.executable, args=[TEST_SERVER]),
    )
    toolbox.start()
    try:
        assert await toolbox.settled(60)
        toolbox.definitions()  # offered, as a request does: the names are known from now on
        slow = toolbox.request(ToolCallBlock(id="1", name="test__sleep", arguments='{"seconds": 30}'))
        later = toolbox.request(ToolCallBlock(id="2", name="test__crash", arguments="{}"))
        assert slow is not None and later is not None
        call = asyncio.create_task(toolbox.call(slow, counter=COUNTER, max_tokens=100))
        await asyncio.sleep(0.5)
        test = toolbox.connections["test"]
        toolbox.use(("demo",), KIMI)
        outcome = await asyncio.wait_for(call, 15)  # not the 30 s the tool sleeps
        # the model is told who closed the connection, not the SDK's "MCPError: Connection closed"
        assert (outcome.status, outcome.text) == (
            "error",
            "not finished: the MCP server test was stopped by a profile switch while the call ran",
        )
        asked_before = await toolbox.call(later, counter=COUNTER, max_tokens=100)
        gone = "not run: the MCP server test was stopped by a profile switch"
        assert (asked_before.status, asked_before.text) == ("not_run", gone)
        await asyncio.wait_for(stopped(test), 10)
        assert list(toolbox.connections) == ["demo"]
        asked_after = toolbox.request(ToolCallBlock(id="3", name="test__sleep", arguments="{}"))
        assert asked_after is not None and toolbox.refusal(asked_after) == ToolOutcome(
            "not_run", gone
        )  # answered at once, no one asked
        assert toolbox.request(ToolCallBlock(id="4", name="test__never", arguments="{}")) is None
    finally:
        await toolbox.aclose()


async def test_a_server_started_after_a_switch_never_gets_the_new_providers_key(tmp_path, monkeypatch):
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-test-never-for-servers")
    leaky = McpServer(command=sys.executable, args=[TEST_SERVER], env={"TOKEN": "${MOONSHOT_API_KEY}"})
    toolbox = box(tmp_path, leaky=leaky)
    toolbox.use((), ProviderConfig("demo", "demo"))  # a profile without it
    toolbox.start()
    try:
        toolbox.use(None, KIMI)
        assert await toolbox.settled(60)
        connection = toolbox.connections["leaky"]
        assert connection.state == "failed" and "MOONSHOT_API_KEY" in connection.reason
    finally:
        await toolbox.aclose()
