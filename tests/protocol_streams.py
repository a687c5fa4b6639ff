"""One small valid stream per protocol (thinking, text in two pieces, a tool call, usage), as chunks.

The bad-stream and fuzz tests break these chunk by chunk. ``VALID[name]`` is the
list of ``(event name, chunk)`` pairs; ``encode(name, chunks, junk)`` frames them
as the server would, with optional bytes between events; ``config(name, url)``
points a provider at the loopback server.
"""

from __future__ import annotations

import json
from typing import Any

from tractui.providers.transport import ProviderConfig

KEY_ENV = "TRACTUI_STREAM_TEST_KEY"
KEY = "sk-stream-test-0123456789abcdef"

Chunk = tuple[str | None, Any]


def _chat(delta: dict[str, Any], finish: str | None = None) -> Chunk:
    return None, {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "loop-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _anthropic(**event: Any) -> Chunk:
    return event["type"], event


def _gemini(parts: list[dict[str, Any]], **extra: Any) -> Chunk:
    return None, {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **extra.pop("cand", {})}],
        **extra,
    }


def _responses(**event: Any) -> Chunk:
    return event["type"], event


ARGS = '{"a": 1}'

VALID: dict[str, list[Chunk]] = {
    "openai": [
        _chat({"role": "assistant", "reasoning_content": "Let me think."}),
        _chat({"content": "Hello"}),
        _chat({"content": " world"}),
        _chat(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get", "arguments": ARGS}}
                ]
            }
        ),
        _chat({}, "tool_calls"),
        (
            None,
            {
                "id": "chatcmpl-1",
                "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        ),
    ],
    "anthropic": [
        _anthropic(
            type="message_start",
            message={
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-loop",
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        ),
        _anthropic(type="content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
        _anthropic(type="content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Let me think."}),
        _anthropic(type="content_block_delta", index=0, delta={"type": "signature_delta", "signature": "c2lnbmF0dXJl"}),
        _anthropic(type="content_block_stop", index=0),
        _anthropic(type="content_block_start", index=1, content_block={"type": "text", "text": ""}),
        _anthropic(type="content_block_delta", index=1, delta={"type": "text_delta", "text": "Hello"}),
        _anthropic(type="content_block_delta", index=1, delta={"type": "text_delta", "text": " world"}),
        _anthropic(type="content_block_stop", index=1),
        _anthropic(
            type="content_block_start",
            index=2,
            content_block={"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}},
        ),
        _anthropic(type="content_block_delta", index=2, delta={"type": "input_json_delta", "partial_json": ARGS}),
        _anthropic(type="content_block_stop", index=2),
        _anthropic(type="message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5}),
        _anthropic(type="message_stop"),
    ],
    "gemini": [
        _gemini([{"text": "Let me think.", "thought": True}], modelVersion="gemini-loop"),
        _gemini([{"text": "Hello", "thoughtSignature": "c2lnbmF0dXJl"}]),
        _gemini([{"text": " world"}]),
        _gemini(
            [{"functionCall": {"name": "get", "args": {"a": 1}}}],
            cand={"finishReason": "STOP"},
            usageMetadata={
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "thoughtsTokenCount": 3,
                "totalTokenCount": 18,
            },
        ),
    ],
    "openai-responses": [
        _responses(type="response.created", response={"id": "resp_1", "model": "o-loop", "status": "in_progress"}),
        _responses(
            type="response.output_item.added", output_index=0, item={"id": "rs_1", "type": "reasoning", "summary": []}
        ),
        _responses(
            type="response.reasoning_summary_part.added",
            item_id="rs_1",
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        ),
        _responses(
            type="response.reasoning_summary_text.delta", item_id="rs_1", summary_index=0, delta="Let me think."
        ),
        _responses(
            type="response.output_item.done",
            output_index=0,
            item={"id": "rs_1", "type": "reasoning", "encrypted_content": "ZW5j"},
        ),
        _responses(
            type="response.output_item.added",
            output_index=1,
            item={"id": "msg_1", "type": "message", "role": "assistant"},
        ),
        _responses(type="response.output_text.delta", item_id="msg_1", output_index=1, delta="Hello"),
        _responses(type="response.output_text.delta", item_id="msg_1", output_index=1, delta=" world"),
        _responses(
            type="response.output_item.added",
            output_index=2,
            item={"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get", "arguments": ""},
        ),
        _responses(type="response.function_call_arguments.delta", item_id="fc_1", output_index=2, delta=ARGS),
        _responses(type="response.function_call_arguments.done", item_id="fc_1", output_index=2, arguments=ARGS),
        _responses(
            type="response.completed",
            response={
                "id": "resp_1",
                "model": "o-loop",
                "status": "completed",
                "usage": {"input_tokens": 10, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 3}},
            },
        ),
    ],
}

# the chunk index after which "Let me think." and "Hello" have arrived
AFTER_HELLO = {"openai": 2, "anthropic": 7, "gemini": 2, "openai-responses": 7}

PATHS = {"openai": "/v1", "anthropic": "", "gemini": "", "openai-responses": "/v1"}
MODELS = {"openai": "loop-model", "anthropic": "claude-loop", "gemini": "gemini-loop", "openai-responses": "o-loop"}


def config(name: str, url: str) -> ProviderConfig:
    return ProviderConfig(name, MODELS[name], base_url=url + PATHS[name], api_key_env=KEY_ENV)


def encode(name: str, chunks: list[Chunk], junk: list[bytes] | None = None) -> bytes:
    """The chunks as SSE (``data: [DONE]`` at the end for the OpenAI dialect); ``junk[i]`` goes
    before event ``i`` as lines of its own, ended by a blank line so it never merges into an event."""
    out = bytearray()
    for i, (event, chunk) in enumerate(chunks):
        if junk and i < len(junk) and junk[i]:
            out += junk[i] + b"\n\n"
        if event:
            out += f"event: {event}\n".encode()
        out += f"data: {json.dumps(chunk)}\n\n".encode()
    if name == "openai":
        out += b"data: [DONE]\n\n"
    return bytes(out)
