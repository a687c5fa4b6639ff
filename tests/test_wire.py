"""The kept wire forms (``WireMemo``) send exactly what building every message afresh sends.

A session grows in a real SQLite file, one commit at a time, with every shape
the builders handle (each provider's thinking and signatures, tool calls and
results, ``<think>`` tags, system messages, two user messages in a row, a tool
loop in progress) while the settings that change a message's form are switched
between requests. After each commit, the body one long-lived provider sends
(forms and JSON kept from its earlier requests) must be byte for byte the body
httpx writes for a fresh provider's plain dict.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from httpx._content import encode_json
from loopback import LoopbackServer, openai_chat_reply

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.settings import Settings
from tractui.providers import ProviderConfig, make_provider
from tractui.providers.transport import Provider
from tractui.store.compile import compile_history, summary_metadata
from tractui.store.history import HistoryStore

PROVIDERS = {
    "openai": "deepseek-v4",
    "anthropic": "claude-opus-4-6",
    "gemini": "gemini-3-pro-preview",
    "openai-responses": "gpt-5.2",
}

SETTINGS = [  # each changes how some earlier message is sent
    {},
    {"reasoning.includeInContext": True},
    {"reasoning.includeInContext": True, "reasoning.format": "tags"},
    {"reasoning.includeInContext": True, "reasoning.format": "native"},
    {"reasoning.includeInContext": True, "reasoning.stripFromContext": "allButLast"},
    {"reasoning.includeInContext": True, "reasoning.fieldName": "reasoning"},
    {"reasoning.enabled": False},
    {"system-prompt-as": "developer"},  # Responses: the history's system messages as developer items
    {"system-prompt-as": "developer", "system-prompt": "be exact", "reasoning.includeInContext": True},
]


def ai(provider: str, model: str, *blocks: object) -> Content:
    return Content(speaker="ai", blocks=list(blocks), metadata={"provider": provider, "model": model})


def turns(provider: str, model: str) -> list[tuple[str, Content]]:
    """(kind, content) of a session with every shape, in the order they are appended."""
    own = ai
    return [
        ("system", Content.system_prompt("be brief — ünïcode ✓")),
        ("user", Content.human('q1 with "quotes", \\ and \u2028')),
        ("reasoning", own(provider, model, ThinkingBlock(thought="t1", signature="sig-1"))),
        ("assistant", own(provider, model, TextBlock(text="a1 🙂"))),
        ("user", Content.human("q2")),
        (
            "reasoning",
            own(
                provider,
                model,
                ThinkingBlock(
                    thought="",
                    is_hidden=True,
                    signature="sig-h",
                    provider_metadata={"data": "opaque", "encrypted_content": "enc", "item_id": "rs_1"},
                ),
            ),
        ),
        (
            "assistant",
            own(
                provider,
                model,
                ThinkingBlock(thought="in tags", source_field="think_tags"),
                TextBlock(text="a2"),
                ToolCallBlock(
                    id="call_1",
                    name="read",
                    arguments='{"path": "a"}',
                    provider_metadata={"thought_signature": "ts", "gemini_id": "g1", "item_id": "fc_1"},
                ),
            ),
        ),
        ("tool", Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="call_1", content="result ✓")])),
        ("assistant", own("other", "elsewhere", ThinkingBlock(thought="foreign"), TextBlock(text="a3"))),
        ("user", Content.human("q3")),
        ("assistant", own(provider, model)),  # an error-only reply: nothing to send
        ("user", Content.human("q3 again, after the failed reply")),
        ("reasoning", own(provider, model, ThinkingBlock(thought="t4", source_field="reasoning"))),
        ("assistant", own(provider, model, ToolCallBlock(id="call_2", name="run", arguments=""))),
        (
            "tool",
            Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="call_2", content="boom", is_error=True)]),
        ),
        ("reasoning", own(provider, model, ThinkingBlock(thought="t5", signature="sig-5"))),
        ("assistant", own(provider, model, ToolCallBlock(id="call_3", name="run", arguments="{}"))),
        ("tool", Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="call_3", content="ok")])),
        ("assistant", own(provider, model, TextBlock(text="a5"))),
        ("user", Content.human("q6")),
        ("assistant", own(provider, model, ToolCallBlock(id="call_6", name="read", arguments="{}"))),  # no thinking
        ("tool", Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="call_6", content="six")])),
        ("assistant", own(provider, model, TextBlock(text="a6"))),
        ("user", Content.human("q7")),
    ]


def plain_body(provider_name: str, model: str, messages: list[Content], settings: Settings) -> bytes:
    """What the request carried before any form was kept: a fresh provider's dict, encoded by httpx."""
    fresh = make_provider(ProviderConfig(provider_name, model, api_key_env=""))
    _, stream = encode_json(fresh.build_request(messages, settings))
    return b"".join(stream)


