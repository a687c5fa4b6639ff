"""Today's models: each shipped profile's request, as its vendor's strict server checks it; the retired
shapes refused with the vendor's words and a line naming the setting to change; Claude's newest
thinking recordings replayed and sent back byte for byte; model lists from each protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackServer, Reply, Request, encode_sse, error, json_body, openai_chat_reply, sse
from replay import collect, make
from strict_servers import (
    ANTHROPIC_BUDGET_GONE,
    ANTHROPIC_CANNOT_DISABLE,
    DEEPSEEK_RUNS,
    RESPONSES_EFFORT,
    Step,
    StrictChat,
    StrictResponses,
    responses_parameters,
)

from tractui.config.paths import shipped_dir
from tractui.config.profiles import ProfileStore
from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage
from tractui.core.events import Notice, StreamError, UsageEvent
from tractui.core.settings import EFFORTS, Settings
from tractui.providers import make_provider
from tractui.providers.config import ProviderConfig
from tractui.providers.models import ModelListError

KIMI_TEMPERATURE = "invalid temperature: only 1 is allowed for this model"
MOONSHOT_NOT_FOUND = "Not found the model {model} or Permission denied"
ADAPTIVE_ONLY = (
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-5",
    "claude-fable",
)


# thinking {type: disabled} refused: Opus 5.5, Fable 5.1 and later (never), Sonnet 5.5 (between_tools instead)
CANNOT_DISABLE = ("claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-fable-5-2")


def vendor_check(profile: str, body: dict[str, Any]) -> str | None:
    """What the vendor's API refuses in a request, in its own words (only rules we can quote)."""
    model = body.get("model", "")
    kind = (body.get("thinking") or {}).get("type")
    if profile.startswith("claude") and kind == "enabled" and model.startswith(ADAPTIVE_ONLY):
        return ANTHROPIC_BUDGET_GONE
    if profile.startswith("claude") and kind == "disabled" and model in CANNOT_DISABLE:
        return ANTHROPIC_CANNOT_DISABLE
    if "input" in body:  # the Responses API: the efforts each model takes, no temperature while reasoning
        return responses_parameters(body)
    if profile.startswith("kimi"):
        if "temperature" in body and body["temperature"] != 1:
            return KIMI_TEMPERATURE
        if model in ("kimi-k2-thinking", "kimi-k2-thinking-turbo", "kimi-k2-0905-preview"):
            return MOONSHOT_NOT_FOUND.format(model=model)
    return None


def one_reply(protocol: str) -> Reply:
    if protocol == "anthropic":
        events = [
            {
                "type": "message_start",
                "message": {"id": "m", "model": "x", "content": [], "usage": {"input_tokens": 5}},
            },
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
            {"type": "message_stop"},
        ]
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]))
    if protocol == "gemini":
        chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}
        return Reply(body=encode_sse([chunk], done=False))
    if protocol == "openai-responses":
        events = [
            {
                "type": "response.output_text.delta",
                "item_id": "m",
                "output_index": 0,
                "content_index": 0,
                "delta": "ok",
            },
            {
                "type": "response.completed",
                "response": {"status": "completed", "usage": {"input_tokens": 5, "output_tokens": 1}},
            },
        ]
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]))
    return openai_chat_reply("ok")


def strict_server(profile: str, protocol: str):
    def handle(request: Request) -> Reply:
        body = request.json or {}
        problem = vendor_check(profile, body)
        if problem == MOONSHOT_NOT_FOUND.format(model=body.get("model")):
            return error(404, {"error": {"message": problem, "type": "resource_not_found_error"}})
        if problem is not None:
            return error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}})
        return one_reply(protocol)

    return handle


SHIPPED = sorted(p.stem for p in shipped_dir("profiles").glob("*.toml") if p.stem != "demo")


