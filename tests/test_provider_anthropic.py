"""Anthropic Messages API over real loopback HTTP: recordings, requests, thinking round-trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackServer, encode_sse, error, json_body, openai_chat_reply, sse
from replay import COMBOS, collect, combo_settings, make, meta_of, settings, stamped

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, Usage
from tractui.core.events import Notice, RetryWait, StreamError, TextDelta
from tractui.core.settings import Settings
from tractui.providers.anthropic import INTERLEAVED_BETA, TEMPERATURE_NOTICE, keeps_earlier_thinking

KEY = "sk-ant-loopback-0123456789"
MODEL = "claude-sonnet-4-0"
RECORDINGS = sorted((FIXTURES / "anthropic_thinking").glob("*.sse"))


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-loopback-0123456789")


def anthropic_stream(*events: dict[str, Any]) -> bytes:
    return encode_sse(list(events), done=False, event_names=[e["type"] for e in events])


def reply(text: str, thinking: str = "", signature: str = "sig-new") -> bytes:
    """A small Messages stream: optional signed thinking block, then text."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"model": MODEL, "usage": {"input_tokens": 10, "output_tokens": 1}}}
    ]
    index = 0
    if thinking:
        events += [
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thinking}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": signature}},
            {"type": "content_block_stop", "index": 0},
        ]
        index = 1
    events += [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": index},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return anthropic_stream(*events)


def expected_usage(raw: dict[str, Any]) -> Usage:
    cached, written = raw.get("cache_read_input_tokens", 0), raw.get("cache_creation_input_tokens", 0)
    return Usage(
        input_tokens=raw["input_tokens"] + cached + written,
        output_tokens=raw["output_tokens"],
        reasoning_tokens=(raw.get("output_tokens_details") or {}).get("thinking_tokens", 0),
        cached_input_tokens=cached,
        cache_write_tokens=written,
    )


def check_blocks(content: Content, expected: list[dict[str, Any]]) -> None:
    tools = {b.id: b for b in content.blocks if isinstance(b, ToolCallBlock)}
    results = [e for e in expected if "id_ref" in e]
    for result in results:  # server tool results travel with their call
        assert tools[result["id_ref"]].provider_metadata["anthropic_result"]["type"] == result["type"]
    wanted = [e for e in expected if "id_ref" not in e]
    assert len(content.blocks) == len(wanted)
    for block, want in zip(content.blocks, wanted, strict=True):
        if want["type"] == "thinking":
            assert isinstance(block, ThinkingBlock) and not block.is_hidden
            assert block.thought == want["thinking"] and block.source_field == "thinking"
            assert len(block.signature or "") == want["signature_len"]
        elif want["type"] == "redacted_thinking":
            assert isinstance(block, ThinkingBlock) and block.is_hidden and block.thought == ""
            assert len(block.provider_metadata["data"]) == want["data_len"]
        elif want["type"] == "text":
            assert isinstance(block, TextBlock) and block.text == want["text"]
        else:
            assert isinstance(block, ToolCallBlock) and (block.id, block.name) == (want["id"], want["name"])
            assert json.loads(block.arguments or "{}") == want["input"]
            assert block.provider_metadata["anthropic_type"] == want["type"]


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [1, 7])
async def test_recording_replays_to_its_expected_result(loopback: LoopbackServer, path: Path, seed: int) -> None:
    meta = meta_of(path)
    loopback.add(sse(path, seed=seed, max_chunk=40))
    events, assembler = await collect(make(loopback, "anthropic", MODEL), settings(reasoning__maxTokens=2048))
    assert assembler.error is None
    assert assembler.reasoning == meta["expected_reasoning"]
    assert assembler.text == meta["expected_text"]
    assert assembler.usage == expected_usage(meta["expected_usage"])
    assert assembler.finish_reason == meta["expected_stop_reason"]
    check_blocks(assembler.content(), meta["expected_blocks"])
    assert not any(isinstance(e, TextDelta) and "Eq" in e.text[:2] for e in events)  # opaque data never shown


