"""A scripted conversation against a ``ModelServer``, measured: the gauge's error, compactions, refusals.

Shared by the gauge tests and ``bench/gauge.py``. Each turn sends a question
through a real ``Conversation`` (SQLite store, provider over loopback HTTP);
afterwards every answered request's gauge reading — the figure the pre-flight
measured for it, read again at the head it was sent under — is set against the
prompt the server counted.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from loopback import LoopbackServer
from model_server import GEMINI_MODEL, ModelServer, words

from tractui.conversation.conversation import Conversation
from tractui.core.events import Notice, StreamError
from tractui.core.gauge import ContextReading
from tractui.core.settings import Settings
from tractui.providers import ProviderConfig
from tractui.store.history import HistoryStore

PROTOCOLS = {
    "openai": "loopback-model",
    "anthropic": "claude-opus-4-7",  # strips earlier turns' thinking (a model before Fable 5.1)
    "gemini": GEMINI_MODEL,
    "openai-responses": "gpt-loop",
}


@dataclass
class RunStats:
    turns: int = 0
    answered: int = 0
    compactions: int = 0
    most_in_a_row: int = 0
    refused: int = 0  # requests the server refused
    blocked: int = 0  # requests tractui did not send (over the limit by its own count)
    errors: list[float] = field(default_factory=list)  # (reading - counted) / counted, per answered request
    after_compaction: list[float] = field(default_factory=list)  # the same, for the requests read right after one
    notices: list[str] = field(default_factory=list)

    @property
    def median_error(self) -> float:
        return statistics.median(abs(e) for e in self.errors) if self.errors else 0.0

    @property
    def max_error(self) -> float:
        return max((abs(e) for e in self.errors), default=0.0)

    @property
    def max_after_compaction(self) -> float:
        return max((abs(e) for e in self.after_compaction), default=0.0)


def settings_for(limit: int, **values: Any) -> Settings:
    settings = Settings({"context-limit": limit, "max-tokens": limit // 8, "retries": 0})
    for key, value in values.items():
        settings.set(key, value)
    return settings


def conversation(
    store: HistoryStore, loopback: LoopbackServer, settings: Settings, protocol: str, model: str | None = None
) -> Conversation:
    base = f"{loopback.url}/v1" if protocol in ("openai", "openai-responses") else loopback.url
    config = ProviderConfig(protocol, model or PROTOCOLS[protocol], base_url=base, api_key_env="")
    return Conversation(store, settings, config)


async def run(
    conv: Conversation, server: ModelServer, *, turns: int = 40, question_words: int = 30, first: int = 0
) -> RunStats:
    stats = RunStats()
    in_a_row = 0
    for turn in range(first, first + turns):
        events = [e async for e in conv.send(f"question {turn}: {words(question_words, turn)}")]
        stats.turns += 1
        notices = [e.message for e in events if isinstance(e, Notice)]
        stats.notices.extend(notices)
        compacted = any("compacting first" in n for n in notices)
        stats.compactions += compacted
        in_a_row = in_a_row + 1 if compacted else 0
        stats.most_in_a_row = max(stats.most_in_a_row, in_a_row)
        stats.blocked += sum(1 for e in events if isinstance(e, StreamError) and e.message.startswith("not sent"))
        last = conv.history()[-1]
        if last.kind == "assistant" and last.status == "complete" and last.content.text:
            stats.answered += 1
    stats.refused = len(server.refusals)
    measured = list(zip(_readings(conv), server.prompts, strict=False))
    stats.errors = [(reading.effective - counted) / counted for (reading, _), counted in measured]
    stats.after_compaction = [
        (reading.effective - counted) / counted for (reading, after), counted in measured if after
    ]
    return stats


def readings(conv: Conversation) -> list[int]:
    """The gauge for each complete reply's request, read at the head it was sent under (before its reasoning)."""
    return [reading.effective for reading, _ in _readings(conv)]


def _readings(conv: Conversation) -> list[tuple[ContextReading, bool]]:
    """Each reading, and whether a compaction came since the request before it (a summary in between)."""
    chain = conv.history()
    out = []
    compacted = False
    for index, commit in enumerate(chain):
        compacted = compacted or commit.kind == "summary"
        if commit.kind == "assistant" and commit.status == "complete":
            sent = index - 1
            while chain[sent].kind == "reasoning":
                sent -= 1
            out.append((conv.gauge(head=chain[sent].id), compacted))
            compacted = False
    return out