def kept_body(provider: Provider, messages: list[Content], settings: Settings) -> bytes:
    return provider.wire.encode(provider.build_request(messages, settings), provider.history_key)


@pytest.mark.parametrize("provider_name", list(PROVIDERS))
def test_kept_forms_send_what_fresh_ones_send(tmp_path, provider_name):
    model = PROVIDERS[provider_name]
    provider = make_provider(ProviderConfig(provider_name, model, api_key_env=""))
    compared = 0

    def compare(chain: list, values: dict) -> None:
        nonlocal compared
        settings = Settings(values)
        messages = compile_history(chain, settings)
        assert kept_body(provider, messages, settings) == plain_body(provider_name, model, messages, settings)
        compared += 1

    with HistoryStore(tmp_path / "history.db") as store:
        sid = store.create_session()
        appended = [store.append(sid, kind, content) for kind, content in turns(provider_name, model)]  # type: ignore[arg-type]
        # summaries standing in for the start: earlier forms drop out, the rest are found again;
        # the second also takes the call the first tool result answers (Gemini names it by its call)
        called = next(c for c in appended if c.content.tool_calls)
        for last in (appended[4], called):
            summary = Content(speaker="human", blocks=[TextBlock(text=f"summary up to {last.id}")])
            appended.append(store.append(sid, "summary", summary, metadata=summary_metadata(appended[0].id, last.id)))
            appended.append(store.append(sid, "user", Content.human("after the summary")))
        chains = [store.chain(sid, head=c.id) for c in appended[1:]]  # the session as it grew
        for values in SETTINGS:  # each setting over the whole growth: a loop step becomes an earlier turn
            for chain in chains:
                compare(chain, values)
        for chain in chains:  # every setting after every other, the same messages
            for values in SETTINGS:
                compare(chain, values)
    assert compared == 2 * len(chains) * len(SETTINGS)


def test_the_server_gets_the_plain_json_with_its_type(tmp_path):
    """Over HTTP: the bytes a loopback server reads are httpx's encoding of the plain body, sent
    as ``application/json``, for a second request whose earlier messages were kept."""

    async def run() -> None:
        async with LoopbackServer() as server:
            server.add(openai_chat_reply(text="one"), openai_chat_reply(text="two"))
            config = ProviderConfig("openai", "m", base_url=f"{server.url}/v1", api_key_env="")
            provider = make_provider(config)
            settings = Settings({"reasoning.includeInContext": True})
            history = [Content.human("q1"), ai("openai", "m", ThinkingBlock(thought="t"), TextBlock(text="a"))]
            for question in ("q2", "q3"):
                history.append(Content.human(question))
                async for _ in provider.stream(list(history), settings):
                    pass
                history.append(ai("openai", "m", TextBlock(text="answer")))
            await provider.aclose()
            assert len(server.requests) == 2
            for request, sent in zip(server.requests, (history[:3], history[:5]), strict=True):
                assert request.headers["content-type"] == "application/json"
                assert request.body == plain_body("openai", "m", sent, settings)

    asyncio.run(run())


def test_a_form_made_under_other_settings_is_not_sent(tmp_path):
    """The same message under a different reasoning field name gets a form of its own."""
    provider = make_provider(ProviderConfig("openai", "m", api_key_env=""))
    answer = ai("openai", "m", ThinkingBlock(thought="why"), TextBlock(text="a"))
    messages = [Content.human("q"), answer, Content.human("q2")]
    for name in ("reasoning_content", "reasoning", "reasoning_content"):
        settings = Settings({"reasoning.includeInContext": True, "reasoning.fieldName": name})
        sent = provider.build_request(messages, settings)["messages"][1]
        assert sent == {"role": "assistant", "content": "a", name: "why"}


