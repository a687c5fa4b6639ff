"""Fuzzing each provider's stream through the real provider, loopback HTTP and the conversation's store.

Each example takes the protocol's small valid stream (tests/protocol_streams.py),
puts a random JSON value in one field of one chunk (or removes the field),
and random bytes between events, then sends a message. Whatever the server
sent: no exception escapes, the reply ends with ``Done`` or one ``StreamError``,
every event the chunks before the changed one make is delivered, in full and
in order, and the reply stored in the history equals what was delivered.

CI runs a bounded number of examples per provider; ``TRACTUI_FUZZ_EXAMPLES=2000``
runs more, for a longer hunt.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import LoopbackServer, sse
from protocol_streams import KEY, KEY_ENV, VALID, Chunk, config, encode

from tractui.conversation.conversation import Conversation
from tractui.core.assemble import MessageAssembler
from tractui.core.events import (
    Done,
    Notice,
    RetryWait,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallState,
    TurnEvent,
)
from tractui.core.settings import Settings
from tractui.providers import make_provider
from tractui.store.history import HistoryStore

SETTINGS = Settings({"retries": 0, "tools.maxSteps": 1})
EXAMPLES = int(os.environ.get("TRACTUI_FUZZ_EXAMPLES", "40"))

Path_ = tuple[str | int, ...]

# text holding lone surrogates (json.dumps writes them as "\\ud800" escapes) and a pair that makes one character
surrogate_text = st.lists(
    st.sampled_from(["a", "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00"]), max_size=6
).map("".join)
json_values = st.recursive(
    st.none()
    | surrogate_text
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["<think>", "</think>", "", "text", "thinking", "reasoning.encrypted", "tool_use"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | surrogate_text, inner, max_size=4)
    ),
    max_leaves=8,
)
REMOVE = object()  # the field is left out
# random bytes between events, on lines of their own; never a "data" line (that would be an event)
junk = st.binary(max_size=24).filter(lambda b: b"data" not in b)


def paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every field and list item inside ``value``, at any depth."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from paths(inner, (*prefix, index))


def changed(chunk: Any, path: Path_, value: Any) -> Any:
    out = copy.deepcopy(chunk)
    node = out
    for step in path[:-1]:
        node = node[step]
    if value is REMOVE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def parsed(name: str, chunks: list[Chunk]) -> list[StreamEvent]:
    """What the valid chunks make, fed straight to the provider's parser (no transport, no close)."""
    parser = make_provider(config(name, "http://unused")).new_parser(SETTINGS)
    return [e for event, chunk in chunks for e in parser.feed(event or "", json.dumps(chunk))]


def first_reply(events: list[TurnEvent]) -> list[StreamEvent]:
    """The provider's events of the first reply, up to and including its end."""
    out: list[StreamEvent] = []
    for event in events:
        if isinstance(event, (Notice, RetryWait, ToolCallState)):
            continue
        out.append(event)
        if isinstance(event, (Done, StreamError)):
            return out
    raise AssertionError(f"the reply never ended: {out[-3:]}")


async def converse(name: str, body: bytes, folder: Path) -> tuple[list[StreamEvent], list[Any]]:
    async with LoopbackServer() as server:
        server.add(sse(body, seed=None))
        with HistoryStore(folder / "history.db") as store:
            conv = Conversation(store, SETTINGS, config(name, server.url))
            try:
                events = [e async for e in conv.send("hi")]
            finally:
                await conv.aclose()
            chain = store.chain(conv.session_id or "")
    end = next(i for i, c in enumerate(chain) if c.kind == "assistant")
    reply = [b for commit in chain[1 : end + 1] for b in commit.content.blocks]  # its reasoning and answer commits
    return first_reply(events), reply


@pytest.mark.parametrize("name", list(VALID))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_value_in_any_field_keeps_what_arrived(
    name: str, data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    valid = VALID[name]
    index = data.draw(st.integers(0, len(valid) - 1), label="chunk")
    event, chunk = valid[index]
    path = data.draw(st.sampled_from(list(paths(chunk))), label="field")
    value = data.draw(st.just(REMOVE) | json_values, label="value")
    chunks = [*valid[:index], (event, changed(chunk, path, value)), *valid[index + 1 :]]
    between = data.draw(st.lists(junk, max_size=len(chunks)), label="junk")

    with tempfile.TemporaryDirectory() as folder:
        delivered, stored = asyncio.run(converse(name, encode(name, chunks, between), Path(folder)))

    before = parsed(name, valid[:index])
    assert delivered[: len(before)] == before
    assert isinstance(delivered[-1], (Done, StreamError))
    if isinstance(delivered[-1], StreamError):
        assert "\n" not in delivered[-1].message
    for e in delivered:
        if isinstance(e, (TextDelta, ThinkingDelta)):
            assert type(e.text) is str
        elif isinstance(e, ToolCallDelta):
            assert type(e.index) is int and type(e.arguments) is str
    assembler = MessageAssembler()
    for e in delivered:
        assembler.feed(e)
    assert stored == assembler.content().blocks
