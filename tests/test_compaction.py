"""Compaction end to end: a real SQLite history, a real provider over loopback HTTP, the real tokenizer.

The server plays an OpenAI-compatible model: it answers chat requests with a
generated reply and reports usage counted with the real tokenizer over the
body it received, and it answers summary requests (recognised by the
structured system prompt) with a structured summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import random
import sys
from asyncio.subprocess import PIPE
from typing import Any

import pytest
from loopback import LoopbackServer, Reply, encode_sse, error, sse

from tractui.cli.main import main
from tractui.config.profiles import ProfileStore
from tractui.conversation.compaction import prompt
from tractui.conversation.compaction.preflight import compact_conversation
from tractui.conversation.compaction.run import Summarizer, compact, compaction_count
from tractui.conversation.conversation import Conversation
from tractui.core.content import Content
from tractui.core.events import Notice, StreamError
from tractui.core.gauge import measure_context
from tractui.core.settings import Settings
from tractui.core.tokens import MESSAGE_OVERHEAD, TokenCounter
from tractui.errors import StoreError
from tractui.providers import ProviderConfig
from tractui.store.compile import compacted_ids
from tractui.store.history import HistoryStore

LIMIT = 2000
MAX_TOKENS = 256
COUNTER = TokenCounter("loopback-model")
WORDS = [
    "parser",
    "lexer",
    "token",
    "module",
    "config",
    "cache",
    "index",
    "the",
    "a",
    "of",
    "to",
    "and",
    "for",
    "with",
    "file",
    "function",
    "returns",
    "value",
    "test",
    "error",
    "fixes",
    "build",
    "path",
    "user",
    "data",
    "request",
    "stream",
    "buffer",
    "queue",
    "thread",
]
SUMMARY = (
    "## User's goal\nBuild the parser in src/parser.py.\n## Decisions and facts established\nTokens are cached.\n"
    "## Code and file names mentioned\nsrc/parser.py, lex()\n## Open questions\nnone\n## User preferences\nshort answers\n"
    "## Where the conversation stood\nDiscussing the lexer."
)


def words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def body_tokens(body: dict[str, Any]) -> int:
    """Tokens of everything the model reads in a Chat Completions body, counted with the real tokenizer."""
    total = 0
    for message in body["messages"]:
        total += MESSAGE_OVERHEAD + COUNTER.count(_text(message.get("content")))
        total += COUNTER.count(message.get("reasoning_content") or "")
    return total


def chat_reply(text: str, reasoning: str, prompt_tokens: int) -> Reply:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loopback-model"}
    chunks: list[Any] = []
    if reasoning:
        chunks.append(
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": reasoning}}]}
        )
    chunks.append({**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    thinking = COUNTER.count(reasoning)
    out = COUNTER.count(text) + thinking
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": out,
        "total_tokens": prompt_tokens + out,
        "completion_tokens_details": {"reasoning_tokens": thinking},
    }
    chunks.append({**base, "choices": [], "usage": usage})
    return sse(encode_sse(chunks), seed=None)


class Model:
    """The scripted model behind the loopback server; records chat and summary bodies apart."""

    def __init__(
        self, server: LoopbackServer, *, reply_words: int = 40, thinking_words: int = 0, summary: str = SUMMARY
    ) -> None:
        self.chat: list[dict[str, Any]] = []
        self.summaries: list[dict[str, Any]] = []
        self.reply_words, self.thinking_words, self.summary = reply_words, thinking_words, summary
        server.default = self

    def __call__(self, request: Any) -> Reply:
        body = request.json
        first = body["messages"][0]
        if first["role"] == "system" and _text(first["content"]) == prompt.SYSTEM_PROMPT:
            self.summaries.append(body)
            return chat_reply(self.summary, "", body_tokens(body))
        self.chat.append(body)
        n = len(self.chat)
        thinking = words(self.thinking_words, 10_000 + n) if self.thinking_words else ""
        return chat_reply(f"answer {n}: {words(self.reply_words, n)}", thinking, body_tokens(body))


def make_settings(**values: Any) -> Settings:
    settings = Settings({"context-limit": LIMIT, "max-tokens": MAX_TOKENS, "retries": 0})
    for key, value in values.items():
        settings.set(key, value)
    return settings


@pytest.fixture
def store(tmp_path, monkeypatch) -> HistoryStore:
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    with HistoryStore(tmp_path / "data" / "history.db") as s:
        yield s


def conversation(store: HistoryStore, loopback: LoopbackServer, settings: Settings) -> Conversation:
    config = ProviderConfig("openai", "loopback-model", base_url=f"{loopback.url}/v1", api_key_env="")
    return Conversation(store, settings, config)


async def say(conv: Conversation, text: str) -> list[Any]:
    return [event async for event in conv.send(text)]


def compacting(events: list[Any]) -> bool:
    return any(isinstance(e, Notice) and "compacting first" in e.message for e in events)


async def test_forty_turns_never_overflow_and_compact_exactly_when_the_gauge_says(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings())
    decisions: list[tuple[bool, bool]] = []
    for turn in range(40):
        events = await say(conv, f"question {turn}: {words(30, turn)}")
        assert not any(isinstance(e, StreamError) for e in events), events
        user = next(c for c in reversed(conv.history()) if c.kind == "user")
        before = conv.gauge(head=user.id)  # what the pre-flight measured for this request
        decisions.append((before.should_compact(), compacting(events)))
    assert all(should == did for should, did in decisions), decisions
    compactions = sum(did for _, did in decisions)
    assert compactions >= 2
    assert compaction_count(conv.history()) == compactions
    for body in model.chat + model.summaries:
        assert body_tokens(body) + MAX_TOKENS <= LIMIT
    assert len(model.chat) == 40


async def test_summary_request_carries_the_structured_prompt_and_the_transcript(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings())
    for turn in range(6):
        await say(conv, f"question {turn}: {words(20, turn)}")
    events = [e async for e in compact_conversation(conv, "the lexer design")]
    result = events[-1]
    assert result.ok, result.message
    assert [e.stage for e in events[:-1]][:1] == ["planning"] and "storing" in [e.stage for e in events[:-1]]
    body = model.summaries[-1]
    system, user = body["messages"][0]["content"], _text(body["messages"][1]["content"])
    for section in prompt.SECTIONS:
        assert f"## {section}" in system
    assert "question 0:" in user and "answer 1:" in user
    assert "question 5:" not in user  # the last turns are kept verbatim, not summarised
    assert "focus on: the lexer design" in user
    assert "reasoning_effort" not in body and body["max_tokens"] <= LIMIT // 8
    # what the summary call cost is the summary commit's: the session's totals count it
    assert result.usage is not None and result.usage.input_tokens == body_tokens(body)
    assert store.get(result.commit_id).usage == result.usage
    replies = sum(c.usage.input_tokens for c in conv.history() if c.kind == "assistant" and c.usage)
    assert conv.totals().input_tokens == replies + body_tokens(body)


async def test_compiled_context_after_compaction_is_summary_plus_recent_turns(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings(**{"compaction.keepTurns": 3}))
    for turn in range(8):
        await say(conv, f"question {turn}: {words(20, turn)}")
    before = conv.messages()
    result = [e async for e in compact_conversation(conv)][-1]
    assert result.ok and result.replaced_turns == 5 and result.kept_turns == 3
    after = conv.messages()
    assert after[0].speaker == "human" and after[0].text.startswith(prompt.SUMMARY_HEADER)
    assert SUMMARY in after[0].text
    assert [m.text for m in after[1:]] == [m.text for m in before[-6:]]
    assert conv.gauge().estimated  # after compaction the gauge estimates until the next call
    # the originals stay, marked as compacted
    chain = conv.history()
    hidden = compacted_ids(chain)
    assert len(hidden) == 10 and all(store.get(i) is not None for i in hidden)
    log = io.StringIO()
    assert main(["log", conv.session_id], out=log) == 0
    assert log.getvalue().count("[compacted]") == 10 and "summary" in log.getvalue()
    await say(conv, "next question")
    sent = model.chat[-1]["messages"]
    assert _text(sent[0]["content"]).startswith(prompt.SUMMARY_HEADER)
    assert _text(sent[0]["content"]).endswith(before[-6].text)  # one user message: roles alternate
    assert [m["role"] for m in sent] == ["user", "assistant"] * 3 + ["user"]
    assert not conv.gauge().estimated  # recalibrated by the reply's usage


async def test_a_second_compaction_folds_the_first_summary_in(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings(**{"compaction.keepTurns": 2}))
    for turn in range(5):
        await say(conv, f"question {turn}: {words(20, turn)}")
    assert [e async for e in compact_conversation(conv)][-1].ok
    for turn in range(5, 9):
        await say(conv, f"question {turn}: {words(20, turn)}")
    assert [e async for e in compact_conversation(conv)][-1].ok
    assert prompt.SUMMARY_HEADER in _text(model.summaries[-1]["messages"][1]["content"])
    messages = conv.messages()
    assert sum(m.text.startswith(prompt.SUMMARY_HEADER) for m in messages) == 1
    assert len(messages) == 1 + 4 and messages[1].text.startswith("question 7:")
    assert compaction_count(conv.history()) == 2


@pytest.mark.parametrize(
    ("include", "strip", "triggers"),
    [(False, "none", False), (True, "all", False), (True, "none", True)],
)
async def test_thinking_counts_and_triggers_only_when_it_is_sent(store, loopback, include, strip, triggers):
    model = Model(loopback, reply_words=8, thinking_words=150)
    settings = make_settings(**{"reasoning.includeInContext": include, "reasoning.stripFromContext": strip})
    conv = conversation(store, loopback, settings)
    compactions = 0
    for turn in range(12):
        compactions += compacting(await say(conv, f"q{turn} {words(8, turn)}"))
    thinking = sum(COUNTER.count(b.thought) for c in conv.history() for b in c.content.thinking)
    reading = conv.gauge()
    assert thinking > reading.threshold  # the stored thinking alone would cross the threshold
    assert (compactions > 0) == triggers
    assert bool(model.summaries) == triggers
    if triggers:
        assert any("(thinking)" in _text(b["messages"][1]["content"]) for b in model.summaries)
    else:
        assert reading.effective < reading.threshold
        assert all("reasoning_content" not in m for b in model.chat for m in b["messages"])
    for body in model.chat:
        assert body_tokens(body) + MAX_TOKENS <= LIMIT


def cut_summary(request: Any) -> Reply:
    """A summary stream a proxy closes cleanly mid-reply: no finish reason, no ``[DONE]``."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loopback-model"}
    delta = {"role": "assistant", "content": "## User's goal\nhalf a summ"}
    return sse(encode_sse([{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}], done=False))


