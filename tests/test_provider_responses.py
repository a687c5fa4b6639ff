"""OpenAI Responses API over real loopback HTTP: summaries, encrypted reasoning round-trip, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackServer, encode_sse, sse
from replay import COMBOS, collect, combo_settings, make, meta_of, settings, stamped

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.events import Notice
from tractui.providers.openai_responses import TEMPERATURE_NOTICE

KEY = "sk-loopback-responses-0123456789"
MODEL = "gpt-5"
RECORDINGS = sorted((FIXTURES / "openai_responses").glob("*.sse"))
SMALL = FIXTURES / "openai_responses" / "xai_grok43_responses_stream_reasoning_summary.sse"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def expected_usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=raw["input_tokens"],
        output_tokens=raw["output_tokens"],
        reasoning_tokens=raw["output_tokens_details"]["reasoning_tokens"],
        cached_input_tokens=(raw.get("input_tokens_details") or {}).get("cached_tokens", 0),
    )


def recorded_reasoning_items(path: Path) -> list[dict[str, Any]]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("data: {"):
            event = json.loads(line[6:])
            if event.get("type") == "response.output_item.done" and event["item"]["type"] == "reasoning":
                items.append(event["item"])
    return items


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [4, 13])
async def test_recording_replays_to_its_expected_result(loopback: LoopbackServer, path: Path, seed: int) -> None:
    meta = meta_of(path)
    loopback.add(sse(path, seed=seed, max_chunk=64))
    _, assembler = await collect(make(loopback, "openai-responses", MODEL, "/v1"))
    assert assembler.error is None
    parts = meta.get("expected_reasoning_summary_parts")
    # summary parts are paragraphs: joined with a blank line; raw reasoning text is kept as is
    assert assembler.reasoning == ("\n\n".join(parts) if parts else meta["expected_reasoning"])
    assert assembler.text == meta["expected_text"]
    assert assembler.usage == expected_usage(meta["expected_usage"])
    content = assembler.content()
    expected_source = (
        "summary" if parts or "reasoning_text" not in meta.get("expected_reasoning_source", "") else "reasoning"
    )
    assert {b.source_field for b in content.thinking} <= {expected_source}
    for index, arguments in meta.get("expected_function_call_arguments", {}).items():
        assert [c.arguments for c in content.tool_calls] == [arguments], index
    encrypted = [i for i in recorded_reasoning_items(path) if i.get("encrypted_content")]
    kept = [b.provider_metadata for b in content.thinking if "encrypted_content" in b.provider_metadata]
    assert [(k["item_id"], k["encrypted_content"]) for k in kept] == [
        (i["id"], i["encrypted_content"]) for i in encrypted
    ]


async def test_error_event_then_failed_is_one_error(loopback: LoopbackServer) -> None:
    loopback.add(sse(FIXTURES / "errors" / "openai_responses_stream_error_event_insufficient_quota.sse", seed=2))
    events, assembler = await collect(make(loopback, "openai-responses", MODEL, "/v1"), settings(retries=3))
    assert len(loopback.requests) == 1  # quota exhaustion is not retried
    assert assembler.error is not None and assembler.error.kind == "rate_limit"
    assert "exceeded your current quota" in assembler.error.message
    assert sum(1 for e in events if type(e).__name__ == "StreamError") == 1


async def test_failed_mid_answer_keeps_the_text(loopback: LoopbackServer) -> None:
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1"}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Partial"},
        {
            "type": "response.failed",
            "response": {"status": "failed", "error": {"code": "server_error", "message": "The server had an error"}},
        },
    ]
    loopback.add(sse(encode_sse(events, done=False, event_names=[e["type"] for e in events]), seed=1))
    _, assembler = await collect(make(loopback, "openai-responses", MODEL, "/v1"))
    assert assembler.text == "Partial"
    assert assembler.error is not None and "server had an error" in assembler.error.message


async def test_request_shape(loopback: LoopbackServer) -> None:
    loopback.add(sse(SMALL))
    config = settings(
        reasoning__effort="high", reasoning__summary="detailed", max_tokens=5000, system_prompt="Be brief."
    )
    await collect(make(loopback, "openai-responses", MODEL, "/v1"), config)
    request = loopback.requests[0]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "model": MODEL,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": False,
        "instructions": "Be brief.",
        "reasoning": {"effort": "high", "summary": "detailed"},
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 5000,
    }


async def test_the_system_prompt_as_a_developer_message_first_and_system_messages_in_place(
    loopback: LoopbackServer,
) -> None:
    """``system-prompt-as developer``: the prompt is the first input item, a system message of the history
    (a cleared-results note) a developer message where it stands, and there are no instructions; with
    ``instructions`` both are joined into the top-level field as before."""
    answer = Content(speaker="ai", blocks=[TextBlock(text="a1")], metadata={"provider": "openai-responses"})
    messages = [Content.human("q1"), answer, Content.system_prompt("cleared 2 old tool results"), Content.human("q2")]
    developer = {"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]}
    note = {"role": "developer", "content": [{"type": "input_text", "text": "cleared 2 old tool results"}]}
    for placement in ("developer", "instructions"):
        loopback.add(sse(SMALL))
        config = settings(system_prompt="Be brief.", system_prompt_as=placement)
        await collect(make(loopback, "openai-responses", MODEL, "/v1"), config, messages)
        body = loopback.requests[-1].json
        roles = [item.get("role", item.get("type")) for item in body["input"]]
        if placement == "developer":
            assert "instructions" not in body and body["input"][0] == developer and body["input"][3] == note
            assert roles == ["developer", "user", "assistant", "developer", "user"]
        else:
            assert body["instructions"] == "Be brief.\n\ncleared 2 old tool results"
            assert roles == ["user", "assistant", "user"]


async def test_a_message_part_of_the_wrong_kind_is_refused_in_openais_words(
    loopback: LoopbackServer, monkeypatch
) -> None:
    """The strict server takes tractui's developer message (its text is input_text); one written as an
    assistant writes (output_text) is refused as OpenAI refuses it, in one line."""
    from strict_servers import Step, StrictResponses

    from tractui.providers import openai_responses

    loopback.default = model = StrictResponses([Step("", text="ok")])
    config = settings(system_prompt="Be brief.", system_prompt_as="developer")
    _, assembler = await collect(make(loopback, "openai-responses", "gpt-6.2-sol", "/v1"), config)
    assert model.refusals == [] and assembler.text == "ok"
    monkeypatch.setattr(
        openai_responses,
        "_developer_item",
        lambda text: {"role": "developer", "content": [{"type": "output_text", "text": text}]},
    )
    _, assembler = await collect(make(loopback, "openai-responses", "gpt-6.2-sol", "/v1"), config)
    refused = "Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', 'input_file', and 'scoped_content'."
    assert model.refusals == [refused]
    assert assembler.error is not None and refused in assembler.error.message and "\n" not in assembler.error.message


async def test_temperature_dropped_while_reasoning_with_one_notice(loopback: LoopbackServer) -> None:
    provider = make(loopback, "openai-responses", MODEL, "/v1")
    notices = []
    for _ in range(2):
        loopback.add(sse(SMALL))
        async for event in provider.stream([Content.human("hi")], settings(temperature=0.7)):
            if isinstance(event, Notice):
                notices.append(event.message)
    assert notices == [TEMPERATURE_NOTICE]
    assert all("temperature" not in r.json for r in loopback.requests)
    assert loopback.requests[0].json["reasoning"] == {"summary": "auto"}
    loopback.add(sse(SMALL))
    await collect(provider, settings(temperature=0.7, reasoning__enabled=False))
    body = loopback.requests[-1].json
    assert body["temperature"] == 0.7 and "reasoning" not in body and "include" not in body


GPT6 = "low,medium,high,xhigh,max"  # GPT-6.2 takes no effort none


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"reasoning__efforts": GPT6}, {"effort": "low", "summary": "auto"}),
        ({"reasoning__efforts": GPT6, "reasoning__effort": "high"}, {"effort": "low", "summary": "auto"}),
        ({"reasoning__efforts": "none,low,medium", "reasoning__off": "never"}, {"effort": "low", "summary": "auto"}),
        ({"reasoning__off": "never"}, {"effort": "low", "summary": "auto"}),
        ({"reasoning__efforts": "none,low,medium,high,xhigh"}, {"effort": "none"}),
        ({}, None),
    ],
)
async def test_reasoning_off_goes_as_none_or_as_the_lowest_effort_the_model_takes(
    loopback: LoopbackServer, extra: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    """A model that cannot turn reasoning off (no effort none, or reasoning.off never) reasons at its
    lowest effort, with one note; its encrypted reasoning is still asked for (a tool loop needs it
    back) and temperature still left out. Effort none is no reasoning: temperature goes."""
    provider = make(loopback, "openai-responses", "gpt-6.2-astra", "/v1")
    notices = []
    for _ in range(2):
        loopback.add(sse(SMALL))
        config = settings(reasoning__enabled=False, temperature=0.7, **extra)
        async for event in provider.stream([Content.human("hi")], config):
            if isinstance(event, Notice):
                notices.append(event.message)
    await provider.aclose()
    body = loopback.requests[-1].json
    assert body.get("reasoning") == expected
    if expected is None:
        assert notices == [] and body["temperature"] == 0.7 and "include" not in body
    elif expected["effort"] == "none":  # no reasoning: OpenAI takes sampling parameters again
        assert notices == [] and body["temperature"] == 0.7
    else:
        why = "reasoning.off never" if "reasoning__off" in extra else "reasoning.efforts has no none"
        note = f"this model cannot turn reasoning off ({why}): it reasons at effort low"
        assert notices == [note, TEMPERATURE_NOTICE]
        assert body["include"] == ["reasoning.encrypted_content"] and "temperature" not in body


# -- reasoning sent back -----------------------------------------------------------
def own_turn(model: str = MODEL) -> Content:
    return Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(
                thought="s1", source_field="summary", provider_metadata={"encrypted_content": "ENC1", "item_id": "rs_1"}
            ),
            ToolCallBlock(id="call_1", name="calc", arguments='{"x":1}'),
        ],
        metadata={"provider": "openai-responses", "model": model},
    )


def history() -> list[Content]:
    foreign = Content(
        speaker="ai",
        blocks=[ThinkingBlock(thought="c2", source_field="thinking", signature="ANTSIG"), TextBlock(text="a2")],
        metadata={"provider": "anthropic", "model": "claude-sonnet-4-0"},
    )
    result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="call_1", content="2")])
    return [Content.human("q1"), own_turn(), result, foreign, Content.human("q3")]


def expected_input(include: bool, fmt: str, strip: str) -> list[dict[str, Any]]:
    # the tool loop (own turn, result, answer) is one turn: allButLast keeps all of it
    keep = include and strip in ("none", "allButLast")
    items: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "input_text", "text": "q1"}]}]
    if keep and fmt == "native":
        items.append(
            {
                "type": "reasoning",
                "encrypted_content": "ENC1",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "s1"}],
            }
        )
    elif keep:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "<thinking>\ns1\n</thinking>"}],
            }
        )
    items.append({"type": "function_call", "call_id": "call_1", "name": "calc", "arguments": '{"x":1}'})
    items.append({"type": "function_call_output", "call_id": "call_1", "output": "2"})
    answer = ([{"type": "output_text", "text": "<thinking>\nc2\n</thinking>"}] if keep else []) + [
        {"type": "output_text", "text": "a2"}
    ]
    items.append({"type": "message", "role": "assistant", "content": answer})
    items.append({"role": "user", "content": [{"type": "input_text", "text": "q3"}]})
    return items


@pytest.mark.parametrize(("include", "fmt", "strip"), COMBOS)
async def test_history_for_every_reasoning_combination(
    loopback: LoopbackServer, include: bool, fmt: str, strip: str
) -> None:
    loopback.add(sse(SMALL))
    await collect(make(loopback, "openai-responses", MODEL, "/v1"), combo_settings(include, fmt, strip), history())
    assert loopback.requests[0].json["input"] == expected_input(include, fmt, strip)
    assert "ANTSIG" not in loopback.requests[0].body.decode()


async def test_recorded_encrypted_reasoning_goes_back_only_to_its_model(loopback: LoopbackServer) -> None:
    recording = FIXTURES / "openai_responses" / "openai_o3mini_stream_reasoning_summary_multi_part.sse"
    [item] = recorded_reasoning_items(recording)
    config = combo_settings(True, "native", "none")
    loopback.add(sse(recording, seed=8))
    _, first = await collect(make(loopback, "openai-responses", "o3-mini", "/v1"), config)
    convo = [Content.human("how do I cross?"), stamped(first, "openai-responses", "o3-mini"), Content.human("thanks")]
    loopback.add(sse(SMALL))
    await collect(make(loopback, "openai-responses", "o3-mini", "/v1"), config, convo)
    sent = loopback.requests[1].json["input"][1]
    assert sent["type"] == "reasoning" and sent["id"] == item["id"]
    assert sent["encrypted_content"] == item["encrypted_content"]
    assert sent["summary"][0]["text"] == first.reasoning
    loopback.add(sse(SMALL))
    await collect(make(loopback, "openai-responses", "gpt-5", "/v1"), config, convo)
    other = loopback.requests[2]
    assert item["encrypted_content"] not in other.body.decode()
    assert other.json["input"][1]["content"][0]["text"].startswith("<thinking>\n**Providing street crossing")