async def test_request_shape_headers_and_thinking(loopback: LoopbackServer) -> None:
    loopback.add(sse(reply("hi")))
    config = settings(reasoning__maxTokens="4k", max_tokens=16000, system_prompt="Be brief.")
    await collect(make(loopback, "anthropic", MODEL), config)
    request = loopback.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY and "authorization" not in request.headers
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["anthropic-beta"] == INTERLEAVED_BETA
    body = request.json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["max_tokens"] == 16000 and body["stream"] is True
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def test_no_thinking_no_beta_header_and_temperature_sent(loopback: LoopbackServer) -> None:
    loopback.add(sse(reply("hi")))
    events, _ = await collect(make(loopback, "anthropic", MODEL), settings(reasoning__enabled=False, temperature=0.3))
    request = loopback.requests[0]
    assert "anthropic-beta" not in request.headers
    assert request.json["thinking"] == {"type": "disabled"} and request.json["temperature"] == 0.3
    assert not any(isinstance(e, Notice) for e in events)


DROP = {"block_binding": {"prefix_mismatch_behavior": "drop_block"}}  # preserved thinking: see below


@pytest.mark.parametrize(
    ("off", "model", "thinking", "effort"),
    [
        ("disabled", "claude-opus-4-7", {"type": "disabled"}, None),  # Claude 4.x, Opus 5, Haiku 5.5
        ("between_tools", "claude-sonnet-5-5", {"type": "between_tools"}, None),  # its default effort, never xhigh
        ("never", "claude-opus-5-5", {"type": "adaptive", **DROP}, {"effort": "low"}),  # Opus 5.5, Fable 5.1+
    ],
)
async def test_reasoning_off_goes_the_way_the_model_turns_thinking_off(loopback, off, model, thinking, effort) -> None:
    """Each against a strict server of a model of that kind: the other two ways are refused there."""
    from strict_servers import Step, StrictAnthropic

    server = loopback.default = StrictAnthropic([Step("", text="ok")], off=off)
    provider = make(loopback, "anthropic", model)
    config = settings(reasoning__enabled=False, reasoning__off=off, reasoning__effort="xhigh")
    notices: list[str] = []
    for _ in range(2):
        async for event in provider.stream([Content.human("hi")], config):
            assert not isinstance(event, StreamError), event
            if isinstance(event, Notice):
                notices.append(event.message)
    await provider.aclose()
    assert server.refusals == [] and server.served == 2
    body = loopback.requests[-1].json
    assert body["thinking"] == thinking and body.get("output_config") == effort
    said = "this model cannot turn thinking off (reasoning.off never): it thinks at effort low"
    assert notices == ([said] if off == "never" else [])  # once, not at every request


async def test_turning_thinking_off_where_the_model_cannot_is_one_line_naming_the_setting(loopback) -> None:
    from strict_servers import ANTHROPIC_CANNOT_DISABLE, Step, StrictAnthropic

    loopback.default = StrictAnthropic([Step("", text="ok")], off="never")
    events, _ = await collect(make(loopback, "anthropic", "claude-opus-5-5"), settings(reasoning__enabled=False))
    error_event = next(e for e in events if isinstance(e, StreamError))
    assert ANTHROPIC_CANNOT_DISABLE.split(".")[0] in error_event.message
    assert "/set reasoning.off never" in error_event.message and "\n" not in error_event.message


@pytest.mark.parametrize(("model", "binds"), [("claude-sonnet-5-5", True), ("claude-opus-4-7", False)])
async def test_a_block_made_under_another_system_prompt_is_dropped_where_the_model_binds_thinking(
    loopback, model, binds
) -> None:
    """Preserved thinking's prefix check: after ``/set system-prompt`` the first reply's block is
    bound to another prefix. A model with preserved thinking is asked to drop such blocks (with
    the beta header that asks for it), so the request goes through; without it, the vendor's 400,
    one line naming what to change (the control: a server checking a model not asked to drop)."""
    from strict_servers import BINDING_BETA, Step, StrictAnthropic

    server = loopback.default = StrictAnthropic([Step("first thought", text="one"), Step("more", text="two")])
    server.binding = True
    provider = make(loopback, "anthropic", model)
    values = {"reasoning__includeInContext": True, "reasoning__format": "native", "reasoning__effort": "high"}
    _, assembler = await collect(provider, settings(system_prompt="Be brief.", **values))
    reply = stamped(assembler, "anthropic", model)
    assert reply.thinking[0].signature
    history = [Content.human("hi"), reply, Content.human("and then?")]
    events, _ = await collect(make(loopback, "anthropic", model), settings(system_prompt="Be kind.", **values), history)
    body, headers = loopback.requests[-1].json, loopback.requests[-1].headers
    assert body["messages"][1]["content"][0]["type"] == "thinking"  # sent back: the server decides
    problems = [e for e in events if isinstance(e, StreamError)]
    if binds:
        assert problems == [] and server.dropped == 1
        assert body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
        assert BINDING_BETA in headers["anthropic-beta"].split(",")
    else:
        assert "block_binding" not in body["thinking"] and "anthropic-beta" not in headers
        assert len(problems) == 1 and "bound to a different conversation" in problems[0].message
        assert problems[0].message.endswith("/set reasoning.includeInContext false sends none back")
        assert len(problems[0].message) <= 300  # one line: cut in the server's words, not in the next step


