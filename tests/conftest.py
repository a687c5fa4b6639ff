"""Shared pytest fixtures (fixtures only; helpers live in their own modules)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from loopback import LoopbackServer


@pytest.fixture
async def loopback() -> AsyncIterator[LoopbackServer]:
    """A started loopback HTTP server (see tests/loopback.py); stopped after the test."""
    server = LoopbackServer()
    await server.start()
    yield server
    await server.stop()
