"""Gemini streamGenerateContent over real loopback HTTP: thought parts, signatures, usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackServer, encode_sse, error, sse
from replay import COMBOS, collect, combo_settings, make, meta_of, settings, stamped

from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolResultBlock, Usage
from tractui.providers.gemini import SKIP_SIGNATURE, GeminiParser

KEY = "AIzaLoopbackKey0123456789abcdefghij"
MODEL = "gemini-2.5-pro"
RECORDINGS = sorted((FIXTURES / "gemini_thoughts").glob("*.sse"))
ARRAY_RECORDINGS = sorted((FIXTURES / "gemini_thoughts").glob("*.json"))
ARRAY_RECORDINGS = [p for p in ARRAY_RECORDINGS if not p.name.endswith(".meta.json")]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


def expected_usage(raw: dict[str, Any]) -> Usage:
    thoughts = raw.get("thoughtsTokenCount", 0)
    return Usage(
        input_tokens=raw["promptTokenCount"] + raw.get("toolUsePromptTokenCount", 0),
        output_tokens=raw.get("candidatesTokenCount", 0) + thoughts,
        reasoning_tokens=thoughts,
        cached_input_tokens=raw.get("cachedContentTokenCount", 0),
    )


def check(assembler: MessageAssembler, meta: dict[str, Any]) -> None:
    assert assembler.error is None
    assert assembler.reasoning == meta["expected_reasoning"]
    assert assembler.text == meta["expected_text"]
    assert assembler.usage == expected_usage(meta["expected_usage"])
    assert assembler.finish_reason == meta["expected_finish_reason"]
    content = assembler.content()
    assert all(b.source_field == "thought" for b in content.thinking)
    calls = [c for c in meta.get("expected_function_calls", []) if c.get("name")]
    assert [c.name for c in content.tool_calls] == [c["name"] for c in calls]
    for block, call in zip(content.tool_calls, calls, strict=True):
        if "args" in call:
            assert json.loads(block.arguments) == call["args"]


def signatures_in(raw: str) -> list[str]:
    return [m for m in (json.loads(x) for x in _json_objects(raw)) for m in _walk_signatures(m)]


def _json_objects(raw: str) -> list[str]:
    return [line[len("data: ") :] for line in raw.replace("\r\n", "\n").split("\n") if line.startswith("data: ")]


def _walk_signatures(chunk: dict[str, Any]) -> list[str]:
    return [
        p["thoughtSignature"]
        for c in chunk.get("candidates", [])
        for p in c["content"].get("parts", [])
        if p.get("thoughtSignature")
    ]


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [2, 11])
async def test_recording_replays_to_its_expected_result(loopback: LoopbackServer, path: Path, seed: int) -> None:
    loopback.add(sse(path, seed=seed, max_chunk=40))
    _, assembler = await collect(make(loopback, "gemini", MODEL))
    check(assembler, meta_of(path))
    # every signature is kept, none is shown
    content = assembler.content()
    kept = [b.signature for b in content.thinking if b.signature] + [
        c.provider_metadata["thought_signature"]
        for c in content.tool_calls
        if "thought_signature" in c.provider_metadata
    ]
    recorded = signatures_in(path.read_text(encoding="utf-8"))
    assert sorted(kept) == sorted(recorded)
    assert not any(s[:12] in assembler.text + assembler.reasoning for s in recorded)


@pytest.mark.parametrize("path", ARRAY_RECORDINGS, ids=lambda p: p.stem)
def test_json_array_recordings_parse_chunk_by_chunk(path: Path) -> None:
    parser, assembler = GeminiParser(), MessageAssembler()
    for chunk in json.loads(path.read_text(encoding="utf-8")):
        for event in parser.feed_chunk(chunk):
            assembler.feed(event)
    for event in parser.close():
        assembler.feed(event)
    assembler.finish_reason = parser.finish_reason
    check(assembler, meta_of(path))


async def test_request_url_key_and_thinking_budget(loopback: LoopbackServer) -> None:
    loopback.add(sse(FIXTURES / "gemini_thoughts" / "gemma4_26b_stream_fine_grained_thought_parts.sse"))
    config = settings(reasoning__maxTokens="8k", max_tokens=2000, temperature=0.2, system_prompt="Be brief.")
    await collect(make(loopback, "gemini", MODEL), config)
    request = loopback.requests[0]
    assert request.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert request.query == {"alt": "sse"}
    assert request.headers["x-goog-api-key"] == KEY and "authorization" not in request.headers
    body = request.json
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {
        "maxOutputTokens": 2000,
        "temperature": 0.2,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }


@pytest.mark.parametrize(
    ("values", "config"),
    [
        ({"reasoning__effort": "low"}, {"includeThoughts": True, "thinkingLevel": "low"}),
        ({"reasoning__effort": "xhigh"}, {"includeThoughts": True, "thinkingLevel": "high"}),
        ({"reasoning__maxTokens": 0}, {"thinkingBudget": 0}),
        ({}, {"includeThoughts": True}),
        ({"reasoning__enabled": False}, None),
    ],
)
async def test_thinking_level_from_effort(loopback: LoopbackServer, values: dict[str, Any], config: Any) -> None:
    loopback.add(sse(FIXTURES / "gemini_thoughts" / "gemma4_26b_stream_fine_grained_thought_parts.sse"))
    await collect(make(loopback, "gemini", "gemini-3-pro-preview"), settings(**values))
    assert loopback.requests[0].json.get("generationConfig", {}).get("thinkingConfig") == config


async def test_error_chunk_mid_stream_and_http_429_retry(loopback: LoopbackServer) -> None:
    partial = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Half an"}]}}]}
    failure = {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}
    loopback.add(
        error(
            429,
            {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}},
            retry_after=0,
        )
    )
    loopback.add(sse(encode_sse([partial, failure], done=False), seed=4))
    _events, assembler = await collect(make(loopback, "gemini", MODEL), settings(retries=2))
    assert len(loopback.requests) == 2
    assert assembler.text == "Half an"
    assert (
        assembler.error is not None and assembler.error.kind == "server" and "Internal error" in assembler.error.message
    )
    # the 500 is the chunk's code, not the answer's status (a 200): "HTTP 500: …" until 2026-11-28
    assert assembler.error.message == "server error in the stream (its code 500): Internal error encountered."
    assert assembler.error.status is None


# -- signatures sent back in place ------------------------------------------------
async def test_signatures_go_back_where_they_came(loopback: LoopbackServer) -> None:
    text_sig = FIXTURES / "gemini_thoughts" / "gemini25pro_stream_thought_parts.sse"
    config = combo_settings(True, "native", "none")
    loopback.add(sse(text_sig, seed=1))
    _, first = await collect(make(loopback, "gemini", MODEL), config)
    loopback.add(sse(text_sig, seed=2))
    convo = [Content.human("hi"), stamped(first, "gemini", MODEL), Content.human("more")]
    await collect(make(loopback, "gemini", MODEL), config, convo)
    parts = loopback.requests[1].json["contents"][1]["parts"]
    [signed] = [
        p
        for c in (json.loads(x) for x in _json_objects(text_sig.read_text(encoding="utf-8")))
        for p in c["candidates"][0]["content"]["parts"]
        if "thoughtSignature" in p
    ]
    # the four thought parts come back as one, then the answer text part that carried the signature, as received
    assert parts[0] == {"text": meta_of(text_sig)["expected_reasoning"], "thought": True}
    assert parts[1] == signed
    assert "".join(p["text"] for p in parts[1:]) == meta_of(text_sig)["expected_text"]
    assert sum("thoughtSignature" in p for p in parts) == 1


async def test_function_call_signature_and_result_round_trip(loopback: LoopbackServer) -> None:
    recording = FIXTURES / "gemini_thoughts" / "gemini3pro_stream_function_call_thought_signature.sse"
    [signature, *_] = signatures_in(recording.read_text(encoding="utf-8"))
    model = "gemini-3-pro-preview"
    loopback.add(sse(recording, seed=3))
    _, first = await collect(make(loopback, "gemini", model))
    turn = stamped(first, "gemini", model)
    call = turn.tool_calls[0]
    result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id=call.id, content="France")])
    convo = [Content.human("where?"), turn, result]
    targets = (
        (model, signature),
        ("gemini-3-flash-preview", SKIP_SIGNATURE),
        ("gemini-flash-latest", SKIP_SIGNATURE),  # an alias (of a Gemini 3 today): it may check, so the placeholder
        ("models/gemini-2.5-pro", None),  # a model that never checked gets no placeholder
    )
    for target, expected in targets:
        loopback.add(sse(recording))
        # thinking is not in context: the function call's signature still goes back (Gemini 3 requires it)
        await collect(make(loopback, "gemini", target), combo_settings(False, "field", "none"), convo)
        contents = loopback.requests[-1].json["contents"]
        part = {"functionCall": {"name": "get_country", "args": {}}}
        assert contents[1] == {"role": "model", "parts": [part | ({"thoughtSignature": expected} if expected else {})]}
        assert contents[2] == {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_country", "response": {"result": "France"}}}],
        }


def gemini_history() -> list[Content]:
    own = Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="g1", source_field="thought"),
            TextBlock(text="a1"),
            ThinkingBlock(source_field="thought", signature="GSIG", provider_metadata={"gemini_part": "text"}),
            TextBlock(text=" more"),
        ],
        metadata={"provider": "gemini", "model": MODEL},
    )
    foreign = Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought="c2", source_field="thinking", signature="ANTSIG"), TextBlock(text="a2")],
        metadata={"provider": "anthropic", "model": "claude-sonnet-4-0"},
    )
    return [Content.human("q1"), own, Content.human("q2"), foreign, Content.human("q3")]


def expected_model_parts(include: bool, fmt: str, strip: str) -> list[list[dict[str, Any]]]:
    keep_first = include and strip == "none"
    keep_last = include and strip in ("none", "allButLast")
    if keep_first and fmt == "native":
        first = [{"text": "g1", "thought": True}, {"text": "a1", "thoughtSignature": "GSIG"}, {"text": " more"}]
    elif keep_first:
        first = [{"text": "<thinking>\ng1\n</thinking>"}, {"text": "a1"}, {"text": " more"}]
    else:
        first = [{"text": "a1"}, {"text": " more"}]
    last = ([{"text": "<thinking>\nc2\n</thinking>"}] if keep_last else []) + [{"text": "a2"}]
    return [first, last]


@pytest.mark.parametrize(("include", "fmt", "strip"), COMBOS)
async def test_history_for_every_reasoning_combination(
    loopback: LoopbackServer, include: bool, fmt: str, strip: str
) -> None:
    loopback.add(sse(FIXTURES / "gemini_thoughts" / "gemma4_26b_stream_fine_grained_thought_parts.sse"))
    await collect(make(loopback, "gemini", MODEL), combo_settings(include, fmt, strip), gemini_history())
    contents = loopback.requests[0].json["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert [contents[1]["parts"], contents[3]["parts"]] == expected_model_parts(include, fmt, strip)
    assert "ANTSIG" not in loopback.requests[0].body.decode()
