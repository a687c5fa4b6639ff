"""Tool loops end to end: a real MCP server over stdio (the shipped demo), a strict loopback model
per wire protocol, a real SQLite history. Thinking comes before every call; the servers refuse,
with the vendor's own words, any request that lost a step's thinking, signature or reasoning item."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from loopback import LoopbackServer
from strict_servers import Step, Strict, StrictAnthropic, StrictChat, StrictGemini, StrictResponses

from tractui.config.mcp import McpConfig, McpServer
from tractui.conversation.conversation import Conversation
from tractui.core.events import ToolCallState
from tractui.core.settings import Settings
from tractui.providers.config import ProviderConfig
from tractui.store.history import HistoryStore
from tractui.tools.consent import ConsentPolicy, Decision, ToolRequest
from tractui.tools.toolbox import Toolbox

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEMO = McpServer(command=sys.executable, args=["-m", "tractui.tools.demo_server"])


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def toolbox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Toolbox]:
    """The shipped demo server, started once for the module (it takes most of a second)."""
    box = Toolbox(
        McpConfig(servers={"demo": DEMO}),
        log_dir=tmp_path_factory.mktemp("mcp-logs"),
        consent=ConsentPolicy(),
    )
    box.start()
    assert await box.settled(60)
    assert box.connections["demo"].state == "ready", box.connections["demo"].reason
    yield box
    await box.aclose()


@pytest.fixture
def server(module_loopback: LoopbackServer) -> LoopbackServer:
    """A fresh loopback server on the module's loop (the MCP servers live there)."""
    return module_loopback


def loop_steps() -> list[Step]:
    return [
        Step("I should add first.", calls=[("demo__add", {"a": 2, "b": 3})]),
        Step("Now multiply the sum.", calls=[("demo__multiply", {"a": 5, "b": 7})]),
        Step("Both done; I can answer.", text="2 + 3 = 5, and 5 × 7 = 35."),
    ]


PROTOCOLS: dict[str, tuple[str, str, str]] = {  # id -> provider, model, path on the loopback server
    "kimi": ("openai", "kimi-k2.6", "/v1"),
    "deepseek": ("openai", "deepseek-v4-pro", "/v1"),
    "anthropic": ("anthropic", "claude-opus-4-7", ""),
    "gemini": ("gemini", "gemini-3-pro-preview", ""),
    "responses": ("openai-responses", "gpt-5.1", "/v1"),
    "responses-gpt6.2": ("openai-responses", "gpt-6.2-astra", "/v1"),  # no effort none; drops after prefix edits
}
GPT62 = {  # as the gpt-6 profile, with a system prompt: a developer message first in every step's input
    "reasoning.efforts": "low,medium,high,xhigh,max",
    "reasoning.off": "never",
    "system-prompt-as": "developer",
    "system-prompt": "Check each step.",
}


def strict_model(kind: str) -> Strict:
    steps = loop_steps()
    match kind:
        case "kimi":
            return StrictChat(steps, vendor="kimi")
        case "deepseek":
            return StrictChat(steps, vendor="deepseek")
        case "anthropic":
            return StrictAnthropic(steps)
        case "gemini":
            return StrictGemini(steps)
        case _:
            return StrictResponses(steps)


def settings_for(kind: str, **extra: object) -> Settings:
    values: dict[str, object] = {"reasoning.includeInContext": False}
    if kind == "anthropic":
        values["reasoning.effort"] = "high"
    if kind.startswith("responses") or kind == "gemini":
        values["reasoning.effort"] = "high"
    if kind == "responses-gpt6.2":
        values |= GPT62
    return Settings(values | extra)


def conversation(tmp_path: Path, server: LoopbackServer, kind: str, box: Toolbox, **extra: object) -> Conversation:
    provider, model, path = PROTOCOLS[kind]
    config = ProviderConfig(provider, model, base_url=f"{server.url}{path}", api_key_env="")
    conv = Conversation(HistoryStore(tmp_path / "history.db"), settings_for(kind, **extra), config)
    conv.tools = box
    return conv


