"""Shared pytest fixtures (fixtures only; helpers live in their own modules)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from loopback import LoopbackServer


@pytest.fixture
async def loopback() -> AsyncIterator[LoopbackServer]:
    """A started loopback HTTP server (see tests/loopback.py); stopped after the test."""
    server = LoopbackServer()
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def module_loopback() -> AsyncIterator[LoopbackServer]:
    """A loopback server for tests that share a module's event loop (as MCP servers started once per module do)."""
    server = LoopbackServer()
    await server.start()
    yield server
    await server.stop()