FAILED_SUMMARIES = {
    "refused": (error(400, {"error": {"message": "summariser is unhappy", "type": "invalid_request_error"}}), None),
    # until 2026-11-28 it ended with the stream error's "; what arrived is kept": nothing of it is
    "cut": (cut_summary, "the stream ended before the reply finished (no finish reason from the server)"),
}


@pytest.mark.parametrize("how", FAILED_SUMMARIES)
async def test_a_failed_summary_call_leaves_the_history_as_it_was(store, loopback, how):
    reply, said = FAILED_SUMMARIES[how]
    Model(loopback)
    conv = conversation(store, loopback, make_settings())
    for turn in range(6):
        await say(conv, f"question {turn}: {words(20, turn)}")
    chain = [c.id for c in conv.history()]
    loopback.add(reply)
    result = [e async for e in compact_conversation(conv)][-1]
    assert not result.ok
    assert result.message.startswith("compaction failed, history unchanged: the summary call to openai/loopback-model")
    assert result.message.endswith(said) if said else "summariser is unhappy" in result.message
    assert "what arrived is kept" not in result.message
    assert [c.id for c in conv.history()] == chain


async def test_cancelling_a_compaction_changes_nothing(store, loopback):
    Model(loopback)
    conv = conversation(store, loopback, make_settings())
    for turn in range(6):
        await say(conv, f"question {turn}: {words(20, turn)}")
    chain = [c.id for c in conv.history()]
    requests = len(loopback.requests)
    loopback.add(
        sse(encode_sse([{"choices": [{"index": 0, "delta": {"content": "## User"}}]}]), stall_after=20, stall=30)
    )

    async def run() -> list[Any]:
        return [e async for e in compact_conversation(conv)]

    task = asyncio.create_task(run())
    while len(loopback.requests) == requests:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [c.id for c in conv.history()] == chain
    assert not any(c.kind == "summary" for c in store.commits(conv.session_id))