def pointed(profile_name: str, server: LoopbackServer) -> tuple[ProviderConfig, Settings]:
    profile = ProfileStore().load(profile_name)
    path = {"anthropic": "", "gemini": ""}.get(profile.provider, "/v1")
    config = ProviderConfig(profile.provider, profile.model, base_url=f"{server.url}{path}", api_key_env="")
    return config, profile.make_settings()


@pytest.mark.parametrize("thinking", ["on", "off"])
@pytest.mark.parametrize("name", SHIPPED)
async def test_every_shipped_profile_builds_a_request_its_vendor_accepts(
    loopback, name, thinking, tmp_path, monkeypatch
):
    """As shipped, and with ``/set reasoning.enabled false``."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    config, settings = pointed(name, loopback)
    settings.set("reasoning.enabled", thinking == "on")
    loopback.default = strict_server(name, config.provider)
    provider = make_provider(config)
    events = [e async for e in provider.stream([Content.human("hi")], settings)]
    await provider.aclose()
    errors = [e for e in events if isinstance(e, StreamError)]
    assert errors == [], errors
    body = loopback.requests[-1].json
    assert "temperature" not in body or name in ("qwen3-vllm",)


DROP = {"block_binding": {"prefix_mismatch_behavior": "drop_block"}}  # preserved thinking's prefix check
SHAPES: dict[str, dict[str, Any]] = {  # what each shipped profile asks of its server, as the vendors document it
    "claude": {"thinking": {"type": "adaptive", "display": "summarized", **DROP}, "output_config": {"effort": "high"}},
    "claude-opus": {
        "thinking": {"type": "adaptive", "display": "summarized", **DROP},
        "output_config": {"effort": "high"},
    },
    "deepseek": {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
    "deepseek-flash": {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
    "kimi": {"thinking": {"type": "enabled"}, "max_completion_tokens": 32768},
    "kimi-k3": {"reasoning_effort": "high", "max_completion_tokens": 32768},
    "qwen3-vllm": {"chat_template_kwargs": {"enable_thinking": True}},
    "gpt-oss-ollama": {"reasoning_effort": "medium"},
    "openrouter": {"reasoning": {"effort": "high"}},
    "gpt-5": {"reasoning": {"effort": "medium", "summary": "auto"}, "include": ["reasoning.encrypted_content"]},
    "gpt-6": {"reasoning": {"effort": "medium", "summary": "auto"}, "include": ["reasoning.encrypted_content"]},
    "gpt-6-sol": {"reasoning": {"effort": "medium", "summary": "auto"}, "include": ["reasoning.encrypted_content"]},
    # MiniMax marks max_tokens deprecated in favour of max_completion_tokens (platform.minimax.io, 2026-11-28)
    "minimax": {"max_completion_tokens": 32768, "max_tokens": None},
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shipped_profiles_ask_for_thinking_the_current_way(name, tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    profile = ProfileStore().load(name)
    body = make_provider(profile.provider_config()).build_request([Content.human("hi")], profile.make_settings())
    assert {k: body.get(k) for k in SHAPES[name]} == SHAPES[name]


def test_gemini_and_gpt5_profiles_send_levels_and_efforts_they_take(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    store = ProfileStore()
    for name, level in (("gemini-pro", "high"), ("gemini-flash", "medium")):
        profile = store.load(name)
        body = make_provider(profile.provider_config()).build_request([Content.human("hi")], profile.make_settings())
        assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": level}
        settings = profile.make_settings()
        settings.set("reasoning.effort", "medium")
        body = make_provider(profile.provider_config()).build_request([Content.human("hi")], settings)
        level = body["generationConfig"]["thinkingConfig"]["thinkingLevel"]
        assert level in profile.settings["reasoning.efforts"] and level == "medium"  # 3.1 Pro takes medium too
        settings.set("reasoning.effort", "minimal")  # neither 3.1 Pro nor 3.8 Flash takes minimal (a 400)
        body = make_provider(profile.provider_config()).build_request([Content.human("hi")], settings)
        assert body["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "low"
    gpt = store.load("gpt-5")
    settings = gpt.make_settings()
    settings.set("reasoning.effort", "max")  # not a GPT-5.x value: the nearest it takes
    body = make_provider(gpt.provider_config()).build_request([Content.human("hi")], settings)
    assert body["reasoning"] == {"effort": "xhigh", "summary": "auto"} and body["store"] is False


@pytest.mark.parametrize(("name", "effort"), [("gpt-6", "low"), ("gpt-6-sol", "low"), ("gpt-5", "none")])
async def test_reasoning_off_on_openai_goes_the_only_way_each_model_takes(
    loopback, name, effort, tmp_path, monkeypatch
):
    """GPT-6.2 refuses effort none (OpenAI's GPT-6.2 Sol page): reasoning off goes as its lowest
    effort, said once; GPT-5.4 turns reasoning off with none."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    config, settings = pointed(name, loopback)
    settings.set("reasoning.enabled", False)
    loopback.default = strict_server(name, config.provider)
    provider = make_provider(config)
    events = [e async for e in provider.stream([Content.human("hi")], settings)]
    await provider.aclose()
    assert [e for e in events if isinstance(e, StreamError)] == []
    assert loopback.requests[-1].json["reasoning"]["effort"] == effort
    notes = [e.message for e in events if isinstance(e, Notice)]
    assert notes == (
        []
        if effort == "none"
        else [f"this model cannot turn reasoning off (reasoning.off never): it reasons at effort {effort}"]
    )


async def test_gpt5_settings_on_gpt62_are_refused_in_openais_words_with_the_setting_to_change(
    loopback, tmp_path, monkeypatch
):
    """``/model gpt-6.2-astra`` from the gpt-5 profile keeps GPT-5.4's efforts: reasoning off sends
    effort none, which GPT-6.2 refuses; the line says which setting to change, and then it goes."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    config, settings = pointed("gpt-5", loopback)
    config = ProviderConfig(config.provider, "gpt-6.2-astra", base_url=config.base_url, api_key_env="")
    settings.set("reasoning.enabled", False)
    loopback.default = strict_server("gpt-5", config.provider)
    provider = make_provider(config)
    events = [e async for e in provider.stream([Content.human("hi")], settings)]
    error_event = next(e for e in events if isinstance(e, StreamError))
    refused = RESPONSES_EFFORT.format(
        effort="none", model="gpt-6.2-astra", values="'low', 'medium', 'high', 'xhigh', and 'max'"
    )
    assert refused in error_event.message and "/set reasoning.efforts" in error_event.message
    assert "\n" not in error_event.message
    settings.set("reasoning.efforts", "low,medium,high,xhigh,max")
    events = [e async for e in provider.stream([Content.human("hi")], settings)]
    await provider.aclose()
    assert [e for e in events if isinstance(e, StreamError)] == []
    assert loopback.requests[-1].json["reasoning"] == {"effort": "low", "summary": "auto"}


@pytest.mark.parametrize(
    ("name", "change", "needle", "hint"),
    [
        (
            "claude-opus",
            {"reasoning.mode": "budget", "reasoning.maxTokens": 4096},
            "thinking.type.enabled",
            "/set reasoning.mode adaptive",
        ),
        ("kimi", {"temperature": 0.7}, KIMI_TEMPERATURE, "/set unset temperature"),
    ],
)
async def test_a_retired_shape_is_refused_with_a_line_naming_the_setting(
    loopback, name, change, needle, hint, tmp_path, monkeypatch
):
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    config, settings = pointed(name, loopback)
    for key, value in change.items():
        settings.set(key, value)
    loopback.default = strict_server(name, config.provider)
    provider = make_provider(config)
    events = [e async for e in provider.stream([Content.human("hi")], settings)]
    await provider.aclose()
    error_event = next(e for e in events if isinstance(e, StreamError))
    assert needle in error_event.message and hint in error_event.message
    assert "\n" not in error_event.message


async def test_a_retired_model_id_suggests_picking_one_with_model(loopback):
    loopback.default = strict_server("kimi", "openai")
    provider = make_provider(
        ProviderConfig("openai", "kimi-k2-thinking", base_url=f"{loopback.url}/v1", api_key_env="")
    )
    events = [e async for e in provider.stream([Content.human("hi")], Settings())]
    await provider.aclose()
    error_event = next(e for e in events if isinstance(e, StreamError))
    assert "Not found the model kimi-k2-thinking" in error_event.message and "/model" in error_event.message


# -- Claude's newest thinking shapes, replayed and sent back --------------------------------------
CLAUDE = FIXTURES / "anthropic_thinking"
RECORDINGS = [
    "claude_sonnet5_stream_thinking_display_omitted",
    "claude_sonnet5_stream_thinking_display_summarized",
    "claude_opus46_stream_adaptive_text_before_thinking",
    "claude_sonnet5_stream_signature_only_thinking_advisor",
]


def recorded_blocks(path: Path) -> list[dict[str, Any]]:
    """The thinking blocks exactly as the recording streamed them: text and signature, per block."""
    blocks: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("data:"):
            continue
        event = json.loads(line[5:])
        index = event.get("index")
        if event.get("type") == "content_block_start" and event["content_block"]["type"] == "thinking":
            blocks[index] = {"type": "thinking", "thinking": "", "signature": ""}
        elif event.get("type") == "content_block_delta" and index in blocks:
            delta = event["delta"]
            blocks[index]["thinking"] += delta.get("thinking", "")
            blocks[index]["signature"] += delta.get("signature", "")
    return [blocks[i] for i in sorted(blocks)]


@pytest.mark.parametrize("name", RECORDINGS)
async def test_claude_thinking_recordings_go_back_byte_for_byte(loopback: LoopbackServer, name: str, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    path = CLAUDE / f"{name}.sse"
    model = json.loads((CLAUDE / f"{name}.meta.json").read_text())["model"]
    loopback.add(sse(path))
    provider = make(loopback, "anthropic", model)
    _, assembler = await collect(provider, Settings({"reasoning.includeInContext": True, "reasoning.format": "native"}))
    reply = assembler.content(metadata={"provider": "anthropic", "model": model})
    assert [b.signature for b in reply.blocks if isinstance(b, ThinkingBlock)] == [
        b["signature"] for b in recorded_blocks(path)
    ]
    loopback.add(one_reply("anthropic"))
    history = [Content.human("first"), reply, Content.human("second")]
    settings = Settings({"reasoning.includeInContext": True, "reasoning.format": "native"})
    await collect(provider, settings, history)
    await provider.aclose()
    sent = loopback.requests[-1].json["messages"][1]["content"]
    assert [b for b in sent if b["type"] == "thinking"] == recorded_blocks(path)


# -- model lists ----------------------------------------------------------------------------------
async def test_an_openai_compatible_list_reads_openrouters_limits(loopback):
    loopback.add(
        json_body(
            {
                "data": [
                    {
                        "id": "deepseek/deepseek-v4-pro",
                        "context_length": 1048576,
                        "top_provider": {"max_completion_tokens": 65536},
                    },
                    {"id": "plain-model"},
                    {"id": ""},
                    "not an object",
                ]
            }
        )
    )
    provider = make_provider(ProviderConfig("openai", "x", base_url=f"{loopback.url}/api/v1", api_key_env=""))
    models = await provider.list_models()
    await provider.aclose()
    assert [(m.id, m.context_limit, m.max_output) for m in models] == [
        ("deepseek/deepseek-v4-pro", 1048576, 65536),
        ("plain-model", None, None),
    ]
    assert loopback.requests[0].path == "/api/v1/models"


async def test_anthropic_lists_every_page_with_context_windows(loopback, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    loopback.add(
        json_body(
            {
                "data": [{"id": "claude-opus-5-5", "max_input_tokens": 1000000, "max_tokens": 128000}],
                "has_more": True,
                "last_id": "claude-opus-5-5",
            }
        ),
        json_body(
            {"data": [{"id": "claude-haiku-5-5", "max_input_tokens": 1000000, "max_tokens": 128000}], "has_more": False}
        ),
    )
    provider = make_provider(ProviderConfig("anthropic", "x", base_url=loopback.url))
    models = await provider.list_models()
    await provider.aclose()
    assert [(m.id, m.context_limit) for m in models] == [("claude-haiku-5-5", 1000000), ("claude-opus-5-5", 1000000)]
    assert loopback.requests[1].query["after_id"] == "claude-opus-5-5"
    assert loopback.requests[0].headers["x-api-key"] == "k"


async def test_gemini_lists_the_models_that_generate(loopback):
    loopback.add(
        json_body(
            {
                "models": [
                    {
                        "name": "models/gemini-3.8-flash",
                        "inputTokenLimit": 1048576,
                        "outputTokenLimit": 65536,
                        "supportedGenerationMethods": ["generateContent"],
                    },
                    {"name": "models/text-embedding-005", "supportedGenerationMethods": ["embedContent"]},
                ],
                "nextPageToken": "",
            }
        )
    )
    provider = make_provider(ProviderConfig("gemini", "x", base_url=loopback.url, api_key_env=""))
    models = await provider.list_models()
    await provider.aclose()
    assert [(m.id, m.context_limit, m.max_output) for m in models] == [("gemini-3.8-flash", 1048576, 65536)]


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (error(401, {"error": {"message": "Invalid API key"}}), "HTTP 401: Invalid API key"),
        (json_body([1, 2]), "no 'data' list"),
    ],
)
async def test_a_refused_or_odd_list_is_one_line(loopback, reply, needle):
    loopback.add(reply)
    provider = make_provider(ProviderConfig("openai", "x", base_url=f"{loopback.url}/v1", api_key_env=""))
    with pytest.raises(ModelListError, match=needle):
        await provider.list_models()
    await provider.aclose()


async def test_a_server_that_is_down_is_one_line():
    provider = make_provider(ProviderConfig("openai", "x", base_url="http://127.0.0.1:9/v1", api_key_env=""))
    with pytest.raises(ModelListError, match="cannot reach"):
        await provider.list_models()
    await provider.aclose()


async def test_thinking_made_under_another_conversation_is_dropped_once_and_the_reply_goes_on(
    loopback, tmp_path, monkeypatch
):
    """Anthropic refuses thinking blocks whose conversation changed since (its system prompt, tools or
    earlier messages): tractui retries once without earlier turns' thinking, and says so."""
    from tractui.conversation.conversation import Conversation
    from tractui.core.events import Notice
    from tractui.store.history import HistoryStore

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    path = CLAUDE / "claude_sonnet5_stream_thinking_display_summarized.sse"
    refused = (
        "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation."
    )

    def anthropic(request: Request) -> Reply:
        earlier = [m for m in request.json["messages"][:-1] if m["role"] == "assistant"]
        if any(b.get("type") == "thinking" for m in earlier for b in m["content"]):
            return error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": refused}})
        return one_reply("anthropic") if len(request.json["messages"]) > 1 else sse(path)

    loopback.default = anthropic
    config = ProviderConfig("anthropic", "claude-sonnet-5", base_url=loopback.url)
    settings = Settings({"reasoning.includeInContext": True, "reasoning.format": "native"})
    conv = Conversation(HistoryStore(tmp_path / "h.db"), settings, config)
    _ = [e async for e in conv.send("first")]
    settings.set("system-prompt", "A new system prompt: the old thinking is bound to the old one.")
    events = [e async for e in conv.send("second")]
    await conv.aclose()
    assert any(isinstance(e, Notice) and "retrying once without it" in e.message for e in events)
    assert not any(isinstance(e, StreamError) for e in events)
    assert conv.history()[-1].content.text == "ok"


@pytest.mark.parametrize("name", ["deepseek", "deepseek-flash"])
async def test_deepseek_thinks_at_the_effort_its_own_table_gives_for_the_one_set(loopback, name, tmp_path, monkeypatch):
    """DeepSeek takes every effort name and runs it as its table says (xhigh as high, minimal as low):
    what the user sets goes as set, so what runs is DeepSeek's answer for that name, not a guess of
    tractui's (which ran xhigh as max); none turns thinking off."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    config, settings = pointed(name, loopback)
    model = StrictChat([Step("", text="ok")], vendor="deepseek")
    loopback.default = model
    provider = make_provider(config)
    for effort in EFFORTS:
        settings.set("reasoning.effort", effort)
        events = [e async for e in provider.stream([Content.human("hi")], settings)]
        assert [e for e in events if isinstance(e, StreamError)] == []
    await provider.aclose()
    assert model.refusals == []
    assert model.ran == [None, *(DEEPSEEK_RUNS[e] for e in EFFORTS[1:])]
    assert loopback.requests[0].json["thinking"] == {"type": "disabled"}


SYSTEM = ("You are the release checker. " * 40).strip()  # a long, repeated prompt: the part worth caching


async def two_turns(provider, settings: Settings) -> list[Usage]:
    """A question, its answer and a second question, as a conversation sends them; each reply's usage."""
    usages = []
    history = [Content.human("first question")]
    for question in ("second question", None):
        events = [e async for e in provider.stream(history, settings)]
        assert [e for e in events if isinstance(e, StreamError)] == []
        usages.append(next(e.usage for e in events if isinstance(e, UsageEvent)))
        if question is not None:
            history += [Content(speaker="ai", blocks=[TextBlock(text="ok")]), Content.human(question)]
    return usages


@pytest.mark.parametrize(("name", "placement"), [("gpt-6", "developer"), ("gpt-6-sol", "developer"), ("gpt-5", None)])
async def test_the_system_prompt_is_in_the_cached_prefix_on_each_openai_model(
    loopback, name, placement, tmp_path, monkeypatch
):
    """GPT-6.2 appends top-level instructions after the input (OpenAI, "Using GPT-6.2"): its profiles send
    the system prompt as a developer message first in the input, so the second turn finds it cached;
    GPT-5.4 still reads instructions first and keeps them."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    config, settings = pointed(name, loopback)
    settings.set("system-prompt", SYSTEM)
    model = StrictResponses([Step("", text="ok")])
    loopback.default = model
    provider = make_provider(config)
    first, second = await two_turns(provider, settings)
    await provider.aclose()
    assert model.refusals == []
    sent = [r.json for r in loopback.requests]
    if placement == "developer":
        assert all("instructions" not in body for body in sent)
        assert all(
            body["input"][0] == {"role": "developer", "content": [{"type": "input_text", "text": SYSTEM}]}
            for body in sent
        )
    else:
        assert all(body["instructions"] == SYSTEM for body in sent)
    assert any(SYSTEM in piece for piece in model.cached[1])
    assert second.cached_input_tokens > len(SYSTEM) // 4 and first.cached_input_tokens == 0


async def test_instructions_on_gpt62_miss_the_cache_that_a_developer_message_gets(loopback, tmp_path, monkeypatch):
    """``/set system-prompt-as instructions`` on the gpt-6 profile: the prompt goes after the input, and the
    second turn caches only the conversation before it; the developer message it sends by default is
    cached with the prefix."""
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path))
    cached = {}
    for placement in ("instructions", "developer"):
        config, settings = pointed("gpt-6", loopback)
        settings.set("system-prompt", SYSTEM)
        settings.set("system-prompt-as", placement)
        model = StrictResponses([Step("", text="ok")])
        loopback.default = model
        provider = make_provider(config)
        _, second = await two_turns(provider, settings)
        await provider.aclose()
        assert model.refusals == []
        assert any(SYSTEM in piece for piece in model.cached[1]) == (placement == "developer")
        cached[placement] = second.cached_input_tokens
    assert cached["developer"] - cached["instructions"] >= len(SYSTEM) // 4
