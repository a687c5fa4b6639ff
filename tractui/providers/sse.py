"""Server-sent events from a byte stream, fast on the common shape.

Almost every event a model server sends is one ``data: {...}`` line followed
by a blank line. Those are cut out of the buffer in bulk with ``str.find``;
anything else (``event:`` names, multi-line data, comments, ``\\r\\n`` framing)
goes through a line-by-line decoder that follows the WHATWG spec. Decoding a whole network
read at once is what lets the provider pipeline keep pace with a bare
``httpx-sse`` loop (bench/stream.py).
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator

Event = tuple[str, str]  # (event name, data)


class SSEParser:
    """Incremental: ``feed(text)`` returns the complete events; the rest waits for more."""

    __slots__ = ("_buffer", "_cr")

    def __init__(self) -> None:
        self._buffer = ""
        self._cr = False  # a chunk ended in "\r": its "\n" may come next

    def feed(self, text: str) -> list[Event]:
        if self._cr and text.startswith("\n"):
            text = text[1:]
        self._cr = text.endswith("\r")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        buffer = self._buffer + text if self._buffer else text
        out: list[Event] = []
        start = 0
        find = buffer.find
        while True:
            end = find("\n\n", start)
            if end < 0:
                break
            block = buffer[start:end]
            start = end + 2
            if block.startswith("data: ") and "\n" not in block:
                out.append(("", block[6:]))
            elif block:
                self._slow(block, out)
        self._buffer = buffer[start:]
        return out

    def close(self) -> list[Event]:
        """A final event not followed by a blank line is discarded, as the SSE spec says."""
        self._buffer = ""
        return []

    @staticmethod
    def _slow(block: str, out: list[Event]) -> None:
        name = ""
        data: list[str] = []
        for line in block.split("\n"):
            if not line or line[0] == ":":
                continue  # blank (extra separator) or comment
            field, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
        if data:  # an event without data lines is not dispatched
            out.append((name, "\n".join(data)))


async def aiter_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[list[Event]]:
    """Batches of events, one batch per network read (nothing held back that is complete)."""
    parser = SSEParser()
    utf8 = codecs.getincrementaldecoder("utf-8")("replace")
    async for chunk in chunks:
        events = parser.feed(utf8.decode(chunk))
        if events:
            yield events
