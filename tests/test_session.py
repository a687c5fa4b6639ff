"""The conversation loop over real HTTP (loopback) and a real SQLite file."""

from __future__ import annotations

import asyncio
import json

import pytest
from loopback import encode_sse, error, openai_chat_reply, sse
from ui_support import chat_stream

from tractui.conversation.conversation import Conversation
from tractui.core.content import Content, TextBlock, ThinkingBlock
from tractui.core.events import StreamError, TextDelta, ThinkingDelta, Usage
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.errors import ConversationError
from tractui.providers.transport import ProviderConfig
from tractui.store.compile import merge_commits
from tractui.store.history import HistoryStore

SECRET = "sk-test-SECRET-never-stored-0123456789"


@pytest.fixture
def store(tmp_path):
    s = HistoryStore(tmp_path / "history.db")
    yield s
    s.close()


@pytest.fixture
def config(loopback, monkeypatch):
    monkeypatch.setenv("TRACTUI_TEST_KEY", SECRET)
    return ProviderConfig(
        provider="openai", model="loop-model", base_url=f"{loopback.url}/v1", api_key_env="TRACTUI_TEST_KEY"
    )


def word_stream(words: list[str], reasoning: str = "", **opts):
    """A Chat Completions stream with one small delta per word, so a paced reply arrives gradually."""

    def chunk(delta, finish=None):
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"reasoning_content": reasoning})] if reasoning else []
    chunks += [chunk({"content": w}) for w in words] + [chunk({}, "stop")]
    return sse(encode_sse(chunks), **opts)


async def collect(stream):
    return [event async for event in stream]


