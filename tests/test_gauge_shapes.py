"""The gauge and compaction on every provider shape, against a server that counts, reports and enforces.

Each test runs a real conversation against ``ModelServer`` (tests/model_server.py):
the server counts every prompt with the real tokenizer, reports usage as the
vendor does, refuses requests over its context limit and, in strict-template
mode, histories whose roles do not alternate.
"""

from __future__ import annotations

import pytest
from gauge_run import conversation, readings, run, settings_for
from model_server import ALTERNATE, ModelServer, words

from tractui.core.events import Notice, StreamError
from tractui.store.history import HistoryStore


@pytest.fixture
def store(tmp_path, monkeypatch) -> HistoryStore:
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    with HistoryStore(tmp_path / "data" / "history.db") as s:
        yield s


async def test_a_strict_template_accepts_every_request_after_compaction(store, loopback):
    server = loopback.default = ModelServer(strict_template=True)
    conv = conversation(store, loopback, settings_for(2000), "openai")
    stats = await run(conv, server, turns=24)
    assert stats.compactions >= 1
    assert ALTERNATE not in server.refusals
    assert stats.answered == stats.turns


async def test_a_strict_template_accepts_the_request_after_a_failed_reply(store, loopback):
    server = loopback.default = ModelServer(strict_template=True, fail={2})
    conv = conversation(store, loopback, settings_for(8000), "openai")
    stats = await run(conv, server, turns=5)
    assert server.refusals == []
    assert stats.answered == 4


@pytest.mark.parametrize(("include", "enabled"), [(False, True), (True, True), (False, False), (True, False)])
async def test_a_tool_call_that_was_not_offered_never_leaves_the_history_invalid(store, loopback, include, enabled):
    """A server thinking by default (``reasoning.enabled`` false sends no switch on ``mode auto``)
    calls a tool nobody offered: the call is answered as an error and its reasoning goes back with it."""
    server = loopback.default = ModelServer(
        strict_template=True, strict_reasoning=True, thinking_words=20, unoffered_call={2}
    )
    settings = settings_for(8000, **{"reasoning.includeInContext": include, "reasoning.enabled": enabled})
    conv = conversation(store, loopback, settings, "openai")
    stats = await run(conv, server, turns=4)
    assert server.refusals == []
    assert stats.answered == 4
    results = [c for c in conv.history() if c.kind == "tool"]
    assert len(results) == 1 and results[0].content.blocks[0].is_error


async def test_a_summariser_that_thinks_by_default_never_leaves_the_conversation_stuck(store, loopback):
    server = loopback.default = ModelServer(summary_thinks=400)
    conv = conversation(store, loopback, settings_for(2000, **{"max-tokens": 500}), "openai")
    stats = await run(conv, server, turns=30)
    assert stats.compactions >= 1
    assert stats.blocked == 0 and server.refusals == []
    assert stats.answered == stats.turns


async def test_thinking_is_switched_off_for_the_summary_call_where_the_protocol_has_a_switch(store, loopback):
    server = loopback.default = ModelServer(summary_thinks=10_000)
    settings = settings_for(2000, **{"max-tokens": 500, "reasoning.mode": "template"})
    conv = conversation(store, loopback, settings, "openai")
    stats = await run(conv, server, turns=20)
    assert stats.compactions >= 1 and stats.answered == stats.turns
    assert all(body["chat_template_kwargs"] == {"enable_thinking": False} for body in server.summaries)


async def test_when_no_summary_can_be_written_the_oldest_turns_are_left_out_with_a_notice(store, loopback):
    server = loopback.default = ModelServer(summary_thinks=100_000)  # thinks through any budget
    conv = conversation(store, loopback, settings_for(2000, **{"max-tokens": 500}), "openai")
    stats = await run(conv, server, turns=20)
    assert stats.blocked == 0 and server.refusals == []
    assert stats.answered == stats.turns
    assert any("are left out of what is sent" in n for n in stats.notices)
    first = server.chat[-1]["messages"][0]["content"]
    assert first.startswith("[") and "were left out: no summary of them could be written" in first


