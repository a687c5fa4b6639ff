"""The SSE decoder: chunking never changes the events, whatever the framing."""

from __future__ import annotations

import random

import pytest

from tractui.providers.sse import SSEParser

STREAM = (
    ": OPENROUTER PROCESSING\n\n"
    'data: {"a": 1}\n\n'
    'event: error\ndata: {"error": 1}\n\n'
    "data: line one\ndata: line two\n\n\n"
    "id: 7\nretry: 10\n\n"
    "data\n\n"
    "data:no-space\n\n"
    "data: [DONE]\n\n"
    "data: unterminated"
)
EXPECTED = [
    ("", '{"a": 1}'),
    ("error", '{"error": 1}'),
    ("", "line one\nline two"),
    ("", ""),
    ("", "no-space"),
    ("", "[DONE]"),
]


def decode(text: str, seed: int | None) -> list[tuple[str, str]]:
    parser = SSEParser()
    if seed is None:
        return parser.feed(text) + parser.close()
    rng = random.Random(seed)
    out, pos = [], 0
    while pos < len(text):
        step = rng.randint(1, 7)
        out += parser.feed(text[pos : pos + step])
        pos += step
    return out + parser.close()


@pytest.mark.parametrize("seed", [None, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_events_are_the_same_for_any_chunking_and_line_ending(seed: int | None, newline: str) -> None:
    assert decode(STREAM.replace("\n", newline), seed) == EXPECTED


def test_crlf_split_between_chunks_is_one_line_break() -> None:
    parser = SSEParser()
    assert parser.feed("data: x\r") == []
    assert parser.feed("\n\r") == [("", "x")]  # a lone CR already ends the blank line
    assert parser.feed("\ndata: y\r\n\r\n") == [("", "y")]  # ...and the LF after it is not another