async def test_a_summary_that_is_not_five_percent_smaller_is_rejected(store, loopback):
    Model(loopback, summary="## User's goal\n" + words(600, 7))
    conv = conversation(store, loopback, make_settings(**{"compaction.keepTurns": 2}))
    for turn in range(4):
        await say(conv, f"question {turn}: {words(20, turn)}")
    chain = [c.id for c in conv.history()]
    result = [e async for e in compact_conversation(conv)][-1]
    assert not result.ok and "not at least 5% smaller" in result.message
    assert result.after_tokens > result.before_tokens * 0.95
    assert [c.id for c in conv.history()] == chain


async def test_automatic_compaction_runs_at_most_once_per_request(store, loopback):
    model = Model(loopback, summary="## User's goal\n" + words(1500, 7))  # always rejected
    conv = conversation(store, loopback, make_settings())
    for turn in range(22):
        events = await say(conv, f"question {turn}: {words(30, turn)}")
        attempts = sum(isinstance(e, Notice) and "compacting first" in e.message for e in events)
        assert attempts <= 1
        if attempts:
            assert any(isinstance(e, Notice) and "rejected" in e.message for e in events)
    assert model.summaries and len(model.summaries) <= 22
    assert compaction_count(conv.history()) == 0


async def test_a_history_too_big_for_the_summariser_is_summarised_in_parts(store, loopback):
    model = Model(loopback, summary="## User's goal\nparser work so far.")
    settings = make_settings(**{"compaction.keepTurns": 1})
    conv = conversation(store, loopback, settings)
    for turn in range(8):
        await say(conv, f"question {turn}: {words(30, turn)}")
    small = Settings({"context-limit": 700, "max-tokens": 128})
    summarizer = Summarizer(conv.provider, small, COUNTER, "openai/small")
    result = [e async for e in compact(store, conv.session_id, settings, summarizer, COUNTER)][-1]
    assert result.ok, result.message
    assert len(model.summaries) >= 3
    for body in model.summaries:
        assert body_tokens(body) + summarizer.output_budget <= 700
    for body in model.summaries[1:]:
        assert "parser work so far." in _text(body["messages"][1]["content"])  # the running summary is carried


