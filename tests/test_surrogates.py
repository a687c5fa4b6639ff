"""Lone UTF-16 surrogates (``"\\ud800"``: valid JSON, not text UTF-8 can hold) at every boundary.

From a model's stream (each protocol, any string field, an error message, a
model list) they arrive as U+FFFD and the reply is stored, over real loopback
HTTP into a real history file; bytes that are not UTF-8 on the command line
are refused in one line before anything is written; an export holding one is
refused. Until 2026-11-27 each of these was a ``PydanticSerializationError``
traceback from the history.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackServer, error, json_body, sse
from protocol_streams import ARGS, KEY, KEY_ENV, VALID, Chunk, config, encode
from test_print_mode import run_cli

from tractui.cli.main import main
from tractui.config.paths import history_path
from tractui.conversation.conversation import Conversation
from tractui.core.content import ToolCallBlock
from tractui.core.events import StreamError, TextDelta, ThinkingDelta, ToolCallDelta
from tractui.core.settings import Settings
from tractui.providers import ProviderConfig, make_provider
from tractui.store.compile import merge_commits
from tractui.store.history import HistoryStore, new_id

SETTINGS = Settings({"retries": 0, "tools.maxSteps": 1})
LONE = "\ud800\udbff\udc00\udfff"  # every lone surrogate kind: high and low, first and last
EMOJI_PAIR = "\ud83d\ude00"  # two escapes that make one character: json.loads joins them into 😀
SUBSTITUTES = {
    "Let me think.": f"think \udfff x {EMOJI_PAIR}",
    "Hello": "before \ud800 after",
    "get": "g\udc80t",  # the tool's name
    "call_1": "call_\udbff",  # a tool call's id
    "toolu_1": "toolu_\udbff",
    ARGS: '{"a": "\udfff"}',  # arguments as text: the escape is inside the text of the JSON text
}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def with_surrogates(value: Any) -> Any:
    """A valid chunk with the fields a test looks at holding lone surrogates (json.dumps writes them as escapes)."""
    if isinstance(value, str):
        return SUBSTITUTES.get(value, value)
    if isinstance(value, list):
        return [with_surrogates(v) for v in value]
    if isinstance(value, dict):
        if value == {"a": 1}:  # Gemini's arguments, an object
            return {"a": "\udfff", "k\ud800": LONE}
        return {k: with_surrogates(v) for k, v in value.items()}
    return value


def surrogate_stream(name: str) -> list[Chunk]:
    return [(event, with_surrogates(chunk)) for event, chunk in VALID[name]]


def encodable(value: Any) -> bool:
    return json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "strict") is not None


@pytest.mark.parametrize("name", list(VALID))
async def test_a_lone_surrogate_in_any_stream_field_is_kept_as_u_fffd(
    loopback: LoopbackServer, tmp_path: Path, name: str
) -> None:
    body = encode(name, surrogate_stream(name))
    assert b"\\ud800" in body and b"\\udfff" in body
    loopback.add(sse(body, seed=3))  # split at random points: an escape may straddle two reads
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(store, SETTINGS, config(name, loopback.url))
        events = [e async for e in conv.send("hi")]
        await conv.aclose()
        thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert thought == "think \ufffd x 😀"
        assert text == "before \ufffd after world"
        assert not any(isinstance(e, StreamError) for e in events), events
        arguments = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
        assert "\ufffd" in arguments and encodable(arguments)

        chain = store.chain(conv.session_id or "")
        assert [c.kind for c in chain][:3] == ["user", "reasoning", "assistant"]
        assert {c.status for c in chain} == {"complete"}
        reply = merge_commits(chain[:3])[-1]
        assert reply.text == text and reply.thinking[0].thought == thought
        call = next(b for b in reply.blocks if isinstance(b, ToolCallBlock))
        assert call.name == "g\ufffdt" and "\ufffd" in call.arguments
        if name != "gemini":  # Gemini's calls carry no id
            assert call.id in ("call_\ufffd", "toolu_\ufffd")


async def test_a_surrogate_escape_in_the_arguments_text_goes_back_as_u_fffd(loopback: LoopbackServer, tmp_path) -> None:
    """Arguments whose text spells an escape (the model wrote ``\\ud800`` inside its JSON) are kept as
    written; Anthropic's next request sends them as an object, where the escape becomes U+FFFD."""
    escaped = '{"a": "x\\ud800y"}'  # the six characters \ud800 in the arguments' text
    chunks = [
        (e, {**c, "delta": {**c["delta"], "partial_json": escaped}} if c.get("delta", {}).get("partial_json") else c)
        for e, c in VALID["anthropic"]
    ]
    loopback.add(sse(encode("anthropic", chunks)))
    ended = [
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    loopback.default = lambda request: sse(encode("anthropic", VALID["anthropic"][:7] + ended))  # "Hello", no call
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(store, SETTINGS, config("anthropic", loopback.url))
        first = [e async for e in conv.send("hi")]
        second = [e async for e in conv.send("again")]
        await conv.aclose()
    assert not any(isinstance(e, StreamError) for e in first + second), (first + second)[-3:]
    sent = loopback.requests[1].json
    inputs = [b["input"] for m in sent["messages"] for b in m["content"] if isinstance(b, dict) and "input" in b]
    assert inputs == [{"a": "x\ufffdy"}]


async def test_a_lone_surrogate_in_an_error_is_one_readable_line(loopback: LoopbackServer, tmp_path) -> None:
    chunks = [*VALID["openai"][:2], (None, {"error": {"message": "over \ud800 loaded", "type": "server_error"}})]
    loopback.add(sse(encode("openai", chunks)))
    loopback.add(error(400, {"error": {"message": "bad \udfff request", "type": "invalid_request_error"}}))
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(store, SETTINGS, config("openai", loopback.url))
        first = [e async for e in conv.send("hi")]
        second = [e async for e in conv.send("again")]
        await conv.aclose()
        errors = [e for e in first + second if isinstance(e, StreamError)]
        assert [("over \ufffd loaded" in e.message, "bad \ufffd request" in e.message) for e in errors] == [
            (True, False),
            (False, True),
        ]
        stored = [c.metadata.get("error") for c in store.chain(conv.session_id or "") if c.metadata.get("error")]
        assert stored and all(encodable(e) for e in stored)


async def test_a_lone_surrogate_in_a_model_list_reads_as_u_fffd(loopback: LoopbackServer) -> None:
    loopback.add(json_body({"data": [{"id": "model-\ud800"}, {"id": f"pair-{EMOJI_PAIR}"}]}))
    provider = make_provider(ProviderConfig("openai", "x", base_url=f"{loopback.url}/v1", api_key_env=""))
    models = await provider.list_models()
    await provider.aclose()
    assert [m.id for m in models] == ["model-\ufffd", "pair-😀"]


async def test_print_mode_prints_and_stores_a_reply_with_a_lone_surrogate(loopback: LoopbackServer, tmp_path) -> None:
    chunks = [
        (None, {"choices": [{"delta": {"reasoning_content": "think \udfff x"}}]}),
        (None, {"choices": [{"delta": {"content": "before \ud800 after"}}]}),
    ]
    loopback.add(sse(encode("openai", chunks)))
    code, out, err = await run_cli(
        tmp_path, "-p", "hi", "--provider", "openai", "--model", "m", "--base-url", f"{loopback.url}/v1",
        "--api-key-env", "PRINT_TEST_KEY",
    )  # fmt: skip
    assert (code, out) == (0, "before \ufffd after\n"), err
    assert "think \ufffd x" in err and "Traceback" not in err
    with HistoryStore(tmp_path / "data" / "history.db") as store:
        reply = merge_commits(store.chain(store.latest_session() or ""))[-1]
        assert reply.text == "before \ufffd after" and reply.thinking[0].thought == "think \ufffd x"


# -- the command line: bytes that are not UTF-8 ------------------------------------------
NOT_UTF8 = "caf\udce9"  # b"caf\xe9" as Python keeps it in sys.argv (surrogateescape)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("-p", NOT_UTF8, "--provider", "demo"), "-p/--print"),
        (("--model", "m\udcff", "--provider", "openai", "--base-url", "http://127.0.0.1:9", "-p", "hi"), "--model"),
        (("--set", f"view.reasoningTags={NOT_UTF8}", "--provider", "demo", "-p", "hi"), "--set"),
        (("log", NOT_UTF8), "SESSION"),
    ],
)
async def test_an_argument_that_is_not_utf8_is_refused_before_anything_is_written(
    tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    code, out, err = await run_cli(tmp_path, *args)
    assert (code, out) == (2, ""), err
    assert err.splitlines() == [
        f"tractui: {named} is not UTF-8 text (the terminal or script sent other bytes); nothing was run"
    ]
    assert not (tmp_path / "data").exists()  # no history created, no session left behind


async def test_a_file_name_that_is_not_utf8_still_works(tmp_path: Path) -> None:
    """File names go to the OS as the bytes they were: they are not refused."""
    code, _, err = await run_cli(tmp_path, "-p", "hi", "--provider", "demo")
    assert code == 0, err
    target = str(tmp_path / NOT_UTF8) + ".json"
    assert (await run_cli(tmp_path, "export", "--format", "json", "-o", target))[0] == 0
    assert Path(target).is_file()


# -- imports --------------------------------------------------------------------------
def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def export(text: str) -> str:
    cid = new_id()
    commit = {
        "id": cid,
        "parent_id": None,
        "kind": "user",
        "content": {"speaker": "human", "blocks": [{"type": "text", "text": text}]},
        "created_at": 1_700_000_000.0,
    }
    session = {"id": new_id(), "created_at": 1_700_000_000.0, "updated_at": 1_700_000_000.0, "head": cid}
    return json.dumps({"format": "tractui-session", "version": 1, "session": session, "commits": [commit]})


def test_an_export_holding_a_lone_surrogate_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    file = tmp_path / "in.json"
    file.write_text(export("h\ud800i"), encoding="utf-8")
    assert "\\ud800" in file.read_text(encoding="utf-8")
    code, out, err = run("import", str(file))
    assert (code, out) == (2, ""), err
    assert err.splitlines() == [
        "tractui: cannot import: commits.0.content.blocks.0.text: holds a lone surrogate escape "
        "(\\ud800–\\udfff), which is not text"
    ]
    with HistoryStore(history_path()) as store:
        assert store.list_sessions() == []
        assert store._conn.execute("SELECT COUNT(*) FROM commits").fetchone() == (0,)
    file.write_text(export(f"a pair {EMOJI_PAIR} is one character"), encoding="utf-8")
    assert run("import", str(file))[0] == 0