def raw_messages(provider: str, model: str) -> list[Content]:
    """Messages as a caller of ``build_request`` may pass them, not only as the compile step makes
    them: a call whose result comes in a later request, and a result that answers an old call."""
    own = ai
    return [
        Content.system_prompt("from the history"),
        Content.human("q1"),
        own(provider, model, ThinkingBlock(thought="why A", signature="sa"), ToolCallBlock(id="A", name="f")),
        Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="A", content="a")]),
        own(provider, model, TextBlock(text="done")),
        Content.human("q2"),
        own(provider, model, ThinkingBlock(thought="why B", signature="sb"), ToolCallBlock(id="B", name="g")),
        Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="B", content="b")]),
        own(provider, model, TextBlock(text="done again")),
        Content.human("q3"),
        Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="A", content="late")]),  # an old call's
        own(provider, model, TextBlock(text="late answer")),
        Content.system_prompt("said late"),
        Content.human("q4"),
    ]


@pytest.mark.parametrize("provider_name", list(PROVIDERS))
def test_a_fold_is_taken_up_only_where_the_messages_allow(provider_name):
    """Every prefix in turn, each setting over the whole growth: a call whose result arrives
    next (its message becomes the tool loop's, and the fold saved after it cannot be taken
    up), a late result naming an old call, system messages found on the way."""
    model = PROVIDERS[provider_name]
    provider = make_provider(ProviderConfig(provider_name, model, api_key_env=""))
    messages = raw_messages(provider_name, model)
    for values in SETTINGS:
        settings = Settings(values)
        for end in range(1, len(messages) + 1):
            sent = messages[:end]
            assert kept_body(provider, sent, settings) == plain_body(provider_name, model, sent, settings)


async def test_a_set_while_prepare_builds_does_not_reach_the_forms_it_keeps(tmp_path, loopback, monkeypatch):
    """``/set`` lands while ``Conversation.prepare``'s thread is making the forms; the user sets it
    back and presses Enter: the request is still what a plain build sends (the thread worked on a
    copy of the settings, so no form was made under one setting and kept under another)."""
    from strict_servers import Step, StrictAnthropic

    from tractui.conversation.conversation import Conversation
    from tractui.providers import anthropic

    settings = Settings({"reasoning.includeInContext": True, "reasoning.format": "native", "context-limit": 10**7})
    config = ProviderConfig("anthropic", "claude-opus-4-7", base_url=loopback.url, api_key_env="")
    loopback.default = StrictAnthropic([Step(f"thinking {i}", text=f"answer {i}") for i in range(3)])
    with HistoryStore(tmp_path / "history.db") as store:
        conversation = Conversation(store, settings, config)
        [_ async for _ in conversation.send("q1")]
        in_thread, go_on = threading.Event(), threading.Event()
        original = anthropic._assistant_turn

        def held(*args, **kwargs):  # the thread stops here until the /set has landed
            if threading.current_thread() is not threading.main_thread() and not in_thread.is_set():
                in_thread.set()
                go_on.wait(30)
            return original(*args, **kwargs)

        monkeypatch.setattr(anthropic, "_assistant_turn", held)
        preparing = asyncio.create_task(conversation.prepare())
        assert await asyncio.to_thread(in_thread.wait, 30)
        settings.set("reasoning.includeInContext", False)  # typed while the thread builds
        go_on.set()
        await preparing
        monkeypatch.setattr(anthropic, "_assistant_turn", original)
        settings.set("reasoning.includeInContext", True)  # set back, then Enter
        [_ async for _ in conversation.send("q2")]
        sent = compile_history(store.chain(conversation.session_id or ""), settings)[:-1]  # the reply came after
        await conversation.aclose()
    body = loopback.requests[-1].body
    assert body == plain_body("anthropic", "claude-opus-4-7", sent, settings)
    assert b'"type":"thinking"' in body  # the first answer's signed thinking went back, natively


def test_a_replaced_provider_keeps_nothing_for_a_next_request(tmp_path):
    """A profile switch retires the provider: the forms and JSON it kept for its next request go."""
    from tractui.conversation.conversation import Conversation

    with HistoryStore(tmp_path / "history.db") as store:
        sid = store.create_session()
        for kind, content in turns("openai", "m")[:5]:
            store.append(sid, kind, content)  # type: ignore[arg-type]
        conversation = Conversation(store, Settings(), ProviderConfig("openai", "m", api_key_env=""), session_id=sid)
        old = conversation.provider
        messages = compile_history(store.chain(sid), Settings())
        settings = Settings()
        old.ready(messages, settings)
        fold = (settings.view, settings.view.system_prompt)  # what the OpenAI builder keeps its fold under
        assert old.wire.resume(messages, fold, len(messages)) is not None
        conversation.switch_profile(ProviderConfig("anthropic", "m", api_key_env=""), Settings(), None)
        assert conversation.provider is not old
        assert old.wire.resume(messages, fold, len(messages)) is None