async def test_a_summary_that_cannot_be_written_is_a_failed_result_not_an_exception(store, loopback):
    """A full disk as the summary is written: one line, the history as it was (the worker that ran
    /compact failed, and the app ended, with a traceback)."""
    model = Model(loopback, summary="## User's goal\nparser work so far.")
    settings = make_settings(**{"compaction.keepTurns": 1})
    conv = conversation(store, loopback, settings)
    for turn in range(4):
        await say(conv, f"question {turn}: {words(30, turn)}")
    before = [c.id for c in store.chain(conv.session_id)]
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page,
    filler = store.create_session("filler")
    with pytest.raises(StoreError):  # and none left in the pages there are
        for size in (4000, 1000, 200, 50, 10) * 50:
            with contextlib.suppress(StoreError):
                store.append(filler, "user", Content.human("x" * size))
        store.append(filler, "user", Content.human("x"))
    summarizer = Summarizer(conv.provider, settings, COUNTER, "openai/loop")
    try:
        result = [e async for e in compact(store, conv.session_id, settings, summarizer, COUNTER)][-1]
    finally:
        store._conn.execute("PRAGMA max_page_count = 1073741823")
    assert model.summaries and not result.ok
    assert result.message.startswith("compaction failed, history unchanged: the summary cannot be written")
    assert [c.id for c in store.chain(conv.session_id)] == before


