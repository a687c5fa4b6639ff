"""Streams with values and shapes a protocol does not allow, through the real providers over loopback.

Content sent as a list of parts is text, ``null`` is nothing; a chunk of a shape
the protocol does not allow ends the stream with one ``protocol`` error after
everything before it, which the conversation stores, marked as failed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest
from loopback import LoopbackServer, sse
from protocol_streams import AFTER_HELLO, KEY, KEY_ENV, VALID, Chunk, config, encode
from test_print_mode import run_cli

from tractui.conversation.conversation import Conversation
from tractui.core.assemble import MessageAssembler
from tractui.core.events import Done, StreamError, StreamEvent, TextDelta, ThinkingDelta
from tractui.core.settings import Settings
from tractui.providers import make_provider
from tractui.providers.transport import Provider
from tractui.store.compile import merge_commits
from tractui.store.history import HistoryStore

SETTINGS = Settings({"retries": 0, "tools.maxSteps": 1})


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


async def stream(server: LoopbackServer, name: str, chunks: list[Chunk]) -> tuple[list[StreamEvent], MessageAssembler]:
    server.add(sse(encode(name, chunks), seed=None))
    provider = make_provider(config(name, server.url))
    events: list[StreamEvent] = []
    assembler = MessageAssembler()
    try:
        async for event in provider.stream([], SETTINGS):
            events.append(event)
            assembler.feed(event)
    finally:
        await provider.aclose()
    return events, assembler


def with_bad(name: str, bad: Any, event: str | None = None) -> list[Chunk]:
    """The valid stream with ``bad`` after "Hello": what comes after it must never be read."""
    chunks = VALID[name]
    cut = AFTER_HELLO[name]
    return [*chunks[:cut], (event, bad), *chunks[cut:]]


def thought_and_text(events: Sequence[object]) -> tuple[str, str]:
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    return thought, "".join(e.text for e in events if isinstance(e, TextDelta))


# -- 1: content that is not a string -----------------------------------------
def chat(delta: dict[str, Any]) -> Chunk:
    return None, {"choices": [{"index": 0, "delta": delta}]}


async def test_chat_content_as_a_list_of_parts_is_text(loopback: LoopbackServer) -> None:
    parts = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}, {"type": "image_url", "image_url": {}}]
    chunks = [chat({"reasoning_content": [{"type": "text", "text": "Let me think."}]}), chat({"content": parts})]
    chunks += [chat({"content": None}), chat({"content": " world", "reasoning_content": None})]
    events, assembler = await stream(loopback, "openai", chunks)
    assert thought_and_text(events) == ("Let me think.", "Hello world")
    assert isinstance(events[-1], Done) and assembler.error is None


@pytest.mark.parametrize(
    "delta",
    [{"content": 5}, {"content": {"text": "x"}}, {"content": [5]}, {"reasoning_content": 5}, {"reasoning": True}],
    ids=["number", "object", "list-of-numbers", "reasoning-number", "reasoning-bool"],
)
async def test_chat_content_of_another_type_ends_the_stream_keeping_what_arrived(
    loopback: LoopbackServer, delta: dict[str, Any]
) -> None:
    events, assembler = await stream(loopback, "openai", with_bad("openai", chat(delta)[1]))
    check_cut(events, assembler)


async def test_responses_number_where_text_is_expected(loopback: LoopbackServer) -> None:
    bad = {"type": "response.output_text.delta", "item_id": "msg_1", "delta": 5}
    events, assembler = await stream(
        loopback, "openai-responses", with_bad("openai-responses", bad, "response.output_text.delta")
    )
    check_cut(events, assembler, "delta")


# -- 2: chunks of a shape the protocol does not allow --------------------------
def check_cut(events: list[StreamEvent], assembler: MessageAssembler, names: str = "") -> None:
    """ "Let me think." and "Hello" arrived, then one line saying the stream could not be read; nothing after."""
    assert thought_and_text(events) == ("Let me think.", "Hello")
    error = events[-1]
    assert isinstance(error, StreamError) and error.kind == "protocol", events[-3:]
    assert "\n" not in error.message and names in error.message
    assert not any(isinstance(e, Done) for e in events)
    content = assembler.content()
    assert [b.thought for b in content.thinking if b.thought] == ["Let me think."] and content.text == "Hello"


BAD: dict[str, list[tuple[str, Any]]] = {
    "openai": [
        ("delta-string", {"choices": [{"delta": "notadict"}]}),
        ("choices-string", {"choices": "notalist"}),
        ("choices-object", {"choices": {"0": {"delta": {}}}}),
        ("choice-string", {"choices": ["x"]}),
        ("tool-calls-string", {"choices": [{"delta": {"tool_calls": "x"}}]}),
        ("function-string", {"choices": [{"delta": {"tool_calls": [{"function": "x"}]}}]}),
        ("finish-number", {"choices": [{"delta": {}, "finish_reason": 5}]}),
        ("usage-words", {"choices": [], "usage": {"prompt_tokens": "many"}}),
        ("chunk-string", "a string"),
        ("chunk-list", [1, 2]),
    ],
    "anthropic": [
        ("delta-string", {"type": "content_block_delta", "index": 1, "delta": "notadict"}),
        ("text-number", {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": 5}}),
        ("index-string", {"type": "content_block_delta", "index": "one", "delta": {"type": "text_delta", "text": "x"}}),
        ("block-string", {"type": "content_block_start", "index": 2, "content_block": "x"}),
        ("message-string", {"type": "message_start", "message": "x"}),
        ("usage-words", {"type": "message_delta", "delta": {}, "usage": {"output_tokens": "many"}}),
        ("chunk-string", "a string"),
    ],
    "gemini": [
        ("candidates-string", {"candidates": "x"}),
        ("content-string", {"candidates": [{"content": "x"}]}),
        ("parts-string", {"candidates": [{"content": {"parts": "x"}}]}),
        ("part-string", {"candidates": [{"content": {"parts": ["x"]}}]}),
        ("text-number", {"candidates": [{"content": {"parts": [{"text": 5}]}}]}),
        ("call-string", {"candidates": [{"content": {"parts": [{"functionCall": "x"}]}}]}),
        ("usage-words", {"usageMetadata": {"promptTokenCount": "many"}}),
        ("chunk-list", [1, 2]),
    ],
    "openai-responses": [
        ("summary-object", {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": {"x": 1}}),
        ("item-string", {"type": "response.output_item.added", "item": "x"}),
        ("response-list", {"type": "response.created", "response": []}),
        ("usage-words", {"type": "response.completed", "response": {"usage": {"input_tokens": "many"}}}),
        ("args-number", {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": 5}),
        ("chunk-string", "a string"),
    ],
}
CASES = [(name, case, bad) for name, cases in BAD.items() for case, bad in cases]


@pytest.mark.parametrize(("name", "case", "bad"), CASES, ids=[f"{n}-{c}" for n, c, _ in CASES])
async def test_a_wrongly_shaped_chunk_ends_the_stream_after_what_arrived(
    loopback: LoopbackServer, name: str, case: str, bad: Any
) -> None:
    event = bad.get("type") if isinstance(bad, dict) else None
    events, assembler = await stream(loopback, name, with_bad(name, bad, event))
    check_cut(events, assembler)


@pytest.mark.parametrize("name", list(VALID))
async def test_the_conversation_stores_what_arrived_before_a_bad_chunk(
    loopback: LoopbackServer, tmp_path, name: str
) -> None:
    bad = {"choices": [{"delta": "notadict"}]} if name == "openai" else ["not", "an", "object"]
    loopback.add(sse(encode(name, with_bad(name, bad)), seed=None))
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(store, SETTINGS, config(name, loopback.url))
        events = [e async for e in conv.send("hi")]
        await conv.aclose()
        assert thought_and_text(events) == ("Let me think.", "Hello")
        assert isinstance(events[-1], StreamError) and events[-1].kind == "protocol"
        chain = store.chain(conv.session_id or "")
        assert [c.kind for c in chain] == ["user", "reasoning", "assistant"]
        assert {c.status for c in chain[1:]} == {"error"}
        assert chain[-1].metadata["error"]["kind"] == "protocol"
        reply = merge_commits(chain)[-1]
        assert [b.thought for b in reply.thinking if b.thought] == ["Let me think."] and reply.text == "Hello"


# -- the stream boundary: an exception from a parser is one line, after what arrived ---------
class _Fails:
    """A parser with a bug: it raises on the chunk carrying " world"."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.finish_reason: str | None = None
        self.response_model: str | None = None

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        if "world" in data:
            raise KeyError("surprise")
        return self.inner.feed(event, data)

    def close(self) -> list[StreamEvent]:
        return self.inner.close()

    def reply_metadata(self) -> dict[str, Any]:
        return {}


