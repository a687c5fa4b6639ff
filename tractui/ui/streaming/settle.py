"""Resolving a future from a Textual callback (``call_after_refresh``) exactly once."""

from __future__ import annotations

import asyncio


def settle(future: asyncio.Future[None]) -> None:
    """Mark ``future`` done unless a timeout or an earlier callback already did."""
    if not future.done():
        future.set_result(None)