async def test_a_message_too_big_for_the_window_is_not_sent_and_says_by_how_much(store, loopback):
    Model(loopback)
    conv = conversation(store, loopback, make_settings())
    giant = words(2600, 1)
    events = await say(conv, giant)
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and errors[0].kind == "context_length"
    need = conv.gauge().effective + MAX_TOKENS - LIMIT
    assert f"{need:,} over" in errors[0].message
    assert loopback.requests == []
    assert conv.history()[-1].content.text == giant  # what the user typed is kept


async def test_a_provider_context_length_error_trims_the_oldest_turns_and_retries_once(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings())
    for turn in range(6):
        await say(conv, f"question {turn}: {words(20, turn)}")
    loopback.add(
        error(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 2000 tokens.",
                    "code": "context_length_exceeded",
                }
            },
        )
    )
    events = await say(conv, "one more")
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("retrying once without the oldest" in n for n in notices)
    assert not any(isinstance(e, StreamError) for e in events)
    refused, retried = loopback.requests[-2].json, model.chat[-1]
    assert len(retried["messages"]) < len(refused["messages"])
    assert retried["messages"][0]["role"] == "user" and retried["messages"][-1]["content"] == "one more"
    assert conv.history()[-1].content.text.startswith("answer")
    assert len(conv.messages()) == 14  # the store keeps every turn

    for _ in range(2):
        loopback.add(
            error(400, {"error": {"message": "maximum context length exceeded", "code": "context_length_exceeded"}})
        )
    events = await say(conv, "and another")
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and errors[0].kind == "context_length"  # retried once only


async def test_print_mode_continue_compacts_the_same_way(store, loopback, tmp_path):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings())
    for turn in range(17):
        await say(conv, f"question {turn}: {words(30, turn)}")
    assert conv.gauge().should_compact() and not model.summaries
    env = {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
        "TRACTUI_DATA_DIR": str(tmp_path / "data"),
        "OPENAI_API_KEY": "sk-loopback-test",
    }
    argv = [
        "-m",
        "tractui",
        "-c",
        "-p",
        "what next?",
        "--provider",
        "openai",
        "--model",
        "loopback-model",
        "--base-url",
        f"{loopback.url}/v1",
        "--set",
        f"context-limit={LIMIT}",
        "--set",
        f"max-tokens={MAX_TOKENS}",
        "--json",
    ]
    proc = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, stdout=PIPE, stderr=PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert "compacting first" in err.decode() and "compacted 1×" in err.decode()
    result = json.loads(out)
    assert result["text"].startswith("answer 18:")
    assert len(model.summaries) >= 1
    # the turn's usage counts its summary calls too (until 2026-11-28 only the reply's request)
    requests = [*model.summaries, model.chat[-1]]
    assert result["usage"]["input"] == sum(body_tokens(body) for body in requests)
    sent = model.chat[-1]["messages"]
    assert _text(sent[0]["content"]).startswith(prompt.SUMMARY_HEADER) and sent[-1]["content"] == "what next?"
    assert body_tokens(model.chat[-1]) + MAX_TOKENS <= LIMIT
    assert compaction_count(store.chain(conv.session_id)) == 1


