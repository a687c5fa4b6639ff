"""Tool loops when things go their own way: consent refused or never asked, unknown tools, timeouts,
a server that dies mid-call, Esc, the step limit, hostile results, a profile switched mid-loop, and
a history left by a killed process. Every call id always gets a result, so the strict server (which
refuses any dangling call with the vendor's words) accepts every next request."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
import pytest_asyncio
from loopback import LoopbackServer, Reply
from strict_servers import Step, StrictAnthropic, StrictChat, StrictGemini

from tractui.config.mcp import McpConfig, McpServer
from tractui.conversation.conversation import Conversation
from tractui.conversation.tool_loop import NO_CONSENT
from tractui.core.content import Content, ThinkingBlock, ToolCallBlock
from tractui.core.events import Notice, ThinkingDelta, ToolCallState
from tractui.core.settings import Settings
from tractui.providers.config import ProviderConfig
from tractui.store.compile import UNANSWERED, compile_history
from tractui.store.history import HistoryStore
from tractui.tools.consent import Choice, ConsentPolicy, Decision, ToolRequest
from tractui.tools.results import CUT
from tractui.tools.toolbox import Toolbox

pytestmark = pytest.mark.asyncio(loop_scope="module")
HERE = Path(__file__).parent


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def toolbox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Toolbox]:
    """The demo server and the test server (tools that sleep, crash, print their environment)."""
    import os

    os.environ["OPENAI_API_KEY"] = "sk-test-never-for-servers"  # must not reach a server
    servers = {
        "demo": McpServer(command=sys.executable, args=["-m", "tractui.tools.demo_server"]),
        "test": McpServer(command=sys.executable, args=[str(HERE / "mcp_test_server.py")], timeout=1.5),
    }
    box = Toolbox(McpConfig(servers=servers), log_dir=tmp_path_factory.mktemp("logs"), consent=ConsentPolicy())
    box.start()
    assert await box.settled(60)
    assert [c.state for c in box.connections.values()] == ["ready", "ready"], [
        c.reason for c in box.connections.values()
    ]
    yield box
    await box.aclose()
    os.environ.pop("OPENAI_API_KEY", None)


@pytest.fixture
def server(module_loopback: LoopbackServer) -> LoopbackServer:
    """A fresh loopback server on the module's loop (the MCP servers live there)."""
    return module_loopback


def chat(tmp_path: Path, server: LoopbackServer, box: Toolbox, steps: list[Step], **settings: object):
    model = StrictChat(steps, vendor="kimi")
    server.default = model
    config = ProviderConfig("openai", "kimi-k2.6", base_url=f"{server.url}/v1", api_key_env="")
    conv = Conversation(HistoryStore(tmp_path / "history.db"), Settings(dict(settings)), config)
    conv.tools = box
    return conv, model


async def run(conv: Conversation, text: str = "go") -> list[object]:
    return [event async for event in conv.send(text)]


def states(events: list[object]) -> list[tuple[str, str]]:
    return [(e.tool, e.status) for e in events if isinstance(e, ToolCallState)]


async def allow(request: ToolRequest) -> Decision:
    return Decision("once")


def answering(choice: Choice) -> tuple[list[str], Callable[[ToolRequest], Awaitable[Decision]]]:
    """An approver that answers every question with ``choice``, and the tools it was asked about."""
    asked: list[str] = []

    async def approve(request: ToolRequest) -> Decision:
        asked.append(request.tool)
        return Decision(choice)

    return asked, approve


def final(tool: str, args: dict[str, object] | None = None) -> list[Step]:
    return [Step("call it", calls=[(tool, args or {})]), Step("done", text="finished")]


async def test_an_always_that_cannot_be_saved_holds_for_the_session_and_says_so(tmp_path, server, toolbox):
    """config.toml cannot be written (a folder in the way, a full disk): the call runs, one line
    says the choice holds for this session only, and the next call is not asked again."""
    from tractui.errors import ProfileError

    def unwritable(server: str, tool: str, fingerprint: str) -> None:
        raise ProfileError("cannot write /nowhere/config.toml: Permission denied")

    asked, always = answering("always")

    kept, toolbox.consent = toolbox.consent, ConsentPolicy(remember=unwritable)
    try:
        conv, model = chat(tmp_path, server, toolbox, final("demo__add", {"a": 1, "b": 2}))
        conv.approve = always
        events = await run(conv)
        notes = [e.message for e in events if isinstance(e, Notice)]
        assert states(events)[-1] == ("add", "done") and model.refusals == []
        assert notes == [
            "demo.add is allowed for this session only: cannot write /nowhere/config.toml: Permission denied"
        ]
        model.steps, model.served = final("demo__add", {"a": 3, "b": 4}), 0
        events = await run(conv, "again")
        assert states(events)[-1] == ("add", "done") and asked == ["add"]
    finally:
        toolbox.consent = kept