@pytest.mark.parametrize(
    ("model", "kept"),
    [
        ("claude-opus-5-5", True),
        ("claude-sonnet-5-5", True),
        ("claude-fable-5-1", True),
        ("claude-opus-5", False),
        ("claude-sonnet-5-20260301", False),
        ("claude-opus-4-7", False),
        ("claude-3-7-sonnet-latest", False),
    ],
)
def test_earlier_turns_thinking_counts_where_the_model_keeps_it(model, kept) -> None:
    """Preserved thinking (Fable 5.1 and later): earlier turns' signed blocks sent back stay in
    context, billed as input, so the gauge counts them; older models drop them on their side."""
    from tractui.core.tokens import TokenCounter
    from tractui.providers import make_provider
    from tractui.providers.config import ProviderConfig

    provider = make_provider(ProviderConfig("anthropic", model))
    earlier = signed_turn(model)
    counter = TokenCounter(model)
    config = settings(reasoning__includeInContext=True, reasoning__format="native")
    tokens = provider.thinking_tokens(earlier, config, counter, current_turn=False)
    assert keeps_earlier_thinking(model) is kept
    assert tokens == (counter.count_thinking(earlier) if kept else 0) and counter.count_thinking(earlier) > 0
    assert provider.thinking_tokens(earlier, config, counter, current_turn=True) == counter.count_thinking(earlier)


async def test_temperature_dropped_while_thinking_with_one_notice(loopback: LoopbackServer) -> None:
    provider = make(loopback, "anthropic", MODEL)
    config = settings(reasoning__maxTokens=2048, temperature=0.5)
    notices: list[str] = []
    for _ in range(2):
        loopback.add(sse(reply("hi")))
        async for event in provider.stream([Content.human("hi")], config):
            if isinstance(event, Notice):
                notices.append(event.message)
    await provider.aclose()
    assert notices == [TEMPERATURE_NOTICE]
    assert all("temperature" not in r.json for r in loopback.requests)


@pytest.mark.parametrize(
    ("values", "max_tokens"),
    [
        ({"reasoning.maxTokens": 16000, "max-tokens": 8000}, 24000),  # raised: budget + the asked answer room
        ({"reasoning.maxTokens": 9000, "max-tokens": 4096, "max-output": 10000}, 10000),  # raised up to max-output
        ({"reasoning.maxTokens": 2048}, 8192),  # default room is enough
        ({"reasoning.maxTokens": 8192}, 8192 + 4096),
        ({"reasoning.effort": "low", "reasoning.mode": "budget"}, 8192),  # effort maps to a budget (2048)
    ],
)
async def test_budget_rule_raises_max_tokens(loopback: LoopbackServer, values: dict[str, Any], max_tokens: int) -> None:
    loopback.add(sse(reply("ok")))
    await collect(make(loopback, "anthropic", MODEL), Settings(values))
    body = loopback.requests[0].json
    assert body["max_tokens"] == max_tokens
    assert body["thinking"]["budget_tokens"] < body["max_tokens"]


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"reasoning__maxTokens": 512}, "at least 1024"),
        ({"reasoning__maxTokens": 10000, "max_output": 10000}, "below the model's max-output (10000)"),
    ],
)
async def test_budget_rule_refuses_without_sending(
    loopback: LoopbackServer, values: dict[str, Any], needle: str
) -> None:
    events, assembler = await collect(make(loopback, "anthropic", MODEL), settings(**values))
    assert loopback.requests == []
    assert assembler.error is not None and assembler.error.kind == "bad_request"
    assert needle in assembler.error.message and "\n" not in assembler.error.message
    assert len(events) == 1