async def test_print_mode_says_in_one_line_what_is_left_out_when_compaction_fails(store, loopback, tmp_path):
    """A history over the window, its summary stream cut: the oldest turns are left out behind a note,
    and one line says so and why. Until 2026-11-28 a line "compaction failed, history unchanged: …;
    what arrived is kept" came first, though a note was written and nothing of the summary kept."""
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings(**{"context-limit": 4 * LIMIT}))
    for turn in range(30):
        await say(conv, f"question {turn}: {words(30, turn)}")
    chats = len(model.chat)
    loopback.add(cut_summary)
    env = {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
        "TRACTUI_DATA_DIR": str(tmp_path / "data"),
        "OPENAI_API_KEY": "sk-loopback-test",
    }
    setup = ["--provider", "openai", "--model", "loopback-model", "--base-url", f"{loopback.url}/v1"]
    limits = ["--set", f"context-limit={LIMIT}", "--set", f"max-tokens={MAX_TOKENS}", "--set", "retries=0"]
    argv = ["-m", "tractui", "-c", "-p", "what next?", *setup, *limits, "--json"]
    proc = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, stdout=PIPE, stderr=PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    told = [line for line in err.decode().splitlines() if "compaction failed" in line]
    assert len(told) == 1, err.decode()
    assert told[0].startswith(
        "compaction failed (the summary call to openai/loopback-model failed: the stream ended before the reply "
        "finished (no finish reason from the server)) and the request would not fit without it: the oldest "
    )
    assert "are left out of what is sent from now on" in told[0] and "they stay in the history" in told[0]
    assert "history unchanged" not in err.decode() and "what arrived is kept" not in err.decode()
    assert json.loads(out)["text"].startswith("answer ")
    sent = model.chat[chats:]
    assert len(sent) == 1 and _text(sent[0]["messages"][0]["content"]).startswith("[")  # the note, in their place
    assert body_tokens(sent[0]) + MAX_TOKENS <= LIMIT
    left_out = [c for c in store.chain(conv.session_id) if c.kind == "summary"]
    assert len(left_out) == 1 and left_out[0].metadata.get("left_out") is True


async def test_compaction_model_and_profile_choose_the_summariser(store, loopback):
    model = Model(loopback)
    settings = make_settings(**{"compaction.model": "cheap-model"})
    conv = conversation(store, loopback, settings)
    for turn in range(6):
        await say(conv, f"question {turn}: {words(20, turn)}")
    assert [e async for e in compact_conversation(conv)][-1].ok
    assert model.summaries[-1]["model"] == "cheap-model" and model.chat[-1]["model"] == "loopback-model"

    cheap = ProviderConfig("openai", "profile-model", base_url=f"{loopback.url}/v1", api_key_env="")
    ProfileStore().save("summariser", cheap, Settings({"context-limit": 4000}))
    settings.unset("compaction.model")
    settings.set("compaction.profile", "summariser")
    await say(conv, "more")
    await say(conv, "and more")
    assert [e async for e in compact_conversation(conv)][-1].ok
    assert model.summaries[-1]["model"] == "profile-model"
    assert model.summaries[-1]["max_tokens"] == 4000 // 8

    settings.set("compaction.profile", "no-such-profile")
    chain = [c.id for c in conv.history()]
    result = [e async for e in compact_conversation(conv)][-1]
    assert not result.ok and "no-such-profile" in result.message
    assert [c.id for c in conv.history()] == chain


def test_the_worked_example_in_the_docs_matches_the_gauge():
    settings = Settings({"context-limit": 200000, "max-tokens": 16000})
    reading = measure_context([Content.human("hi")], settings)
    assert (reading.margin, reading.usable, reading.threshold) == (4000, 180000, 153000)


async def test_with_auto_compaction_off_nothing_is_summarised_and_nothing_overflows(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings(**{"compaction.auto": False}))
    blocked = 0
    for turn in range(24):
        events = await say(conv, f"question {turn}: {words(30, turn)}")
        blocked += any(isinstance(e, StreamError) and e.kind == "context_length" for e in events)
    assert not model.summaries and blocked > 0
    assert all(body_tokens(body) + MAX_TOKENS <= LIMIT for body in model.chat)