async def test_a_turn_commits_user_reasoning_assistant_with_stamps(store, config, loopback):
    loopback.add(openai_chat_reply("Hello there", reasoning="Let me think.", prompt_tokens=12, completion_tokens=7))
    conv = Conversation(store, Settings(), config, profile_name="loop")
    events = await collect(conv.send("hi"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Let me think."
    chain = conv.history()
    assert [c.kind for c in chain] == ["user", "reasoning", "assistant"]
    user, reasoning, answer = chain
    assert answer.parent_id == reasoning.id and reasoning.parent_id == user.id
    assert reasoning.content.thinking[0].thought == "Let me think." and reasoning.content.text == ""
    assert answer.content.text == "Hello there" and answer.content.thinking == []
    assert all(c.status == "complete" for c in chain)
    assert (answer.provider, answer.model, answer.profile) == ("openai", "loop-model", "loop")
    assert answer.content.metadata == {
        "provider": "openai",
        "model": "loop-model",
        "base_url": f"{loopback.url}/v1",
        "api_key_env": config.api_key_env,  # the variable's name, for a resume; the key is never stored
    }
    assert answer.usage.input_tokens == 12 and answer.usage.output_tokens == 7
    assert answer.metadata["finish_reason"] == "stop"
    assert answer.metadata["basis"]["message_count"] == 2
    assert store.session(conv.session_id).title == "hi"
    await conv.aclose()


async def test_a_turn_without_reasoning_has_no_reasoning_commit(store, config, loopback):
    loopback.add(openai_chat_reply("Plain answer"))
    conv = Conversation(store, Settings(), config)
    await collect(conv.send("hi"))
    assert [c.kind for c in conv.history()] == ["user", "assistant"]
    await conv.aclose()


async def test_multi_turn_sends_history_per_reasoning_policy(store, config, loopback):
    loopback.add(openai_chat_reply("A1", reasoning="T1"), openai_chat_reply("A2"), openai_chat_reply("A3"))
    conv = Conversation(store, Settings(), config)
    await collect(conv.send("q1"))
    await collect(conv.send("q2"))
    sent = loopback.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "A1" and "reasoning_content" not in sent[1]
    conv.settings.set("reasoning.includeInContext", "true")
    await collect(conv.send("q3"))
    sent = loopback.requests[2].json["messages"]
    assert sent[1].get("reasoning_content") == "T1"
    await conv.aclose()


async def test_retry_makes_a_sibling_branch_and_keeps_the_old_answer(store, config, loopback):
    loopback.add(openai_chat_reply("first"), openai_chat_reply("second"))
    conv = Conversation(store, Settings(), config)
    await collect(conv.send("q"))
    old = conv.history()[-1]
    await collect(conv.retry())
    chain = conv.history()
    assert [c.content.text for c in chain] == ["q", "second"]
    assert [c.content.text for c in store.siblings(chain[-1].id)] == ["first", "second"]
    assert store.get(old.id).content.text == "first"
    # the retry's request did not include the old answer
    assert [m["content"] for m in loopback.requests[1].json["messages"]] == ["q"]
    await conv.aclose()


async def test_edit_last_branches_from_the_user_message(store, config, loopback):
    loopback.add(openai_chat_reply("one"), openai_chat_reply("two"), openai_chat_reply("edited answer"))
    conv = Conversation(store, Settings(), config)
    await collect(conv.send("q1"))
    await collect(conv.send("q2 with typo"))
    await collect(conv.edit_last("q2 fixed"))
    assert [c.content.text for c in conv.history()] == ["q1", "one", "q2 fixed", "edited answer"]
    edited = next(c for c in conv.history() if c.content.text == "q2 fixed")
    assert [c.content.text for c in store.siblings(edited.id)] == ["q2 with typo", "q2 fixed"]
    assert [m["content"] for m in loopback.requests[2].json["messages"]] == ["q1", "one", "q2 fixed"]
    await conv.aclose()


async def test_nothing_to_retry_and_empty_message_are_refused(store, config):
    conv = Conversation(store, Settings(), config)
    with pytest.raises(ConversationError):
        await collect(conv.retry())
    with pytest.raises(ConversationError):
        await collect(conv.send("   "))
    assert store.list_sessions() == []


async def test_cancel_keeps_the_partial_reply_marked_interrupted(store, config, loopback):
    loopback.add(word_stream(["word "] * 200, reasoning="thinking hard", seed=1, max_chunk=200, pace=0.005))
    conv = Conversation(store, Settings(), config)
    seen = ""
    async for event in conv.send("go"):
        if isinstance(event, TextDelta):
            seen += event.text
            if len(seen) > 20:
                conv.cancel()
    answer = conv.history()[-1]
    assert answer.status == "interrupted"
    assert answer.content.text == seen and 20 < len(seen) < 1000
    assert conv.history()[-2].content.thinking[0].thought == "thinking hard"
    assert isinstance(conv.assembler.error, StreamError) and conv.assembler.error.kind == "cancelled"
    await conv.aclose()


async def test_cancel_before_the_reply_stream_first_runs_ends_the_turn(store, config, loopback, monkeypatch):
    """Esc handled after the reply's stream task is made and before it first runs (the moment a
    tool round hands over to the next request): the turn ends, cancelled, instead of waiting for
    an end the task never got to send."""
    loopback.add(word_stream(["word "] * 50, seed=3))
    conv = Conversation(store, Settings(), config)
    original = Conversation._flush_loop

    def flusher(self, writer, assembler):  # made right after the stream task: cancel there
        self.cancel()
        return original(self, writer, assembler)

    monkeypatch.setattr(Conversation, "_flush_loop", flusher)
    events = await asyncio.wait_for(collect(conv.send("go")), 30)
    assert isinstance(events[-1], StreamError) and events[-1].kind == "cancelled"
    assert [(c.kind, c.status) for c in conv.history()] == [("user", "complete"), ("assistant", "interrupted")]
    assert loopback.requests == []  # nothing was sent
    assert not conv.streaming
    await conv.aclose()


async def test_cancelling_the_consumer_task_keeps_the_partial(store, config, loopback):
    loopback.add(word_stream(["slow "] * 400, seed=2, max_chunk=200, pace=0.005))
    conv = Conversation(store, Settings(), config)
    got = asyncio.Event()

    async def consume():
        async for event in conv.send("go"):
            if isinstance(event, TextDelta):
                got.set()

    task = asyncio.create_task(consume())
    await got.wait()
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    answer = conv.history()[-1]
    assert answer.kind == "assistant" and answer.status == "interrupted" and answer.content.text.startswith("slow")
    await conv.aclose()


async def test_partial_reply_is_on_disk_while_streaming(store, config, loopback, tmp_path):
    loopback.add(word_stream(["tick "] * 60, reasoning="pondering", seed=3, max_chunk=200, pace=0.005))
    conv = Conversation(store, Settings(), config)
    snapshots = []
    with HistoryStore(tmp_path / "history.db") as reader:  # another connection, as another process would see it
        async for event in conv.send("go"):
            if isinstance(event, TextDelta) and len(conv.assembler.text) > 50 and not snapshots:
                await asyncio.sleep(0.3)  # longer than the flush interval
                snapshots.append(reader.chain(conv.session_id))
    partial = snapshots[0]
    assert [c.kind for c in partial] == ["user", "reasoning", "assistant"]
    assert partial[-1].status == "interrupted" and len(partial[-1].content.text) > 50
    assert partial[1].content.thinking[0].thought == "pondering"
    assert conv.history()[-1].status == "complete"
    await conv.aclose()


async def test_provider_error_is_recorded_and_not_sent_back(store, config, loopback):
    loopback.add(
        error(401, {"error": {"message": "bad key", "type": "invalid_request_error"}}), openai_chat_reply("ok")
    )
    conv = Conversation(store, Settings(), config)
    events = await collect(conv.send("q1"))
    assert any(isinstance(e, StreamError) for e in events)
    failed = conv.history()[-1]
    assert failed.kind == "assistant" and failed.status == "error" and failed.metadata["error"]["kind"] == "auth"
    await collect(conv.send("q2"))
    # the error is not sent back; the two questions go as one user message, so roles alternate
    assert loopback.requests[1].json["messages"] == [{"role": "user", "content": "q1\n\nq2"}]
    await conv.aclose()


async def test_switch_profile_keeps_history_and_uses_the_new_provider_next(store, config, loopback):
    loopback.add(openai_chat_reply("from A"), openai_chat_reply("from B"))
    conv = Conversation(store, Settings(), config, profile_name="a")
    await collect(conv.send("q1"))
    other = ProviderConfig(
        provider="openai", model="other-model", base_url=config.base_url, api_key_env="TRACTUI_TEST_KEY"
    )
    conv.switch_profile(other, Settings({"temperature": "0.5"}), "b")
    await collect(conv.send("q2"))
    body = loopback.requests[1].json
    assert body["model"] == "other-model" and body["temperature"] == 0.5
    assert [m["content"] for m in body["messages"]] == ["q1", "from A", "q2"]
    assert [(c.model, c.profile) for c in conv.history() if c.kind == "assistant"] == [
        ("loop-model", "a"),
        ("other-model", "b"),
    ]
    await conv.aclose()


async def test_gauge_estimates_first_then_uses_actual_usage(store, config, loopback):
    loopback.add(openai_chat_reply("An answer of a few words.", prompt_tokens=500, completion_tokens=40))
    conv = Conversation(store, Settings(), config)
    assert conv.gauge().estimated
    await collect(conv.send("hello"))
    reading = conv.gauge()
    assert not reading.estimated and reading.effective == 540
    longer = conv.gauge(Content.human("a new message with several more tokens in it"))
    assert longer.effective > 540
    await conv.aclose()


async def test_gauge_follows_a_reasoning_policy_changed_after_the_last_call(store, config, loopback):
    """Both replies' thinking went unsent; once it is to be sent, both count at once."""
    first, second = "Weigh both options with care before answering. " * 8, "Check the edge cases once more."
    loopback.add(
        openai_chat_reply("one", reasoning=first, prompt_tokens=300, completion_tokens=500),
        openai_chat_reply("two", reasoning=second, prompt_tokens=400, completion_tokens=500),
    )
    settings = Settings({"reasoning.includeInContext": False})
    conv = Conversation(store, settings, config)
    await collect(conv.send("q1"))
    await collect(conv.send("q2"))
    stripped = conv.gauge().effective
    settings.set("reasoning.includeInContext", True)
    sent = conv.gauge()
    replies = [m for m in merge_commits(conv.history()) if m.speaker == "ai"]
    counter = TokenCounter("loop-model")
    assert sent.effective - stripped == counter.count_thinking(replies[0]) + counter.count_thinking(replies[1])
    assert sent.breakdown.thinking == sent.effective - stripped
    await conv.aclose()


async def test_totals_and_sessions(store, config, loopback):
    loopback.add(
        openai_chat_reply("a", completion_tokens=5), openai_chat_reply("b", completion_tokens=6), openai_chat_reply("c")
    )
    conv = Conversation(store, Settings(), config)
    await collect(conv.send("q1"))
    await collect(conv.retry())
    assert conv.totals().output_tokens == 11
    first = conv.session_id
    conv.new_session()
    assert conv.history() == []
    await collect(conv.send("elsewhere"))
    assert conv.session_id != first
    assert conv.open_session(first) == first and conv.history()[-1].content.text == "b"
    await conv.aclose()


async def test_api_key_never_reaches_the_store(store, config, loopback, tmp_path):
    loopback.add(openai_chat_reply("fine"), error(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    conv = Conversation(store, Settings(), config)
    await collect(conv.send("q"))
    await collect(conv.send("again"))
    assert loopback.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    from tractui.store.export import export_markdown

    exported = json.dumps(store.export_session(conv.session_id)) + export_markdown(store, conv.session_id)
    assert "fine" in exported and SECRET not in exported
    store.close()
    beside = [
        p for p in tmp_path.rglob("*") if p.is_file() and p.relative_to(tmp_path).parts[0].startswith("history.db")
    ]
    raw = b"".join(p.read_bytes() for p in beside)
    assert raw and SECRET.encode() not in raw


async def test_demo_provider_turn(store):
    from tractui.providers.demo import DemoProvider

    config = ProviderConfig(provider="demo", model="demo")
    conv = Conversation(store, Settings(), config, provider=DemoProvider(config, pace=0))
    events = await collect(conv.send("show me"))
    assert any(isinstance(e, TextDelta) for e in events)
    answer = conv.history()[-1]
    assert answer.status == "complete" and answer.content.text and answer.usage is not None
    assert isinstance(conv.history()[1].content.blocks[0], ThinkingBlock)
    await conv.aclose()


async def test_a_slow_consumer_holds_the_reading_back_and_still_gets_every_event(store, config, loopback, monkeypatch):
    monkeypatch.setattr("tractui.conversation.conversation.AHEAD", 8)
    loopback.add(word_stream([f"w{i} " for i in range(200)], seed=None))  # all in one write: only the reader can wait
    conv = Conversation(store, Settings(), config)
    provider = conv.provider
    stream = provider.stream
    produced = 0

    async def counted(*args, **kwargs):
        nonlocal produced
        async for event in stream(*args, **kwargs):
            produced += 1
            yield event

    monkeypatch.setattr(provider, "stream", counted)
    consumed = 0
    text = ""
    async for event in conv.send("go"):
        consumed += 1
        text += event.text if isinstance(event, TextDelta) else ""
        if consumed == 5:
            await asyncio.sleep(0.2)  # a display busy drawing: the reader stops AHEAD events ahead
            assert produced <= consumed + 8 + 1
    assert text == "".join(f"w{i} " for i in range(200))
    assert conv.history()[-1].status == "complete"
    await conv.aclose()


async def test_two_windows_on_one_session_each_go_on_along_their_own_branch(tmp_path, loopback):
    from tractui.core.events import Notice

    loopback.add(sse(chat_stream([], ["answer one"])))
    loopback.add(sse(chat_stream([], ["answer from A"])))
    loopback.add(sse(chat_stream([], ["answer from B"])))
    config = ProviderConfig("openai", "loop-model", base_url=f"{loopback.url}/v1", api_key_env="")
    window_a = Conversation(HistoryStore(tmp_path / "h.db"), Settings(), config)  # two processes: two stores
    [e async for e in window_a.send("shared question")]
    window_b = Conversation(HistoryStore(tmp_path / "h.db"), Settings(), config, session_id=window_a.session_id)
    [e async for e in window_a.send("only in A")]
    events = [e async for e in window_b.send("only in B")]
    assert any(isinstance(e, Notice) and "another tractui has written" in e.message for e in events)
    sent_by_b = [m["content"] for m in loopback.requests[-1].json["messages"]]
    assert "only in A" not in sent_by_b and "answer from A" not in sent_by_b  # never mixed into B's context
    assert [c.content.text for c in window_b.history() if c.kind == "user"] == ["shared question", "only in B"]
    assert [c.content.text for c in window_a.history() if c.kind == "user"] == ["shared question", "only in A"]
    await window_a.aclose()
    await window_b.aclose()


@pytest.mark.parametrize("include", ["false", "true"])
async def test_a_prepared_request_is_what_a_process_that_kept_nothing_sends(tmp_path, config, loopback, include):
    """``prepare`` and the store's kept commits are a head start only: the next request's
    messages are the ones a fresh process, reading the file anew, sends for the same turn."""
    path = tmp_path / "history.db"
    loopback.add(openai_chat_reply("A1", reasoning="T1"), openai_chat_reply("A2", reasoning="T2"))
    settings = Settings()
    settings.set("reasoning.includeInContext", include)
    with HistoryStore(path) as first:
        conv = Conversation(first, settings, config)
        await collect(conv.send("q1"))
        await collect(conv.send("q2"))
        sid = conv.session_id
        await conv.aclose()
    loopback.add(openai_chat_reply("A3"), openai_chat_reply("A3 again"))
    with HistoryStore(path) as kept:
        prepared = Conversation(kept, settings, config, session_id=sid)
        prepared.gauge()
        await prepared.prepare()
        client = prepared.provider._client
        assert client is not None  # made ahead of the request
        await collect(prepared.send("q3"))
        assert prepared.provider.client is client  # the warmed client carried the request
        await prepared.aclose()
    with HistoryStore(path) as fresh:
        plain = Conversation(fresh, settings, config, session_id=sid)
        await collect(plain.retry())  # the same turn again, from a store that kept nothing
        await plain.aclose()
    sent, again = loopback.requests[-2].json, loopback.requests[-1].json
    assert sent["messages"] == again["messages"]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert ("reasoning_content" in sent["messages"][3]) == (include == "true")


def test_counting_a_long_history_in_steps_reads_the_gauge_the_whole_count_reads(store, config):
    """``counting`` pauses every few messages (the app handles keys then); the gauge after it
    is the one a conversation that counted everything at once reads."""
    sid = store.create_session()
    for i in range(60):
        store.append(sid, "user", Content.human(f"question {i} " * 20))
        store.append(sid, "reasoning", Content(speaker="ai", blocks=[ThinkingBlock(thought=f"thought {i} " * 30)]))
        store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=f"answer {i} " * 40)]))
    stepped = Conversation(store, Settings(), config, session_id=sid)
    steps = sum(1 for _ in stepped.counting(step=25))
    assert steps == 4  # 120 messages (each reply merged into one): paused after 25, 50, 75 and 100
    counted: list[Content] = []
    split = stepped.counter.split
    stepped.counter.split = lambda content: counted.append(content) or split(content)  # type: ignore[method-assign]
    whole = Conversation(store, Settings(), config, session_id=sid)
    assert stepped.gauge() == whole.gauge()
    assert len(counted) == 20  # only what the steps left: the last 20 messages