async def allow_for_session(request: ToolRequest) -> Decision:
    return Decision("session")


async def run(conv: Conversation, text: str) -> list[object]:
    return [event async for event in conv.send(text)]


@pytest.mark.parametrize("kind", list(PROTOCOLS))
async def test_a_three_step_loop_keeps_every_steps_thinking(tmp_path, server, toolbox, kind):
    model = strict_model(kind)
    server.default = model
    conv = conversation(tmp_path, server, kind, toolbox)
    conv.approve = allow_for_session
    events = await run(conv, "What is (2 + 3) × 7?")
    assert model.refusals == [] and getattr(model, "degraded", []) == [] and getattr(model, "prefix_drops", []) == []
    finished = [e for e in events if isinstance(e, ToolCallState) and e.status == "done"]
    assert [(e.tool, e.result) for e in finished] == [("add", "5"), ("multiply", "35")]
    assert model.served == 3
    assert conv.history()[-1].content.text == "2 + 3 = 5, and 5 × 7 = 35."
    kinds = [c.kind for c in conv.history()]
    assert kinds.count("tool") == 2 and kinds[0] == "user"
    sent = server.requests[-1].json
    assert "tools" in sent and any("demo__add" in str(t) for t in sent["tools"])
    await conv.aclose()


@pytest.mark.parametrize("kind", list(PROTOCOLS))
async def test_the_strict_servers_refuse_a_loop_that_lost_its_thinking(tmp_path, server, toolbox, kind, monkeypatch):
    """The same loop with the current-turn rule switched off (the earlier turns' policy applied to the
    loop too): the servers that need the thinking back answer their vendor's 400. The rule has two
    halves: the compile step keeps the loop's thinking, the providers send it natively."""
    import importlib

    monkeypatch.setattr(importlib.import_module("tractui.store.compile"), "_open_loop_start", len)
    for name in ("openai_chat", "anthropic", "gemini", "openai_responses"):
        module = importlib.import_module(f"tractui.providers.{name}")
        monkeypatch.setattr(module, "current_turn_start", len)
    model = strict_model(kind)
    server.default = model
    conv = conversation(tmp_path, server, kind, toolbox)
    conv.approve = allow_for_session
    await run(conv, "What is (2 + 3) × 7?")
    if kind == "anthropic":  # a loop without thinking blocks: tractui sends its steps with thinking disabled
        assert model.refusals == [] and server.requests[-1].json["thinking"] == {"type": "disabled"}
    elif kind == "gemini":  # signatures ride on the call parts, which go back whatever the policy
        assert model.refusals == []
    elif kind.startswith("responses"):  # accepted, but the model lost its reasoning between steps
        assert isinstance(model, StrictResponses) and model.degraded
    else:
        assert model.refusals, "a strict server must refuse a tool loop without its thinking"
    await conv.aclose()


async def test_gpt62_with_reasoning_off_keeps_every_steps_reasoning(tmp_path, server, toolbox):
    """GPT-6.2 cannot turn reasoning off (it refuses effort none): off goes as its lowest effort, so
    the model still reasons, and each step's encrypted reasoning must be asked for and go back
    (without it OpenAI refuses the next step: the call comes without its required reasoning item)."""
    model = StrictResponses(loop_steps())
    server.default = model
    conv = conversation(tmp_path, server, "responses-gpt6.2", toolbox, **{"reasoning.enabled": False})
    conv.approve = allow_for_session
    await run(conv, "What is (2 + 3) × 7?")
    assert model.refusals == [] and model.degraded == [] and model.prefix_drops == []
    assert model.served == 3
    assert {r.json["reasoning"]["effort"] for r in server.requests[-3:]} == {"low"}
    assert all(r.json["input"][0]["role"] == "developer" for r in server.requests[-3:])
    assert all("Check each step." in model.cached[k][1] for k in (1, 2))  # each step found the prompt cached
    assert conv.history()[-1].content.text == "2 + 3 = 5, and 5 × 7 = 35."
    await conv.aclose()