def tool_turns(conv: Conversation, turns: int, result_words: int) -> None:
    """``turns`` earlier turns, each a question, a call to a tool, its large result and the answer."""
    from tractui.core.content import TextBlock, ToolCallBlock, ToolResultBlock

    store, sid = conv.store, conv._session()
    head = store.chain(sid)[-1].id if store.chain(sid) else None
    for turn in range(turns):
        head = store.append(sid, "user", Content.human(f"question {turn}: read the log"), parent_id=head).id
        call = ToolCallBlock(id=f"call_{turn}", name="demo__read_file", arguments='{"path": "app.log"}')
        head = store.append(sid, "assistant", Content(speaker="ai", blocks=[call]), parent_id=head).id
        result = ToolResultBlock(tool_call_id=f"call_{turn}", content=words(result_words, 500 + turn))
        head = store.append(sid, "tool", Content(speaker="tool", blocks=[result]), parent_id=head).id
        answer = Content(speaker="ai", blocks=[TextBlock(text=f"answer {turn}: the log says {words(10, turn)}")])
        head = store.append(sid, "assistant", answer, parent_id=head).id


def tool_results_sent(body: dict[str, Any]) -> list[str]:
    return [_text(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def test_old_tool_results_are_cleared_first_and_no_summary_is_written_when_that_is_enough(store, loopback):
    from tractui.conversation.compaction.clear import KEEP_TURNS
    from tractui.store.compile import CLEARED

    model = Model(loopback)
    conv = conversation(store, loopback, make_settings())
    tool_turns(conv, 6, result_words=220)
    before = conv.gauge()
    assert before.should_compact()
    events = await say(conv, "and now?")
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert compacting(events) and any(n.startswith("cleared 4 old tool results") for n in notices)
    assert not model.summaries  # clearing was enough: no summary call
    sent = tool_results_sent(model.chat[-1])
    kept = KEEP_TURNS - 1  # the current turn has no result yet
    assert sent[:-kept] == [CLEARED] * 4 and all(r != CLEARED and len(r) > 500 for r in sent[-kept:])
    assert not conv.gauge().should_compact() and conv.gauge().effective < before.effective
    tools = [c for c in conv.history() if c.kind == "tool"]
    assert len(tools) == 6 and all(CLEARED not in c.content.blocks[0].content for c in tools)  # the store keeps them


async def test_when_clearing_old_tool_results_is_not_enough_a_summary_follows(store, loopback):
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings(**{"compression-threshold": 0.3}))
    tool_turns(conv, 6, result_words=150)
    events = await say(conv, "and now?")
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any(n.startswith("cleared ") for n in notices) and any(n.startswith("compacted ") for n in notices)
    assert len(model.summaries) == 1
    summarised = " ".join(_text(m["content"]) for m in model.summaries[0]["messages"])
    assert words(150, 500) not in summarised  # the summariser read the cleared history, not the old results


async def test_retry_after_an_automatic_compaction_answers_under_its_summary(store, loopback):
    """The summary a compaction wrote before a reply still stands for /retry: retrying under the
    user's message compacted the same turns again, every summary call paid twice."""
    model = Model(loopback)
    conv = conversation(store, loopback, make_settings(**{"compaction.keepTurns": 1}))
    turn = 0
    while not model.summaries:
        await say(conv, f"question {turn}: {words(30, turn)}")
        turn += 1
    summaries, summary = len(model.summaries), conv.history()[-2]
    assert summary.kind == "summary"
    events = [event async for event in conv.retry()]
    assert not compacting(events) and len(model.summaries) == summaries
    assert conv.history()[-2].id == summary.id and compaction_count(conv.history()) == 1
    assert model.chat[-1]["messages"] == model.chat[-2]["messages"]  # the same request again
