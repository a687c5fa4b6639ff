"""Shared pytest fixtures (fixtures only; helpers live in their own modules)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from loopback import LoopbackServer

from tractui.providers import demo


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the CPUs, for a suite that spends much of its time
    waiting on subprocesses and servers (``--maxprocesses`` still caps it)."""
    return (os.cpu_count() or 1) + 1


@pytest.fixture(autouse=True)
def private_folders(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own config and data folders: nothing is read from or written to the user's."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(home / "data"))


@pytest.fixture(autouse=True)
def instant_demo(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline demo streams without pauses, also when ``/model`` or ``/profile`` makes it
    anew; a test marked ``demo_pace`` keeps the readable pace users see."""
    if request.node.get_closest_marker("demo_pace") is None:
        monkeypatch.setattr(demo, "PACE", 0.0)


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