async def test_an_exception_from_a_parser_is_caught_at_the_stream_boundary(loopback: LoopbackServer) -> None:
    loopback.add(sse(encode("openai", VALID["openai"]), seed=None))
    provider = make_provider(config("openai", loopback.url))
    make_parser = provider.new_parser
    provider.new_parser = lambda settings: _Fails(make_parser(settings))  # type: ignore[method-assign]
    events = [e async for e in provider.stream([], SETTINGS)]
    await provider.aclose()
    assert thought_and_text(events) == ("Let me think.", "Hello")
    error = events[-1]
    assert isinstance(error, StreamError) and error.kind == "protocol"
    assert "KeyError" in error.message and "\n" not in error.message


class _Raises(Provider):
    """A provider that breaks its promise never to raise, after some text."""

    name = "openai"

    def build_request(self, messages: Any, settings: Settings, **_: Any) -> dict[str, Any]:
        return {}

    async def stream(self, messages: Any, settings: Settings, **_: Any) -> AsyncGenerator[StreamEvent, None]:
        yield ThinkingDelta("Let me think.", "reasoning")
        yield TextDelta("Hello")
        raise RuntimeError("boom")


async def test_an_exception_escaping_a_provider_ends_the_reply_with_the_same_line(tmp_path) -> None:
    cfg = config("openai", "http://127.0.0.1:9")
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(store, SETTINGS, cfg, provider=_Raises(cfg))
        events = [e async for e in conv.send("hi")]
        error = events[-1]
        assert isinstance(error, StreamError) and error.kind == "protocol"
        assert error.message == "tractui could not read the stream (RuntimeError: boom); what arrived is kept"
        reply = merge_commits(store.chain(conv.session_id or ""))[-1]
        assert reply.text == "Hello" and reply.thinking[0].thought == "Let me think."