async def test_overloaded_error_mid_stream_keeps_what_arrived(loopback: LoopbackServer) -> None:
    overloaded = {"type": "error", "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"}}
    start = {"type": "message_start", "message": {"model": MODEL, "usage": {"input_tokens": 10, "output_tokens": 1}}}
    body = anthropic_stream(
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Partial answer"}},
        overloaded,
    )
    loopback.add(sse(body, seed=3))
    events, assembler = await collect(make(loopback, "anthropic", MODEL))
    assert assembler.text == "Partial answer"
    assert assembler.error is not None and assembler.error.kind == "overloaded"
    assert assembler.error.message == "server error in the stream: Overloaded (overloaded_error)"
    assert len(loopback.requests) == 1  # content had arrived: not retried over it
    assert isinstance(events[-1], StreamError)


async def test_overloaded_before_content_and_529_are_retried(loopback: LoopbackServer) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    loopback.add(sse(anthropic_stream(overloaded)))
    loopback.add(json_body(FIXTURES / "errors" / "anthropic_529_overloaded_error.json", status=529, seed=None))
    loopback.add(sse(reply("finally")))
    events, assembler = await collect(make(loopback, "anthropic", MODEL), settings(retries=3))
    assert assembler.error is None and assembler.text == "finally"
    assert [e.attempt for e in events if isinstance(e, RetryWait)] == [1, 2]
    assert len(loopback.requests) == 3


async def test_http_errors_are_one_clear_line(loopback: LoopbackServer) -> None:
    loopback.add(error(404, json.loads((FIXTURES / "errors" / "anthropic_404_not_found_error.json").read_text())))
    _, assembler = await collect(make(loopback, "anthropic", "claude-does-not-exist"))
    assert assembler.error is not None and assembler.error.kind == "not_found"
    assert "claude-does-not-exist" in assembler.error.message
    loopback.add(
        error(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    )
    _, assembler = await collect(make(loopback, "anthropic", MODEL))
    assert assembler.error is not None and assembler.error.kind == "auth"
    assert KEY not in assembler.error.message


# -- thinking sent back ----------------------------------------------------------
def signed_turn(model: str = MODEL) -> Content:
    return Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="t1", source_field="thinking", signature="SIG1"),
            ThinkingBlock(is_hidden=True, source_field="thinking", provider_metadata={"data": "REDACTED1"}),
            TextBlock(text="a1"),
        ],
        metadata={"provider": "anthropic", "model": model},
    )


def kimi_turn() -> Content:
    return Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought="k2", source_field="reasoning_content"), TextBlock(text="a2")],
        metadata={"provider": "openai", "model": "kimi-k2-thinking"},
    )


def history() -> list[Content]:
    return [Content.human("q1"), signed_turn(), Content.human("q2"), kimi_turn(), Content.human("q3")]


def expected_assistant(include: bool, fmt: str, strip: str) -> list[list[dict[str, Any]]]:
    keep_first = include and strip == "none"
    keep_last = include and strip in ("none", "allButLast")
    first: list[dict[str, Any]] = []
    if keep_first and fmt == "native":
        first = [
            {"type": "thinking", "thinking": "t1", "signature": "SIG1"},
            {"type": "redacted_thinking", "data": "REDACTED1"},
        ]
    elif keep_first:
        first = [{"type": "text", "text": "<thinking>\nt1\n</thinking>"}]
    last = [{"type": "text", "text": "<thinking>\nk2\n</thinking>"}] if keep_last else []
    return [[*first, {"type": "text", "text": "a1"}], [*last, {"type": "text", "text": "a2"}]]


