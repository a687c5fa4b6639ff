"""The gauge and compaction on every provider shape, against a server that counts, reports and enforces.

Each test runs a real conversation against ``ModelServer`` (tests/model_server.py):
the server counts every prompt with the real tokenizer, reports usage as the
vendor does, refuses requests over its context limit and, in strict-template
mode, histories whose roles do not alternate.
"""

from __future__ import annotations

import pytest
from gauge_run import conversation, run, settings_for
from model_server import ALTERNATE, ModelServer

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