# -- print mode, as a user runs it ------------------------------------------------
def cli_args(server: LoopbackServer) -> tuple[str, ...]:
    base = f"{server.url}/v1"
    return ("-p", "hi", "--provider", "openai", "--model", "m", "--base-url", base, "--api-key-env", "PRINT_TEST_KEY")


async def test_print_mode_reads_content_parts_as_text(loopback: LoopbackServer, tmp_path) -> None:
    parts = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]
    chunks = [chat({"reasoning_content": "Let me think."}), chat({"content": parts}), chat({"content": None})]
    loopback.add(sse(encode("openai", chunks)))
    code, out, err = await run_cli(tmp_path, *cli_args(loopback))
    assert (code, out) == (0, "Hello\n"), err
    assert "Let me think." in err and "Traceback" not in err


async def test_print_mode_keeps_what_arrived_before_a_bad_chunk(loopback: LoopbackServer, tmp_path) -> None:
    loopback.add(sse(encode("openai", with_bad("openai", {"choices": [{"delta": "notadict"}]}))))
    code, out, err = await run_cli(tmp_path, *cli_args(loopback))
    assert code == 1 and out == "Hello\n"
    assert "Let me think." in err and "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("tractui:")]
    assert errors == [
        "tractui: the server sent a chunk tractui cannot read "
        "(choices[0].delta is a string, expected an object); what arrived is kept"
    ]
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        chain = store.chain(store.latest_session() or "")
        assert [(c.kind, c.status) for c in chain] == [
            ("user", "complete"),
            ("reasoning", "error"),
            ("assistant", "error"),
        ]
        reply = merge_commits(chain)[-1]
        assert reply.thinking[0].thought == "Let me think." and reply.text == "Hello"


# -- a 200 that is no reply, and a stream that ends cleanly before the reply did ---------------
async def conversed(loopback: LoopbackServer, tmp_path, name: str, reply: Any) -> tuple[list[Any], list[Any]]:
    """``reply`` (a loopback ``Reply``) served to one message of a conversation on ``name``'s protocol:
    the events the conversation gave, and the chain the store then holds."""
    loopback.add(reply)
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(store, SETTINGS, config(name, loopback.url))
        events = [e async for e in conv.send("hi")]
        await conv.aclose()
        return events, store.chain(conv.session_id or "")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b"<!DOCTYPE html><html><body>Sign in to the proxy</body></html>", "text/html"), (b"", "text/event-stream")],
)
async def test_a_200_without_events_is_an_error_not_an_empty_answer(
    loopback: LoopbackServer, tmp_path, body: bytes, content_type: str
) -> None:
    """An HTML page (a proxy's login) or an empty stream was stored as an empty, complete reply, and
    print mode exited 0 (until 2026-11-28)."""
    from loopback import Reply

    events, chain = await conversed(
        loopback, tmp_path, "openai", Reply(body=body, content_type=content_type, seed=None)
    )
    assert isinstance(events[-1], StreamError) and events[-1].kind == "protocol"
    assert events[-1].message == f"expected an event stream, got none ({content_type})"
    assert chain[-1].status == "error"


@pytest.mark.parametrize("name", list(VALID))
async def test_a_stream_that_ends_before_its_reply_did_is_kept_and_marked_cut(
    loopback: LoopbackServer, tmp_path, name: str
) -> None:
    """A proxy closing the stream cleanly mid-reply (no finish reason, no ``[DONE]``) looked like a
    finished answer (until 2026-11-28): now what arrived is kept, marked cut."""
    body = encode(name, VALID[name][: AFTER_HELLO[name]]).removesuffix(b"data: [DONE]\n\n")
    events, chain = await conversed(loopback, tmp_path, name, sse(body, seed=None))
    assert thought_and_text(events) == ("Let me think.", "Hello")
    assert isinstance(events[-1], StreamError) and events[-1].kind == "cut"
    assert "ended before the reply finished" in events[-1].message and "what arrived is kept" in events[-1].message
    assert {c.status for c in chain[1:]} == {"error"} and merge_commits(chain)[-1].text == "Hello"


async def test_a_chat_stream_ended_by_done_without_a_finish_reason_is_whole(loopback: LoopbackServer, tmp_path) -> None:
    """``[DONE]`` is the chat dialect's own end: some servers send no finish reason before it."""
    chunks = [c for c in VALID["openai"] if not c[1].get("choices") or not c[1]["choices"][0].get("finish_reason")]
    chunks = [c for c in chunks if "tool_calls" not in json.dumps(c[1])]
    events, chain = await conversed(loopback, tmp_path, "openai", sse(encode("openai", chunks), seed=None))
    assert not any(isinstance(e, StreamError) for e in events)
    assert chain[-1].status == "complete"