@pytest.mark.parametrize(("include", "fmt", "strip"), COMBOS)
async def test_history_for_every_reasoning_combination(
    loopback: LoopbackServer, include: bool, fmt: str, strip: str
) -> None:
    loopback.add(sse(reply("a3")))
    await collect(
        make(loopback, "anthropic", MODEL), combo_settings(include, fmt, strip, reasoning__maxTokens=2048), history()
    )
    messages = loopback.requests[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert [messages[1]["content"], messages[3]["content"]] == expected_assistant(include, fmt, strip)


async def test_signatures_only_go_back_to_the_model_that_signed(loopback: LoopbackServer) -> None:
    loopback.add(sse(reply("a3")))
    config = combo_settings(True, "native", "none", reasoning__maxTokens=2048)
    await collect(make(loopback, "anthropic", "claude-opus-4-1"), config, history())
    raw = loopback.requests[0].body.decode()
    assert "SIG1" not in raw and "REDACTED1" not in raw
    assert all(b["type"] == "text" for m in loopback.requests[0].json["messages"] for b in m["content"])
    assert loopback.requests[0].json["messages"][1]["content"][0] == {
        "type": "text",
        "text": "<thinking>\nt1\n</thinking>",
    }


async def test_tool_calls_and_results_go_back(loopback: LoopbackServer) -> None:
    from tractui.core.content import ToolResultBlock

    turn = Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="need weather", source_field="thinking", signature="S"),
            ToolCallBlock(
                id="toolu_1",
                name="weather",
                arguments='{"location": "Florence"}',
                provider_metadata={"anthropic_type": "tool_use"},
            ),
            ToolCallBlock(
                id="srvtoolu_1",
                name="web_search",
                arguments="{}",
                provider_metadata={"anthropic_type": "server_tool_use"},
            ),
        ],
        metadata={"provider": "anthropic", "model": MODEL},
    )
    result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="toolu_1", content="40C")])
    loopback.add(sse(reply("hot")))
    await collect(
        make(loopback, "anthropic", MODEL),
        combo_settings(True, "native", "none", reasoning__maxTokens=2048),
        [Content.human("w?"), turn, result],
    )
    messages = loopback.requests[0].json["messages"]
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "need weather", "signature": "S"},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"location": "Florence"}},
    ]
    assert messages[2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "40C"}],
    }


async def test_anthropic_history_continues_on_kimi_and_back(loopback: LoopbackServer) -> None:
    """Signed thinking from Claude goes to a Kimi-like server as reasoning_content and back to Claude."""
    recording = FIXTURES / "anthropic_thinking" / "claude_sonnet4_stream_thinking_signature.sse"
    meta = meta_of(recording)
    config = combo_settings(True, "native", "none", reasoning__maxTokens=2048)
    loopback.add(sse(recording, seed=5))
    _, claude = await collect(make(loopback, "anthropic", MODEL), config, [Content.human("how do I cross the street?")])
    convo = [
        Content.human("how do I cross the street?"),
        stamped(claude, "anthropic", MODEL),
        Content.human("and at night?"),
    ]

    kimi_config = combo_settings(True, "field", "none")
    loopback.add(openai_chat_reply("Wear something bright.", reasoning="Night crossing needs visibility."))
    _, kimi = await collect(make(loopback, "openai", "kimi-k2-thinking", "/v1"), kimi_config, convo)
    kimi_body = loopback.requests[1].json
    assistant = [m for m in kimi_body["messages"] if m["role"] == "assistant"]
    assert assistant[0]["reasoning_content"] == meta["expected_reasoning"]
    assert (
        meta["expected_text"] in json.dumps(assistant[0]["content"], ensure_ascii=False)
        or assistant[0]["content"] == meta["expected_text"]
    )
    convo += [stamped(kimi, "openai", "kimi-k2-thinking"), Content.human("thanks")]

    signature = next(b.signature for b in convo[1].blocks if isinstance(b, ThinkingBlock))
    loopback.add(sse(reply("You're welcome.")))
    await collect(make(loopback, "anthropic", MODEL), config, convo)
    same = loopback.requests[2].json["messages"]
    assert same[1]["content"][0] == {"type": "thinking", "thinking": meta["expected_reasoning"], "signature": signature}
    assert same[3]["content"][0] == {
        "type": "text",
        "text": "<thinking>\nNight crossing needs visibility.\n</thinking>",
    }

    loopback.add(sse(reply("You're welcome.")))
    await collect(make(loopback, "anthropic", "claude-opus-4-1"), config, convo)
    other = loopback.requests[3]
    assert signature not in other.body.decode()
    assert all(block["type"] == "text" for m in other.json["messages"] for block in m["content"])
    assert other.json["messages"][1]["content"][0]["text"].startswith("<thinking>\n" + meta["expected_reasoning"][:20])