def test_a_switch_to_a_model_of_the_same_encoding_keeps_what_was_counted(store, config):
    """A resumed session follows the profile its last reply came from: a new counter for the
    same encoding counted the whole session again, in one call, on the app's event loop."""
    sid = store.create_session()
    for i in range(30):
        store.append(sid, "user", Content.human(f"question {i} " * 20))
        store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=f"answer {i} " * 40)]))
    conversation = Conversation(store, Settings(), config, session_id=sid)
    before = conversation.gauge()
    counter = conversation.counter
    same = ProviderConfig(provider="openai", model="gpt-4o", base_url=config.base_url, api_key_env=config.api_key_env)
    conversation.switch_profile(same, Settings(), "other")
    assert conversation.counter is counter and conversation.gauge().effective == before.effective
    other = ProviderConfig(provider="openai", model="gpt-4", base_url=config.base_url, api_key_env=config.api_key_env)
    conversation.switch_profile(other, Settings(), "older")
    assert conversation.counter is not counter and conversation.counter.encoding_name == "cl100k_base"


def test_a_call_whose_reply_answered_nothing_is_no_basis_for_the_gauge(store, config):
    """Esc while Claude thought: its usage came at the start, but the merge leaves the reply out,
    so the call's count (its reply included) is more than the history holds; the call before stands."""

    def basis(count: int) -> dict:
        return {"basis": {"message_count": count, "estimated_input": 50, "pure_input": 50, "policy": "all"}}

    sid = store.create_session()
    store.append(sid, "user", Content(speaker="human", blocks=[TextBlock(text="q1")]))
    done = Usage(input_tokens=50, output_tokens=5)
    store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text="a1")]), usage=done, metadata=basis(2))
    store.append(sid, "user", Content(speaker="human", blocks=[TextBlock(text="q2")]))
    thought = Content(speaker="ai", blocks=[ThinkingBlock(thought="hmm")])
    store.append(sid, "reasoning", thought, status="interrupted")
    cut = Usage(input_tokens=70, output_tokens=0)
    store.append(sid, "assistant", Content(speaker="ai", blocks=[]), status="interrupted", usage=cut, metadata=basis(4))
    conv = Conversation(store, Settings(), config)
    conv.open_session(sid)
    reading = conv.gauge()
    assert reading.warnings == ()
    assert reading.basis is not None and reading.basis.message_count == 2