@pytest.mark.parametrize("arguments", ["just a string", 42, [1, 2]])
async def test_a_call_whose_arguments_cannot_be_run_is_answered_without_asking(tmp_path, server, toolbox, arguments):
    """Arguments that are not a JSON object: the user is not asked to allow what would not run."""
    conv, model = chat(tmp_path, server, toolbox, final("demo__add", arguments))  # type: ignore[arg-type]
    asked, ask = answering("once")

    conv.approve = ask
    events = await run(conv)
    assert asked == [] and states(events) == [("add", "error")] and model.refusals == []
    result = next(c for c in conv.history() if c.kind == "tool").content.blocks[0]
    assert result.content == "the arguments must be a JSON object; nothing was run"


async def test_a_call_running_when_the_app_quits_gets_its_cancelled_result(tmp_path, server, toolbox):
    """The consumer of the reply went away mid-call (the app quit): the call still gets exactly one
    result, stored as cancelled, as with Esc."""
    conv, _ = chat(tmp_path, server, toolbox, final("test__sleep", {"seconds": 30}))
    conv.approve = allow
    running = asyncio.Event()

    async def reply() -> None:  # as the app's reply worker, which quitting cancels
        async for event in conv.send("sleep"):
            if isinstance(event, ToolCallState) and event.status == "running":
                running.set()
                # quit now: the cancel lands in the call, however loaded the machine (this server's
                # calls time out after 1.5 s, which a cancel from outside could come after)
                task = asyncio.current_task()
                assert task is not None
                task.cancel()

    worker = asyncio.ensure_future(reply())
    await asyncio.wait_for(running.wait(), 60)
    with pytest.raises(asyncio.CancelledError):
        await worker
    tools = [c.content.metadata for c in conv.store.chain(conv.session_id) if c.kind == "tool"]
    assert [(m["status"], m.get("tool")) for m in tools] == [("cancelled", "sleep")]


