"""A reply's event stream already under way: its request leaves while the screen mounts the reply.

Mounting the user's message and the reply lets the screen lay out and paint
before anything else runs; a stream first iterated after that sent its request
only once that frame was on screen (figures: docs/ui.md, "Speed").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Started(Generic[T]):
    """``events`` with its first item fetched from now on, in a task of its own.

    Iterating gives exactly the items, exceptions and end of ``events``; a
    cancelled wait for the first item cancels its fetch, as it would cancel
    ``events``. The owner calls ``aclose`` when done, also if it never iterated.
    """

    def __init__(self, events: AsyncGenerator[T, None]) -> None:
        self._events = events
        self._first: asyncio.Task[T] | None = asyncio.ensure_future(self._fetch())

    async def _fetch(self) -> T:
        return await anext(self._events)

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        first, self._first = self._first, None
        if first is not None:
            return await first
        return await anext(self._events)

    async def aclose(self) -> None:
        """Stop the first fetch if it is still running, then close ``events``."""
        first, self._first = self._first, None
        if first is not None:
            first.cancel()
            await asyncio.wait([first])
            if not first.cancelled():
                first.exception()  # an outcome no one will ask for: the stream is being dropped
        await self._events.aclose()