SHAPES = {
    "openai field": ("openai", {}, {"reasoning.includeInContext": True}),
    "openai native": ("openai", {}, {"reasoning.includeInContext": True, "reasoning.format": "native"}),
    "openai tags": ("openai", {}, {"reasoning.includeInContext": True, "reasoning.format": "tags"}),
    "openai no usage": ("openai", {"usage": False}, {"reasoning.includeInContext": True}),
    "anthropic field": ("anthropic", {}, {"reasoning.includeInContext": True}),
    "anthropic native": ("anthropic", {}, {"reasoning.includeInContext": True, "reasoning.format": "native"}),
    "anthropic summarized": ("anthropic", {"display": "summarized"}, {}),
    "anthropic omitted": ("anthropic", {"display": "omitted"}, {}),
    "anthropic summarized sent": (
        "anthropic",
        {"display": "summarized"},
        {"reasoning.includeInContext": True, "reasoning.format": "native"},
    ),
    "anthropic preserved": (  # the model is the shape's: Claude Sonnet 5.5
        "anthropic",
        {"display": "summarized", "preserved": True},
        {"reasoning.includeInContext": True, "reasoning.format": "native"},
    ),
    "gemini field": ("gemini", {"display": "summarized"}, {"reasoning.includeInContext": True}),
    "gemini native": (
        "gemini",
        {"display": "summarized"},
        {"reasoning.includeInContext": True, "reasoning.format": "native"},
    ),
    "gemini not sent": ("gemini", {"display": "summarized"}, {}),
    "gemini no usage": ("gemini", {"usage": False}, {"reasoning.includeInContext": True}),
    "responses field": ("openai-responses", {"display": "summarized"}, {"reasoning.includeInContext": True}),
    "responses native": (
        "openai-responses",
        {"display": "summarized"},
        {"reasoning.includeInContext": True, "reasoning.format": "native"},
    ),
    "responses not sent": ("openai-responses", {"display": "summarized"}, {}),
    "responses omitted": (
        "openai-responses",
        {"display": "omitted"},
        {"reasoning.includeInContext": True, "reasoning.format": "native"},
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_the_gauge_counts_what_each_provider_shape_sends(store, loopback, shape):
    protocol, server_options, values = SHAPES[shape]
    server = loopback.default = ModelServer(protocol=protocol, limit=16000, thinking_words=150, **server_options)
    model = "claude-sonnet-5-5" if server_options.get("preserved") else None
    conv = conversation(store, loopback, settings_for(16000, **values), protocol, model)
    stats = await run(conv, server, turns=10)
    assert stats.answered == stats.turns and stats.compactions == 0
    assert stats.median_error <= 0.02, [round(e, 4) for e in stats.errors]


async def test_the_last_estimate_error_is_the_reading_before_sending_minus_the_reported_input(store, loopback):
    """A server with a hidden prompt: the tokenizer alone is far off, the reading the user saw is not."""
    server = loopback.default = ModelServer(limit=16000, hidden_prompt=300, thinking_words=50)
    conv = conversation(store, loopback, settings_for(16000), "openai")
    await run(conv, server, turns=8)
    shown = readings(conv)
    error = conv.gauge().last_error
    assert error is not None
    assert error[0] == shown[-1] - server.prompts[-1]
    assert abs(error[1]) <= 0.01 and error[1] == pytest.approx(error[0] / server.prompts[-1])


async def test_after_a_compaction_the_estimate_is_calibrated_by_the_last_actual_input(store, loopback):
    server = loopback.default = ModelServer(hidden_prompt=300)
    conv = conversation(store, loopback, settings_for(2000), "openai")
    stats = await run(conv, server, turns=24)
    assert stats.compactions >= 1 and stats.answered == stats.turns
    after_first = [abs(e) for e in stats.errors[1:]]  # the very first request has nothing to calibrate with
    assert max(after_first) <= 0.02, [round(e, 3) for e in stats.errors]


@pytest.mark.parametrize(
    ("server_options", "values"),
    [
        ({"thinking_words": 60}, {"reasoning.includeInContext": True}),
        ({"hidden_prompt": 300}, {}),
        ({"hidden_prompt": 500, "thinking_words": 60}, {"reasoning.includeInContext": True}),
    ],
    ids=["thinking sent back", "hidden server prompt", "both"],
)
async def test_compactions_are_spaced_at_a_small_window(store, loopback, server_options, values):
    server = loopback.default = ModelServer(**server_options)
    conv = conversation(store, loopback, settings_for(2000, **values), "openai")
    stats = await run(conv, server, turns=40)
    assert stats.answered == stats.turns and stats.blocked == 0 and server.refusals == []
    # the keep plan leaves room for what the server counts beyond the tokenizer, so a compaction lasts
    assert stats.most_in_a_row == 1 and stats.compactions <= stats.turns // 5, stats.compactions


@pytest.mark.parametrize("protocol", ["openai-responses", "anthropic", "gemini"])
async def test_a_tool_loop_counts_the_thinking_its_steps_send_back(store, loopback, protocol):
    """Request 3 continues a tool loop: the call's thinking goes back natively (Responses: the
    encrypted reasoning, which costs what was billed for it, not the summary shown)."""
    server = loopback.default = ModelServer(
        protocol=protocol, limit=16000, thinking_words=150, display="summarized", unoffered_call={2}
    )
    conv = conversation(store, loopback, settings_for(16000), protocol)
    stats = await run(conv, server, turns=4)
    assert stats.answered == 4 and server.refusals == []
    assert len(server.prompts) == 5
    # request 3 continues the loop, request 4 starts a new turn after it
    assert max(abs(e) for e in stats.errors[2:]) <= 0.02, [round(e, 4) for e in stats.errors]


async def test_the_gauge_follows_the_tools_switched_off_and_on_since_the_last_request(store, loopback, tmp_path):
    """The last call's reported input counted the tools it offered; the next request offers others
    (tools.enabled switched, a tool switched off in /tools): the reading follows at once, and the
    request after it is read as exactly as any other (no warning, no false estimate error)."""
    from tractui.config.mcp import McpConfig
    from tractui.tools.consent import ConsentPolicy
    from tractui.tools.setup import demo_server
    from tractui.tools.toolbox import Toolbox

    server = loopback.default = ModelServer(limit=8000)
    conv = conversation(store, loopback, settings_for(8000), "openai")
    box = conv.tools = Toolbox(McpConfig(servers={"demo": demo_server()}), log_dir=tmp_path, consent=ConsentPolicy())
    box.start()

    async def send(text: str) -> int:
        """The input the server counted for the request, minus the gauge's reading before it."""
        assert [e async for e in conv.send(text) if isinstance(e, StreamError)] == []
        reading = conv.gauge()
        assert reading.last_error is not None and not reading.warnings, reading.warnings
        return reading.last_error[0]

    try:
        assert await box.settled(60)
        tools = conv.tool_tokens(conv.next_tools())
        assert tools > 200
        assert abs(await send("hello")) <= 5 and "tools" in server.chat[-1]
        on = conv.gauge()
        conv.settings.set("tools.enabled", "false")
        off = conv.gauge()
        assert (off.effective, off.breakdown.tools, off.warnings) == (on.effective - tools, 0, ())
        assert abs(await send("and without tools?")) <= 5 and "tools" not in server.chat[-1]
        before = conv.gauge()
        conv.settings.set("tools.enabled", "true")
        after = conv.gauge()
        assert (after.effective, after.breakdown.tools, after.warnings) == (before.effective + tools, tools, ())
        box.switched_off.add(("demo", "read_file"))
        fewer = conv.tool_tokens(conv.next_tools())
        assert 0 < fewer < tools and conv.gauge().effective == after.effective - (tools - fewer)
        assert abs(await send("with three tools")) <= 5 and len(server.chat[-1]["tools"]) == 3
    finally:
        await box.aclose()


async def test_the_system_prompt_as_a_developer_message_compacts_and_reads_as_instructions_do(store, loopback):
    """The gpt-6 profiles send the system prompt as a developer message first in the input: the
    summariser's request is still one the server knows for a summary, and every reading's error is
    the one it is with the prompt as top-level instructions."""
    errors = {}
    for placement in ("instructions", "developer"):
        server = loopback.default = ModelServer(protocol="openai-responses")
        values = {"system-prompt": "Answer as the release checker.", "system-prompt-as": placement}
        conv = conversation(store, loopback, settings_for(2000, **values), "openai-responses")
        stats = await run(conv, server, turns=24)
        await conv.aclose()
        assert stats.compactions >= 1 and stats.answered == stats.turns and server.refusals == []
        assert len(server.summaries) >= stats.compactions
        sent = loopback.requests[-1].json
        assert ("instructions" in sent) == (placement == "instructions")
        errors[placement] = stats.errors
    assert errors["developer"] == errors["instructions"]


async def test_after_a_compaction_a_server_that_over_counts_in_proportion_leaves_no_phantom(store, loopback):
    """A server counting 30% more than the tokenizer: a long history's gap (hundreds of tokens) is not carried
    over to the short request a compaction leaves, so the message is sent, once, and read close to its count."""
    server = loopback.default = ModelServer(limit=64000, over_count=1.3)
    conv = conversation(store, loopback, settings_for(64000), "openai")
    await run(conv, server, turns=30)
    conv.settings = settings_for(1000)  # the history's gap alone (some 770 tokens) would fill it
    server.limit = 1000
    stats = await run(conv, server, turns=2, first=30)
    assert stats.blocked == 0 and stats.answered == 2 and server.refusals == [], (stats, server.refusals)
    assert stats.compactions == 1
    assert abs(stats.errors[-2]) <= 0.1, [round(e, 3) for e in stats.errors[-3:]]


async def test_a_refusal_by_a_gap_carried_over_a_compaction_never_repeats(store, loopback):
    """The calls before a compaction were counted 800 tokens beyond the tokenizer (a hidden prompt that
    has gone since, say another server): the estimate right after the compaction carries that gap over
    the limit, but the tokenizer's count fits, so the message is sent, with a notice, not refused at every send."""
    server = loopback.default = ModelServer(limit=64000, hidden_prompt=800)
    conv = conversation(store, loopback, settings_for(64000), "openai")
    await run(conv, server, turns=6)
    conv.settings = settings_for(1000)
    server.limit, server.hidden_prompt = 1000, 0
    stats = await run(conv, server, turns=2, first=6)
    assert stats.blocked == 0 and stats.answered == 2 and server.refusals == [], (stats, server.refusals)
    assert any(n.startswith("sending: the estimate") for n in stats.notices), stats.notices


async def test_the_compaction_notice_tells_the_message_being_sent_from_the_recent_turns_kept(store, loopback):
    """Before a request the message being sent is kept and has no reply yet: it is "your message", not a
    recent turn; ``/compact`` after a reply keeps answered turns only."""
    from tractui.conversation.compaction.preflight import compact_conversation
    from tractui.conversation.compaction.run import CompactionResult

    server = loopback.default = ModelServer(limit=64000)
    conv = conversation(store, loopback, settings_for(64000, **{"compaction.keepTurns": 2}), "openai")
    await run(conv, server, turns=12)
    conv.settings = settings_for(1000, **{"compaction.keepTurns": 1})
    server.limit = 1000
    stats = await run(conv, server, turns=1, first=12)
    assert any(n.endswith("summary; your message kept verbatim (compacted 1×)") for n in stats.notices), stats.notices
    conv.settings, server.limit = settings_for(64000, **{"compaction.keepTurns": 2}), 64000
    await run(conv, server, turns=3, first=13)
    results = [e async for e in compact_conversation(conv) if isinstance(e, CompactionResult)]
    assert results[0].ok and results[0].message.endswith("summary; 2 recent turns kept verbatim"), results


async def test_a_message_refused_for_the_tools_definitions_is_told_to_switch_them_off(store, loopback, tmp_path):
    """A window the tools' definitions fill: a three-word message is refused, and the advice names
    what would make room (switching the tools off), not the message; until 2026-11-28 it said
    "shorten the message" whatever took the room."""
    from tractui.config.mcp import McpConfig
    from tractui.tools.consent import ConsentPolicy
    from tractui.tools.setup import demo_server
    from tractui.tools.toolbox import Toolbox

    server = loopback.default = ModelServer(limit=8000)
    conv = conversation(store, loopback, settings_for(8000), "openai")
    box = conv.tools = Toolbox(McpConfig(servers={"demo": demo_server()}), log_dir=tmp_path, consent=ConsentPolicy())
    box.start()
    try:
        assert await box.settled(60)
        tools = conv.tool_tokens(conv.next_tools())
        conv.settings.set("context-limit", str(tools))
        errors = [e.message for e in [e async for e in conv.send("hello small window")] if isinstance(e, StreamError)]
        assert len(errors) == 1 and errors[0].startswith("not sent: your message alone needs"), errors
        assert f"/set tools.enabled false (the tools' definitions take {tools:,})" in errors[0]
        assert "shorten the message" not in errors[0] and server.chat == []
    finally:
        await box.aclose()


async def test_a_message_that_cannot_fit_alone_is_refused_before_any_compaction(store, loopback):
    """A paste bigger than the window: compacting the history cannot make room (the message is always kept),
    so nothing is summarised, at the first send or the next, and the advice is the one thing that helps."""
    server = loopback.default = ModelServer(limit=2000)
    conv = conversation(store, loopback, settings_for(2000), "openai")
    await run(conv, server, turns=8)
    paste = words(2500, 99)
    for _ in range(2):
        events = [e async for e in conv.send(paste)]
        errors = [e.message for e in events if isinstance(e, StreamError)]
        assert len(errors) == 1 and errors[0].startswith("not sent: your message alone needs"), errors
        assert errors[0].endswith("so compacting the history cannot make room; shorten the message"), errors
        assert not any(isinstance(e, Notice) for e in events)
    assert server.summaries == [] and len(server.chat) == 8


async def test_the_not_sent_advice_names_only_what_would_make_room(store, loopback):
    """A short message over the limit because of the history (automatic compaction off): shortening it or a
    lower max-tokens cannot cover the gap, /compact can."""
    server = loopback.default = ModelServer(limit=64000)
    conv = conversation(store, loopback, settings_for(64000), "openai")
    await run(conv, server, turns=30)
    conv.settings = settings_for(2000, **{"compaction.auto": False})
    events = [e async for e in conv.send("and now?")]
    errors = [e.message for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and errors[0].startswith("not sent: this request needs"), errors
    assert errors[0].endswith("context limit; /compact"), errors
    conv.settings = settings_for(4000, **{"compaction.auto": False, "max-tokens": 2000})
    errors = [e.message async for e in conv.retry() if isinstance(e, StreamError)]
    assert len(errors) == 1 and errors[0].endswith(" or lower or /compact"), errors
    assert "; /set max-tokens " in errors[0] and "shorten" not in errors[0], errors


async def test_after_a_compaction_the_carried_gap_is_its_own_part_and_the_parts_add_up(store, loopback):
    """A server with a hidden prompt: right after /compact the reading is an estimate carrying the gap the
    calls showed. "messages" is the tokenizer's count of the messages (until 2026-11-28 it held the gap too);
    the gap is a part of its own, and the parts still add up to the gauge's figure."""
    from tractui.conversation.compaction.preflight import compact_conversation
    from tractui.conversation.compaction.run import CompactionResult
    from tractui.core.tokens import TokenCounter
    from tractui.store.compile import merge_commits
    from tractui.ui.screens.context import context_report

    server = loopback.default = ModelServer(limit=64000, hidden_prompt=300)
    conv = conversation(store, loopback, settings_for(64000), "openai")
    await run(conv, server, turns=6)
    results = [e async for e in compact_conversation(conv) if isinstance(e, CompactionResult)]
    assert results[0].ok, results
    reading = conv.gauge()
    parts = reading.breakdown
    assert reading.estimated and parts.gap >= 280  # the hidden prompt, as the calls showed it
    assert parts.system + parts.tools + parts.messages + parts.thinking + parts.gap == reading.effective
    assert parts.messages == TokenCounter().totals(merge_commits(conv.history()))[0]  # the tokenizer's alone
    _, table, _ = context_report(reading, {})
    names = [str(cell) for cell in table.columns[0].cells]
    figures = dict(zip(names, (str(cell) for cell in table.columns[2].cells), strict=True))
    assert figures["count gap"] == str(parts.gap)
    width = max(len(name) for name in names)
    assert width <= len("output reserve")  # the bars keep their room (a long label cut them: until 2026-11-28)


@pytest.mark.parametrize("shape", ["anthropic preserved", "gemini native", "openai field"])
async def test_switching_earlier_thinking_off_takes_it_off_the_gauge_at_once(store, loopback, shape):
    """``/set reasoning.includeInContext false``: the provider, asked what the last call's thinking
    had cost under the new setting, answered nothing, so the gauge kept it (until 2026-11-28): the
    footer stayed, and the next call read over its estimate by all of it."""
    protocol, server_options, values = SHAPES[shape]
    server = loopback.default = ModelServer(protocol=protocol, limit=16000, thinking_words=150, **server_options)
    model = "claude-sonnet-5-5" if server_options.get("preserved") else None
    conv = conversation(store, loopback, settings_for(16000, **values), protocol, model)
    await run(conv, server, turns=4)
    before = conv.gauge()
    assert before.breakdown.thinking > 400
    conv.settings.set("reasoning.includeInContext", False)
    after = conv.gauge()
    assert after.breakdown.thinking == 0
    assert after.effective <= before.effective - before.breakdown.thinking * 9 // 10
    stats = await run(conv, server, turns=1, first=4)
    assert stats.answered == 1 and abs(stats.errors[-1]) <= 0.02, stats.errors