async def test_a_denial_with_a_reason_reaches_the_model_and_nothing_runs(tmp_path, server, toolbox):
    conv, model = chat(tmp_path, server, toolbox, final("demo__add", {"a": 1, "b": 2}))

    async def deny(request: ToolRequest) -> Decision:
        assert (request.server, request.tool, request.arguments) == ("demo", "add", '{"a": 1, "b": 2}')
        return Decision("deny", "use mental arithmetic")

    conv.approve = deny
    events = await run(conv)
    assert states(events) == [("add", "waiting"), ("add", "denied")]
    tool_message = server.requests[-1].json["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "denied by the user: use mental arithmetic"
    assert model.refusals == [] and conv.history()[-1].content.text == "finished"


async def test_without_anyone_to_ask_a_call_is_denied_and_says_how_to_allow_it(tmp_path, server, toolbox):
    conv, model = chat(tmp_path, server, toolbox, final("demo__now"))
    events = await run(conv)
    assert states(events)[-1] == ("now", "denied")
    assert server.requests[-1].json["messages"][-1]["content"] == NO_CONSENT
    assert model.refusals == []


async def test_a_flag_allows_a_tool_without_asking(tmp_path, server, toolbox, monkeypatch):
    monkeypatch.setattr(toolbox, "consent", ConsentPolicy(allow=["demo.multiply"]))
    conv, model = chat(tmp_path, server, toolbox, final("demo__multiply", {"a": 6, "b": 7}))
    events = await run(conv)
    assert states(events) == [("multiply", "running"), ("multiply", "done")]
    assert server.requests[-1].json["messages"][-1]["content"] == "42" and model.refusals == []


async def test_a_tool_never_offered_gets_an_error_result(tmp_path, server, toolbox):
    conv, model = chat(tmp_path, server, toolbox, final("nope__missing"))
    conv.approve = allow
    events = await run(conv)
    assert states(events) == [("nope__missing", "unknown")]
    assert "offered no tool named 'nope__missing'" in server.requests[-1].json["messages"][-1]["content"]
    assert model.refusals == []


async def test_a_call_that_outlives_its_timeout_is_answered_and_the_loop_goes_on(tmp_path, server, toolbox):
    conv, model = chat(tmp_path, server, toolbox, final("test__sleep", {"seconds": 30}))
    conv.approve = allow
    events = await run(conv)
    assert states(events)[-1] == ("sleep", "timeout")
    assert model.refusals == [] and conv.history()[-1].content.text == "finished"


async def test_esc_during_a_call_cancels_it_and_answers_every_call(tmp_path, server, toolbox):
    steps = [
        Step("two calls", calls=[("test__sleep", {"seconds": 1.2}), ("demo__now", {})]),
        Step("after", text="after the cancel"),
    ]
    conv, model = chat(tmp_path, server, toolbox, steps)
    conv.approve = allow
    seen: list[object] = []
    async for event in conv.send("go"):
        seen.append(event)
        if isinstance(event, ToolCallState) and event.status == "running":
            asyncio.get_running_loop().call_later(0.1, conv.cancel)
    # the call after the cancelled one is answered and said so (the screen draws it cancelled)
    assert states(seen) == [("sleep", "waiting"), ("sleep", "running"), ("sleep", "cancelled"), ("now", "cancelled")]
    results = [c.content.blocks[0] for c in conv.history() if c.kind == "tool"]
    assert len(results) == 2 and all(r.is_error for r in results)
    assert not conv.streaming
    await run(conv, "and now?")  # the history is whole: the strict server takes it
    assert model.refusals == [] and conv.history()[-1].content.text == "after the cancel"


@pytest.mark.parametrize("off", ["disabled", "between_tools"])
async def test_a_message_after_esc_in_a_claude_loop_keeps_the_loops_thinking_and_the_users_setting(
    tmp_path, server, toolbox, off
):
    """The message typed after Esc stopped a call goes in the call's result message: to Anthropic
    the loop is still the turn in progress. Its thinking was taken out with the earlier turns'
    (``includeInContext`` false), and the request went with thinking off (``disabled``, which
    Sonnet 5.5 refuses; ``between_tools`` with the shipped profile), until 2026-11-28."""
    steps = [
        Step("I should wait first.", calls=[("test__sleep", {"seconds": 1.2})]),
        Step("picking up", text="after the cancel"),
    ]
    model = StrictAnthropic(steps, off=off)
    server.default = model
    config = ProviderConfig("anthropic", "claude-opus-4-7", base_url=server.url, api_key_env="")
    settings = Settings({"reasoning.effort": "high", "reasoning.off": off, "reasoning.includeInContext": False})
    conv = Conversation(HistoryStore(tmp_path / "history.db"), settings, config)
    conv.tools = toolbox
    conv.approve = allow
    async for event in conv.send("go"):
        if isinstance(event, ToolCallState) and event.status == "running":
            asyncio.get_running_loop().call_later(0.1, conv.cancel)
    await run(conv, "and now?")
    assert model.refusals == [] and conv.history()[-1].content.text == "after the cancel"
    sent = server.requests[-1].json
    assert sent["thinking"]["type"] == "adaptive"
    step, results = sent["messages"][-2:]
    assert step["content"][0]["type"] == "thinking" and step["content"][0]["thinking"] == "I should wait first."
    assert [b["type"] for b in results["content"]] == ["tool_result", "text"]
    await conv.aclose()


class ThinksThenWaits(StrictAnthropic):
    """Its second reply stops after its first piece of thinking, for the test to press Esc then."""

    def stream(self, step: Step, body: Any) -> Reply:
        reply = super().stream(step, body)
        if self.served == 2:
            first = reply.body.index(b"thinking_delta")
            reply.stall_after, reply.stall = reply.body.index(b"\n\n", first) + 2, 30.0
        return reply


async def test_a_message_after_esc_while_claude_thinks_about_the_results_goes_on_the_loop(tmp_path, server, toolbox):
    """Esc while the model thought about the results left a reply of unfinished thinking. The store
    took it for the loop's answer and stripped the loop's signed thinking with the earlier turns'
    (``includeInContext`` false), then left the stripped reply out: to Anthropic the loop went on
    without its thinking, and the request went with thinking off (``disabled``), until 2026-11-28."""
    steps = [Step("I should look first.", calls=[("demo__now", {})]), Step("Now the time is", text="late")]
    model = ThinksThenWaits([*steps, Step("picking up", text="after the stop")])
    server.default = model
    config = ProviderConfig("anthropic", "claude-opus-4-7", base_url=server.url, api_key_env="")
    settings = Settings({"reasoning.effort": "high", "reasoning.includeInContext": False})
    conv = Conversation(HistoryStore(tmp_path / "history.db"), settings, config)
    conv.tools = toolbox
    conv.approve = allow
    async for event in conv.send("go"):
        if isinstance(event, ThinkingDelta) and model.served == 2:
            conv.cancel()
    thought, answer = conv.history()[-2:]  # the cut reply: its thinking, and an answer with nothing in it
    assert (thought.kind, thought.status, answer.kind, answer.status) == (
        "reasoning",
        "interrupted",
        "assistant",
        "interrupted",
    )
    assert thought.content.thinking and not answer.content.blocks
    await run(conv, "and now?")
    assert model.refusals == [] and conv.history()[-1].content.text == "after the stop"
    sent = server.requests[-1].json
    assert sent["thinking"]["type"] == "adaptive"
    step, results = sent["messages"][-2:]
    assert step["content"][0] == {"type": "thinking", "thinking": "I should look first.", "signature": ANY}
    assert [b["type"] for b in results["content"]] == ["tool_result", "text"]
    await conv.aclose()


async def test_a_server_that_dies_mid_call_answers_as_an_error(tmp_path, server, toolbox):
    conv, model = chat(tmp_path, server, toolbox, final("test__crash"))
    conv.approve = allow
    events = await run(conv)
    assert states(events)[-1] == ("crash", "error")
    # the model is told the server exited, not the SDK's "MCPError: Connection closed"
    assert results(conv) == ["not finished: the MCP server test exited while the call ran (the server exited)"]
    assert model.refusals == [] and conv.history()[-1].content.text == "finished"
    assert toolbox.connections["test"].state == "failed"
    assert "test__crash" not in [t.name for t in toolbox.definitions()]  # a failed server offers nothing


async def test_the_step_limit_stops_the_loop_with_a_note_and_a_whole_history(tmp_path, server, toolbox):
    steps = [Step(f"step {i}", calls=[("demo__add", {"a": i, "b": 1})]) for i in range(5)]
    conv, model = chat(tmp_path, server, toolbox, [*steps, Step("done", text="done")], **{"tools.maxSteps": 2})
    conv.approve = allow
    events = await run(conv)
    assert [s for s in states(events) if s[1] == "done"] == [("add", "done"), ("add", "done")]
    assert any(isinstance(e, Notice) and "tools.maxSteps" in e.message for e in events)
    assert model.served == 2
    messages = compile_history(conv.history(), conv.settings)
    assert messages[-1].speaker == "tool"


async def test_servers_never_see_tractuis_api_keys(tmp_path, server, toolbox, monkeypatch):
    conv, _ = chat(tmp_path, server, toolbox, [Step("look", calls=[("demo__now", {})]), Step("ok", text="ok")])
    conv.approve = allow
    result = await toolbox.connections["demo"].call("now", {})
    assert not result.is_error
    # the test server died in an earlier test of this module; start a fresh one to read its environment
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")  # what tractui sets for itself stays its own
    box = Toolbox(
        McpConfig(servers={"env": McpServer(command=sys.executable, args=[str(HERE / "mcp_test_server.py")])}),
        log_dir=tmp_path,
        consent=ConsentPolicy(allow_all=True),
    )
    box.start()
    await box.settled(60)
    names = (await box.connections["env"].call("environment", {})).content[0].text.split()
    await box.aclose()
    assert "OPENAI_API_KEY" not in names and "PATH" in names
    assert "PYDANTIC_DISABLE_PLUGINS" not in names


@pytest.mark.parametrize("where", ["env", "headers"])
async def test_a_key_variable_in_a_servers_env_or_headers_is_refused(tmp_path, monkeypatch, where):
    """Refused before anything starts or connects: the key never reaches the server (a listener
    on the URL would have received it in the Authorization header)."""
    from loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-0123456789")
    async with LoopbackServer() as listener:
        server = (
            McpServer(command=sys.executable, args=["-c", "pass"], env={"TOKEN": "${OPENAI_API_KEY}"})
            if where == "env"
            else McpServer(url=f"{listener.url}/mcp", headers={"Authorization": "Bearer ${OPENAI_API_KEY}"})
        )
        config = McpConfig(servers={"leaky": server})
        box = Toolbox(config, log_dir=tmp_path, consent=ConsentPolicy(), forbidden_env=frozenset({"OPENAI_API_KEY"}))
        box.start()
        await box.settled(30)
        connection = box.connections["leaky"]
        assert connection.state == "failed" and "API key variable" in connection.reason
        assert connection.reason.startswith(f"{where.rstrip('s')} ")
        await box.aclose()
        assert listener.requests == []


async def test_a_huge_result_is_cut_to_the_budget_with_the_cut_marked(tmp_path, server):
    box = Toolbox(
        McpConfig(servers={"t": McpServer(command=sys.executable, args=[str(HERE / "mcp_test_server.py")])}),
        log_dir=tmp_path,
        consent=ConsentPolicy(allow_all=True),
    )
    box.start()
    await box.settled(60)
    conv, model = chat(tmp_path, server, box, final("t__huge", {"words": 20000}), **{"tools.maxResultTokens": 500})
    events = await run(conv)
    result = next(e for e in events if isinstance(e, ToolCallState) and e.status == "done").result
    assert result.startswith("word0 word1") and "cut by tractui" in result
    assert conv.counter.count(result.split("\n[…")[0]) <= 500
    assert CUT.split("{")[0] in result and model.refusals == []
    await box.aclose()


# the Anthropic models by how they turn thinking off (reasoning.off), and what the loop is sent with
CLAUDES = {
    "claude-opus-4-7": ("disabled", {"type": "disabled"}),
    "claude-sonnet-5-5": ("between_tools", {"type": "between_tools"}),
    # cannot: the loop goes as it is (blocks bound to another prefix dropped, as for every request to it)
    "claude-opus-5-5": ("never", {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}),
}


@pytest.mark.parametrize("after", [*CLAUDES, "gemini"])
async def test_a_profile_switched_mid_loop_sends_the_other_models_steps_as_its_rules_allow(
    tmp_path, server, toolbox, after
):
    """Kimi makes the first call; while the user is asked, they load another profile: its request
    carries Kimi's step without a signature (Anthropic: with thinking off where the model can turn
    it off; Gemini: the placeholder)."""
    conv, kimi = chat(tmp_path, server, toolbox, final("demo__add", {"a": 2, "b": 2}))
    claude = after in CLAUDES
    off, thinking = CLAUDES.get(after, ("disabled", None))
    other = (
        StrictAnthropic([Step("continuing", text="four")], off=off)
        if claude
        else StrictGemini([Step("continuing", text="four")])
    )
    provider, model = ("anthropic", after) if claude else ("gemini", "gemini-3-pro-preview")

    async def switch_then_allow(request: ToolRequest) -> Decision:
        server.default = other
        settings = Settings({"reasoning.effort": "high", "reasoning.off": off} if claude else {})
        conv.switch_profile(ProviderConfig(provider, model, base_url=server.url, api_key_env=""), settings, after)
        return Decision("once")

    conv.approve = switch_then_allow
    await run(conv)
    assert kimi.refusals == [] and other.refusals == []
    assert conv.history()[-1].content.text == "four"
    sent = server.requests[-1].json
    if claude:
        assert sent["thinking"] == thinking
        assert sent.get("output_config") == ({"effort": "high"} if off == "never" else None)
    else:
        call = next(p for c in sent["contents"] for p in c["parts"] if "functionCall" in p)
        assert call["thoughtSignature"] == "skip_thought_signature_validator"


async def test_a_history_left_by_a_killed_process_goes_on_whole(tmp_path, server, toolbox):
    """The reply asked for a tool, then the process died before the result was stored."""
    conv, model = chat(tmp_path, server, toolbox, [Step("fresh start", text="resumed")])
    store = conv.store
    session = store.create_session()
    user = store.append(session, "user", Content.human("before the crash"))
    stamps = {"provider": "openai", "model": "kimi-k2.6"}
    model.issued["functions.demo__now:99"] = "thinking before the crash"
    store.append(
        session,
        "assistant",
        Content(
            speaker="ai",
            blocks=[
                ThinkingBlock(thought="thinking before the crash"),
                ToolCallBlock(id="functions.demo__now:99", name="demo__now", arguments="{}"),
            ],
            metadata=stamps,
        ),
        parent_id=user.id,
    )
    conv.open_session(session)
    await run(conv, "are you there?")
    assert model.refusals == []
    sent = server.requests[-1].json["messages"]
    assert {"role": "tool", "tool_call_id": "functions.demo__now:99", "content": UNANSWERED} in sent


def fresh(tmp_path: Path, **servers: McpServer) -> Toolbox:
    """A toolbox of its own, for a test that breaks or stops its servers."""
    return Toolbox(McpConfig(servers=servers), log_dir=tmp_path / "logs", consent=ConsentPolicy())


DEMO = McpServer(command=sys.executable, args=["-m", "tractui.tools.demo_server"])
TEST = McpServer(command=sys.executable, args=[str(HERE / "mcp_test_server.py")])


NOT_STARTED = "not run: the user stopped the reply before this call started"


def results(conv: Conversation) -> list[str]:
    return [str(c.content.blocks[0].content) for c in conv.history() if c.kind == "tool"]


@contextlib.asynccontextmanager
async def remembering(tmp_path: Path) -> AsyncIterator[tuple[Toolbox, list[str]]]:
    """The test server in a toolbox of its own, started, and the tools an "always" is saved for."""
    box = fresh(tmp_path, test=TEST)
    saved: list[str] = []
    box.consent = ConsentPolicy(remember=lambda server, tool, fingerprint: saved.append(tool))
    box.start()
    try:
        assert await box.settled(60)
        yield box, saved
    finally:
        await box.aclose()


async def test_a_call_to_a_server_that_failed_is_answered_at_once_and_nothing_is_saved(tmp_path, server):
    """The server crashed; the model still calls one of its tools: the user is not asked (an
    "always" would be saved in config.toml for a call that cannot run), and the model reads why."""
    async with remembering(tmp_path) as (box, saved):
        conv, model = chat(tmp_path, server, box, final("test__crash"))
        asked, always = answering("always")

        conv.approve = always
        await run(conv)
        connection = box.connections["test"]
        assert connection.state == "failed"  # noticed as the call failed, before the next request
        model.steps, model.served = final("test__huge", {"words": 3}), 0
        events = await run(conv, "and now something long")
        assert asked == ["crash"] and saved == ["crash"]
        assert states(events) == [("huge", "not_run")]  # no "waiting": no question
        told = f"not run: the MCP server test failed ({connection.reason})"
        assert results(conv)[-1] == told and connection.reason
        assert server.requests[-1].json["messages"][-1]["content"] == told and model.refusals == []


async def test_the_request_after_a_call_its_server_crashed_under_offers_none_of_its_tools(tmp_path, server):
    """The crash was the round's last call: the next request is built from the failed server's
    state, not from the moment before its owner noticed (it offered all its tools)."""
    box = fresh(tmp_path, demo=DEMO, test=TEST)
    box.start()
    try:
        assert await box.settled(60)
        conv, model = chat(tmp_path, server, box, final("test__crash"))
        conv.approve = allow
        await run(conv)
        offered = [t["function"]["name"] for t in server.requests[-1].json.get("tools", [])]
        assert offered and not [name for name in offered if name.startswith("test__")]
        assert model.refusals == [] and conv.history()[-1].content.text == "finished"
    finally:
        await box.aclose()


async def test_a_call_after_one_its_server_crashed_under_is_answered_without_asking(tmp_path, server):
    """Two calls to one server in a round; the first crashes it: the second is not asked about
    (an "always" would be saved for a call that cannot run), it is answered at once."""
    async with remembering(tmp_path) as (box, saved):
        calls = [("test__crash", {}), ("test__huge", {"words": 3})]
        conv, model = chat(tmp_path, server, box, [Step("two calls", calls=calls), Step("done", text="finished")])
        asked, always = answering("always")

        conv.approve = always
        events = await run(conv)
        assert asked == ["crash"] and saved == ["crash"]
        assert states(events)[-2:] == [("crash", "error"), ("huge", "not_run")]  # no "waiting": no question
        assert results(conv)[-1] == "not run: the MCP server test failed (the server exited)"
        assert model.refusals == [] and server.requests[-1].json.get("tools", []) == []


async def test_an_always_given_after_the_server_failed_under_the_question_is_not_kept(tmp_path, server):
    """The server died while the user was asked: "always" was still saved in config.toml for a
    call that was then not run. Now neither: the model reads why."""
    async with remembering(tmp_path) as (box, saved):
        conv, model = chat(tmp_path, server, box, final("test__huge", {"words": 3}))
        connection = box.connections["test"]

        async def always_once_it_died(request: ToolRequest) -> Decision:
            await connection.stop()  # as a crash while the question is open
            while connection.state == "ready":
                await asyncio.sleep(0.02)
            return Decision("always")

        conv.approve = always_once_it_died
        events = await run(conv)
        assert saved == [] and states(events)[-1] == ("huge", "not_run")
        assert results(conv)[-1].startswith("not run: the MCP server test") and model.refusals == []


async def test_esc_at_the_question_answers_the_call_as_not_run(tmp_path, server, toolbox):
    """The call waiting for consent never started: it is not "cancelled before it finished"."""
    steps = [Step("two calls", calls=[("demo__add", {"a": 1, "b": 2}), ("demo__now", {})]), Step("x", text="x")]
    conv, _ = chat(tmp_path, server, toolbox, steps)

    async def esc(request: ToolRequest) -> Decision:  # as the app's Esc: the reply is cancelled
        conv.cancel()
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    conv.approve = esc
    events = await run(conv)
    assert states(events) == [("add", "waiting"), ("add", "cancelled"), ("now", "cancelled")]  # the screen told of both
    assert results(conv) == [NOT_STARTED] * 2


async def test_esc_while_a_call_runs_says_which_call_had_started(tmp_path, server):
    box = fresh(tmp_path, demo=DEMO, test=TEST)
    box.start()
    try:
        assert await box.settled(60)
        calls = [("demo__add", {"a": 1, "b": 2}), ("test__sleep", {"seconds": 30}), ("demo__now", {})]
        conv, _ = chat(tmp_path, server, box, [Step("three calls", calls=calls), Step("after", text="after")])
        conv.approve = allow
        async for event in conv.send("go"):
            if isinstance(event, ToolCallState) and event.status == "running" and event.tool == "sleep":
                asyncio.get_running_loop().call_later(0.1, conv.cancel)
        assert results(conv) == ["3", "cancelled by the user before it finished", NOT_STARTED]
    finally:
        await box.aclose()


@pytest.mark.parametrize("how", ["/tools", "tools.enabled", "profile"])
async def test_a_call_whose_tool_was_withdrawn_while_it_waited_is_told_why(tmp_path, server, how):
    """The model was offered demo__add; while the call before it was asked about, the user switched
    it off (in /tools, or every tool with tools.enabled) or loaded a profile without its server."""
    box = fresh(tmp_path, demo=DEMO)
    box.start()
    try:
        assert await box.settled(60)
        steps = [Step("two calls", calls=[("demo__now", {}), ("demo__add", {"a": 1, "b": 2})]), Step("ok", text="ok")]
        conv, model = chat(tmp_path, server, box, steps)

        async def withdraw_then_allow(request: ToolRequest) -> Decision:
            if how == "/tools":
                box.switched_off.add(("demo", "add"))
            elif how == "tools.enabled":
                conv.settings.set("tools.enabled", "false")
            else:
                conv.switch_profile(conv.config, conv.settings, "local", ())
            return Decision("once")

        conv.approve = withdraw_then_allow
        events = await run(conv)
        told = {
            "/tools": "not run: the user switched the tool demo.add off (/tools)",
            "tools.enabled": "not run: the user switched tools off for this session (tools.enabled false)",
            "profile": "not run: the MCP server demo was stopped by a profile switch",
        }[how]
        assert results(conv)[-1] == told and states(events)[-1] == ("add", "not_run")
        assert model.refusals == [] and conv.history()[-1].content.text == "ok"
    finally:
        await box.aclose()


async def test_calls_of_a_reply_cut_short_by_an_error_are_not_said_to_be_cancelled_by_the_user(
    tmp_path, server, toolbox
):
    from loopback import Request

    conv, model = chat(tmp_path, server, toolbox, final("demo__add", {"a": 1, "b": 2}))

    def cut(request: Request):
        reply = model(request)
        reply.cut_after = reply.body.index(b'"finish_reason": "tool_calls"')  # the call whole, the reply not
        return reply

    server.default = cut
    conv.approve = allow
    await run(conv)
    assert results(conv) == ["not run: the reply that asked for it ended with an error before the call could start"]
    assert [c.content.metadata["status"] for c in conv.history() if c.kind == "tool"] == ["not_run"]
