"""OpenAI-compatible Chat Completions over real loopback HTTP: recordings, requests, faults."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackServer, error, json_body, openai_chat_reply, sse

from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.events import (
    Done,
    RedactedThinking,
    RetryWait,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    UsageEvent,
)
from tractui.core.reasoning import apply_reasoning_policy
from tractui.core.settings import Settings
from tractui.providers import ProviderConfig, make_provider
from tractui.providers.errors import redact
from tractui.providers.transport import Provider

KEY = "sk-loopback-secret-0123456789"
RECORDINGS = sorted(
    p
    for folder in ("openai_reasoning_content", "openai_reasoning_field", "think_tags")
    for p in (FIXTURES / folder).glob("*.sse")
)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def provider(server: LoopbackServer, **config: Any) -> Provider:
    p = make_provider(ProviderConfig("openai", config.pop("model", "m"), base_url=f"{server.url}/v1", **config))
    p.backoff_base = 0.01
    return p


async def run(
    p: Provider, settings: Settings | None = None, messages: list[Content] | None = None
) -> tuple[list[StreamEvent], MessageAssembler]:
    events: list[StreamEvent] = []
    assembler = MessageAssembler()
    async for event in p.stream(messages or [Content.human("hi")], settings or Settings()):
        events.append(event)
        assembler.feed(event)
    await p.aclose()
    return events, assembler


def meta_of(path: Path) -> dict[str, Any]:
    return json.loads(path.with_suffix(".meta.json").read_text())


# -- every recording replays to its expected reasoning, text and usage -------
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
async def test_recording_replays_to_expected(loopback: LoopbackServer, path: Path, seed: int) -> None:
    meta = meta_of(path)
    loopback.add(sse(path, seed=seed, max_chunk=17))
    events, asm = await run(provider(loopback))
    content = asm.content()

    assert asm.error is None
    assert "".join(b.thought for b in content.thinking if not b.is_hidden) == meta["expected_reasoning"]
    expected_text = meta["expected_text"]
    if path.parent.name == "think_tags":
        # The tag extractor drops the blank lines that open the answer after </think>.
        expected_text = re.sub(r"^[ \t]*\n(\s*\n)?", "", expected_text)
    assert content.text == expected_text
    assert asm.finish_reason == meta["expected_finish_reason"]
    assert isinstance(events[-1], Done) and events[-1].malformed_lines == 0

    raw = meta["expected_usage"]
    usage = asm.usage
    assert usage is not None
    assert usage.input_tokens == raw["prompt_tokens"]
    # Output is everything written: total minus what was read, whatever the provider counted where.
    assert usage.output_tokens == raw["total_tokens"] - raw["prompt_tokens"]
    details = raw.get("completion_tokens_details") or {}
    assert usage.reasoning_tokens == (details.get("reasoning_tokens") or raw.get("reasoning_tokens") or 0)
    cached = (raw.get("prompt_tokens_details") or {}).get("cached_tokens") or raw.get("cached_tokens") or 0
    assert usage.cached_input_tokens == cached

    for expected in meta.get("expected_tool_calls", []):
        call = content.tool_calls[expected["index"]]
        assert (call.id, call.name, call.arguments) == (expected["id"], expected["name"], expected["arguments"])

    thinking_sources = {e.source_field for e in events if isinstance(e, ThinkingDelta)}
    if meta["expected_reasoning"] and path.parent.name != "think_tags":
        assert thinking_sources <= {"reasoning_content", "reasoning", "summary"}
    merged = meta.get("expected_reasoning_details_merged") or {}
    assert sum(isinstance(e, RedactedThinking) for e in events) == merged.get("encrypted_count", 0)
    assert [e.signature for e in events if isinstance(e, ThinkingSignature)] == merged.get("signatures", [])


async def test_thinking_streams_live_before_the_stream_ends(loopback: LoopbackServer) -> None:
    loopback.add(
        sse(
            FIXTURES / "openai_reasoning_content/deepseek_reasoner_stream_hello.sse",
            seed=3,
            stall_after=2000,
            stall=0.5,
        )
    )
    p = provider(loopback)
    first_thinking_at_active = None
    async for event in p.stream([Content.human("hi")], Settings()):
        if isinstance(event, ThinkingDelta) and first_thinking_at_active is None:
            first_thinking_at_active = loopback.active
    await p.aclose()
    assert first_thinking_at_active == 1  # the server was still sending


async def test_xai_usage_adds_reasoning_back_into_output(loopback: LoopbackServer) -> None:
    loopback.add(sse(FIXTURES / "openai_reasoning_content/xai_grok3mini_stream_reasoning_content.sse"))
    _, asm = await run(provider(loopback))
    assert asm.usage is not None
    assert (asm.usage.input_tokens, asm.usage.output_tokens, asm.usage.reasoning_tokens) == (12, 2 + 340, 340)


async def test_error_events_inside_a_200_stream_keep_what_arrived(loopback: LoopbackServer) -> None:
    for name in ("groq_gpt_oss_stream_event_error_midstream", "openrouter_minimax_stream_error_in_chunk"):
        path = FIXTURES / "errors" / f"{name}.sse"
        meta = meta_of(path)
        loopback.add(sse(path, seed=5))
        events, asm = await run(provider(loopback))
        assert isinstance(events[-1], StreamError)
        assert events[-1].kind == "bad_request" and meta["expected_errors"][0]["message"] in events[-1].message
        # the payload's 400 is no HTTP status: the answer was a 200 (it said "HTTP 400: …" until 2026-11-28)
        assert events[-1].message.startswith("server error in the stream (its code 400): ")
        assert events[-1].status is None
        assert "".join(b.thought for b in asm.content().thinking) == meta["expected_reasoning"]
    assert len(loopback.requests) == 2  # a non-retryable error is not retried


# -- requests ----------------------------------------------------------------
def history() -> list[Content]:
    def ai(n: int) -> Content:
        return Content(
            speaker="ai",
            blocks=[
                ThinkingBlock(thought=f"thought {n}", source_field="reasoning_content"),
                TextBlock(text=f"answer {n}"),
            ],
            metadata={"provider": "openai", "model": "m"},
        )

    return [Content.human("q1"), ai(1), Content.human("q2"), ai(2), Content.human("q3")]


async def test_request_body_basics(loopback: LoopbackServer) -> None:
    loopback.add(openai_chat_reply("ok"))
    settings = Settings({"reasoning.effort": "high", "max-tokens": 1000, "temperature": 0.5})
    await run(provider(loopback, model="deepseek-reasoner"), settings)
    req = loopback.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    body = req.json
    assert body["model"] == "deepseek-reasoner" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["reasoning_effort"], body["max_tokens"], body["temperature"]) == ("high", 1000, 0.5)
    assert body["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("base", "settings", "expected"),
    [
        ("https://openrouter.ai/api/v1", {"reasoning.effort": "low"}, {"reasoning": {"effort": "low"}}),
        ("https://openrouter.ai/api/v1", {"reasoning.maxTokens": "8k"}, {"reasoning": {"max_tokens": 8192}}),
        (
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            {"reasoning.maxTokens": 2000},
            {"enable_thinking": True, "thinking_budget": 2000},
        ),
        (
            "https://api.deepseek.com",
            {"reasoning.enabled": False, "reasoning.effort": "high", "reasoning.maxTokens": 100},
            {},
        ),
        ("https://api.openai.com/v1", {"max-tokens": 50}, {"max_completion_tokens": 50}),
        # MiniMax marks max_tokens deprecated in favour of max_completion_tokens (both of its hosts)
        ("https://api.minimax.io/v1", {"max-tokens": 50}, {"max_completion_tokens": 50}),
        ("https://api.minimaxi.com/v1", {"max-tokens": 50}, {"max_completion_tokens": 50}),
        ("http://127.0.0.1:8000/v1", {"max-tokens": 50}, {"max_tokens": 50}),
        # effort none turns a switch off, also where the server's efforts do not list none (DeepSeek)
        (
            "https://api.deepseek.com",
            {"reasoning.mode": "switch", "reasoning.effort": "none", "reasoning.efforts": "low,high,max"},
            {"thinking": {"type": "disabled"}},
        ),
        (
            "http://127.0.0.1:8000/v1",
            {"reasoning.mode": "template", "reasoning.effort": "none", "reasoning.efforts": "low,high"},
            {"chat_template_kwargs": {"enable_thinking": False}},
        ),
        (
            "https://api.deepseek.com",
            {"reasoning.mode": "switch", "reasoning.effort": "medium", "reasoning.efforts": "low,high,max"},
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
        ),
    ],
)
def test_reasoning_parameters_per_server(base: str, settings: dict[str, Any], expected: dict[str, Any]) -> None:
    p = make_provider(ProviderConfig("openai", "m", base_url=base))
    body = p.build_request([Content.human("hi")], Settings(settings))
    extra = {k: v for k, v in body.items() if k not in ("model", "messages", "stream", "stream_options")}
    assert extra == expected


@pytest.mark.parametrize("include", [True, False])
@pytest.mark.parametrize("fmt", ["field", "native"])
@pytest.mark.parametrize("strip", ["all", "allButLast", "none"])
@pytest.mark.parametrize("field_name", ["reasoning_content", "reasoning"])
async def test_thinking_sent_back_per_policy(
    loopback: LoopbackServer, include: bool, fmt: str, strip: str, field_name: str
) -> None:
    settings = Settings(
        {
            "reasoning.includeInContext": include,
            "reasoning.format": fmt,
            "reasoning.stripFromContext": strip,
            "reasoning.fieldName": field_name,
        }
    )
    loopback.add(openai_chat_reply("ok"))
    await run(provider(loopback), settings, apply_reasoning_policy(history(), settings))
    assistants = [m for m in loopback.requests[0].json["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in assistants] == ["answer 1", "answer 2"]
    sent = [m.get(field_name) for m in assistants]
    if not include or strip == "all":  # native on this protocol is the reasoning field itself
        expected = [None, None]
    elif strip == "allButLast":
        expected = [None, "thought 2"]
    else:
        expected = ["thought 1", "thought 2"]
    assert sent == expected
    other = "reasoning" if field_name == "reasoning_content" else "reasoning_content"
    assert all(other not in m for m in assistants)


async def test_signed_foreign_thinking_goes_back_as_plain_text_and_tools_round_trip(loopback: LoopbackServer) -> None:
    messages = [
        Content.human("weather?"),
        Content(
            speaker="ai",
            blocks=[
                ThinkingBlock(thought="check tool", source_field="thinking", signature="sig-abc"),
                ThinkingBlock(
                    thought="", is_hidden=True, source_field="thinking", provider_metadata={"data": "opaque"}
                ),
                ToolCallBlock(id="call_1", name="weather", arguments='{"city": "Rome"}'),
            ],
            metadata={"provider": "anthropic", "model": "claude"},
        ),
        Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="call_1", content="sunny")]),
    ]
    loopback.add(openai_chat_reply("sunny"))
    _, asm = await run(provider(loopback), Settings({"reasoning.includeInContext": True}), messages)
    assert asm.error is None
    sent = loopback.requests[0].json["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "check tool",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Rome"}'}}
        ],
    }
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    assert "sig-abc" not in json.dumps(sent) and "opaque" not in json.dumps(sent)


async def test_system_prompt_goes_first(loopback: LoopbackServer) -> None:
    loopback.add(openai_chat_reply("ok"))
    p = provider(loopback)
    async for _ in p.stream([Content.human("hi")], Settings(), system="be brief"):
        pass
    assert loopback.requests[0].json["messages"][0] == {"role": "system", "content": "be brief"}


# -- faults ------------------------------------------------------------------
async def test_429_with_retry_after_then_success(loopback: LoopbackServer) -> None:
    loopback.add(
        error(429, FIXTURES / "errors/openrouter_429_provider_rate_limited.json", retry_after=0.05),
        openai_chat_reply("fine"),
    )
    events, asm = await run(provider(loopback))
    waits = [e for e in events if isinstance(e, RetryWait)]
    assert len(waits) == 1 and waits[0].seconds == pytest.approx(0.05) and waits[0].attempt == 1
    assert "temporarily rate-limited upstream" in waits[0].reason
    assert asm.content().text == "fine" and asm.error is None and isinstance(events[-1], Done)
    assert len(loopback.requests) == 2


async def test_500_then_success_with_backoff(loopback: LoopbackServer) -> None:
    loopback.add(
        error(500, {"error": {"message": "boom"}}), error(503, b"upstream unavailable"), openai_chat_reply("fine")
    )
    events, asm = await run(provider(loopback))
    waits = [e for e in events if isinstance(e, RetryWait)]
    assert [w.attempt for w in waits] == [1, 2] and all(0 < w.seconds <= 0.02 for w in waits)
    assert asm.content().text == "fine"


async def test_retries_run_out(loopback: LoopbackServer) -> None:
    loopback.default = lambda req: error(529, FIXTURES / "errors/anthropic_529_overloaded_error.json", retry_after=0)
    events, _ = await run(provider(loopback), Settings({"retries": 2}))
    assert sum(isinstance(e, RetryWait) for e in events) == 2
    assert isinstance(events[-1], StreamError) and events[-1].kind == "overloaded" and events[-1].status == 529
    assert len(loopback.requests) == 3


async def test_cut_mid_stream_keeps_what_arrived(loopback: LoopbackServer) -> None:
    path = FIXTURES / "openai_reasoning_content/deepseek_reasoner_stream_hello.sse"
    loopback.add(sse(path, seed=4, cut_after=len(path.read_bytes()) // 2))
    events, asm = await run(provider(loopback))
    assert isinstance(events[-1], StreamError) and events[-1].kind == "cut"
    thought = "".join(b.thought for b in asm.content().thinking)
    assert thought and meta_of(path)["expected_reasoning"].startswith(thought)
    assert not any(isinstance(e, Done) for e in events)
    assert len(loopback.requests) == 1


async def test_stall_ends_the_stream_with_kind_stalled(loopback: LoopbackServer) -> None:
    path = FIXTURES / "openai_reasoning_content/deepseek_reasoner_stream_hello.sse"
    loopback.add(sse(path, seed=4, stall_after=3000, stall=10))
    events, asm = await run(provider(loopback), Settings({"timeout": 1}))
    assert isinstance(events[-1], StreamError) and events[-1].kind == "stalled"
    assert "stalled" not in events[-1].message  # drawn "✗ stalled: …": said once (twice until 2026-11-28)
    assert meta_of(path)["expected_reasoning"].startswith("".join(b.thought for b in asm.content().thinking))


async def test_malformed_lines_are_skipped_and_counted(loopback: LoopbackServer) -> None:
    good = (FIXTURES / "openai_reasoning_content/deepseek_reasoner_stream_hello.sse").read_text()
    broken = good.replace("\n\n", '\n\ndata: {"choices": [\n\ndata: not json at all\n\n', 1)
    loopback.add(sse(broken, seed=9))
    events, asm = await run(provider(loopback))
    assert isinstance(events[-1], Done) and events[-1].malformed_lines == 2
    meta = meta_of(FIXTURES / "openai_reasoning_content/deepseek_reasoner_stream_hello.sse")
    assert asm.content().text == meta["expected_text"]


async def test_401_is_a_clear_auth_error_without_the_key(loopback: LoopbackServer) -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {KEY}.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    loopback.add(error(401, body))
    events, _ = await run(provider(loopback))
    assert len(events) == 1 and isinstance(events[0], StreamError)
    assert events[0].kind == "auth" and "OPENAI_API_KEY" in events[0].message
    assert KEY not in events[0].message and "[REDACTED]" in events[0].message
    assert len(loopback.requests) == 1


async def test_missing_key_names_the_variable_and_sends_nothing(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_KIMI_KEY", raising=False)
    events, _ = await run(provider(loopback, api_key_env="MY_KIMI_KEY"))
    assert [(e.kind, "MY_KIMI_KEY" in e.message) for e in events if isinstance(e, StreamError)] == [
        ("missing_key", True)
    ]
    assert loopback.requests == []


async def test_local_server_without_key(loopback: LoopbackServer) -> None:
    loopback.add(openai_chat_reply("local"))
    _, asm = await run(provider(loopback, api_key_env=""))
    assert asm.content().text == "local" and "authorization" not in loopback.requests[0].headers


async def test_context_length_error_is_mapped(loopback: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    loopback.add(error(400, body))
    events, _ = await run(provider(loopback))
    assert isinstance(events[-1], StreamError) and events[-1].kind == "context_length"


ERROR_BODIES = sorted(p for p in (FIXTURES / "errors").glob("*.json") if not p.name.endswith(".meta.json"))


@pytest.mark.parametrize("path", ERROR_BODIES, ids=lambda p: p.stem)
async def test_recorded_error_bodies_become_one_precise_line(loopback: LoopbackServer, path: Path) -> None:
    meta = meta_of(path)
    status = meta.get("http_status") or 429
    loopback.add(error(status, path))
    events, _ = await run(provider(loopback), Settings({"retries": 0}))
    err = events[-1]
    assert isinstance(err, StreamError) and err.status == status and "\n" not in err.message
    inner = meta["expected_error"]["error"]
    assert inner["message"] in err.message
    raw = (inner.get("metadata") or {}).get("raw")
    assert raw is None or raw in err.message


async def test_closing_the_stream_early_hangs_up(loopback: LoopbackServer) -> None:
    loopback.add(
        sse(FIXTURES / "openai_reasoning_content/qwen3_max_dashscope_stream_reasoning_content.sse", seed=1, pace=0.01)
    )
    p = provider(loopback)
    gen = p.stream([Content.human("hi")], Settings())
    async for event in gen:
        if isinstance(event, (ThinkingDelta, TextDelta)):
            break
    await gen.aclose()
    for _ in range(100):
        if loopback.active == 0:
            break
        await asyncio.sleep(0.02)
    assert loopback.active == 0
    await p.aclose()


async def test_cancelling_the_task_hangs_up(loopback: LoopbackServer) -> None:
    loopback.add(
        sse(FIXTURES / "openai_reasoning_content/qwen3_max_dashscope_stream_reasoning_content.sse", seed=1, pace=0.01)
    )
    p = provider(loopback)
    seen = asyncio.Event()

    async def consume() -> None:
        async for event in p.stream([Content.human("hi")], Settings()):
            if isinstance(event, ThinkingDelta):
                seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if loopback.active == 0:
            break
        await asyncio.sleep(0.02)
    assert loopback.active == 0
    await p.aclose()


def test_redact_hides_keys_in_any_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-very-secret-value")
    text = "Authorization: Bearer abcdef123456 x-api-key: ant-very-secret-value url?key=AIzaSyA1234567890123456789012 sk-proj-abcdefghijkl"
    out = redact(text)
    for secret in ("abcdef123456", "ant-very-secret-value", "AIzaSyA1234567890123456789012", "sk-proj-abcdefghijkl"):
        assert secret not in out


async def test_usage_event_comes_once_at_the_end_even_when_duplicated(loopback: LoopbackServer) -> None:
    loopback.add(sse(FIXTURES / "openai_reasoning_field/openrouter_kimi_k25_stream_reasoning.sse"))
    events, _ = await run(provider(loopback))
    usage_positions = [i for i, e in enumerate(events) if isinstance(e, UsageEvent)]
    assert usage_positions == [len(events) - 2]


async def test_json_body_instead_of_a_stream_is_a_protocol_error(loopback: LoopbackServer) -> None:
    loopback.add(json_body({"choices": []}))
    events, _ = await run(provider(loopback))
    assert isinstance(events[-1], StreamError) and events[-1].kind == "protocol"


def test_warming_loads_what_the_first_request_would_load_on_the_event_loop() -> None:
    """In a fresh interpreter: after ``warm`` the first request imports nothing new (httpcore's
    pool loaded anyio's asyncio backend at its first wait for a connection, 30-45 ms)."""
    code = """
import asyncio, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from tractui.providers import ProviderConfig, make_provider

class Ok(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *args): pass

server = HTTPServer(("127.0.0.1", 0), Ok)
threading.Thread(target=server.serve_forever, daemon=True).start()

async def main():
    p = make_provider(ProviderConfig("openai", "m", base_url="http://127.0.0.1:%d/v1" % server.server_port, api_key_env=""))
    await p.warm()
    before = set(sys.modules)
    await p.client.get(p.base_url + "/models")
    print(sorted(m for m in set(sys.modules) - before if not m.startswith("encodings")) or "nothing")
    await p.aclose()

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "nothing", done.stdout


async def test_warmed_client_is_the_one_the_request_uses(loopback: LoopbackServer) -> None:
    """``warm`` makes the client ahead of the request; warming twice at once keeps one client."""
    loopback.add(openai_chat_reply(text="warm"))
    p = provider(loopback)
    await asyncio.gather(p.warm(), p.warm())
    client = p._client
    assert client is not None  # made by warm, not by the request
    assembler = MessageAssembler()
    async for event in p.stream([Content.human("hi")], Settings()):
        assembler.feed(event)
    assert assembler.content().text == "warm" and p.client is client and len(loopback.requests) == 1
    await p.aclose()
    assert client.is_closed
