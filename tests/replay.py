"""Helpers for the signing providers' tests (Anthropic, Gemini, Responses): run a
provider against the loopback server and fold its events into a reply."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from loopback import LoopbackServer

from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content
from tractui.core.events import StreamEvent
from tractui.core.reasoning import apply_reasoning_policy
from tractui.core.settings import Settings
from tractui.providers import ProviderConfig, make_provider
from tractui.providers.transport import Provider

# every combination of reasoning.includeInContext × reasoning.format × reasoning.stripFromContext
COMBOS = list(itertools.product((False, True), ("native", "field"), ("all", "allButLast", "none")))


def make(server: LoopbackServer, name: str, model: str, path: str = "") -> Provider:
    provider = make_provider(ProviderConfig(name, model, base_url=f"{server.url}{path}"))
    provider.backoff_base = 0.01
    return provider


def settings(**values: Any) -> Settings:
    """Settings from keyword pairs: ``__`` stands for ``.`` and ``_`` for ``-`` (``max_tokens``, ``reasoning__maxTokens``)."""
    return Settings({k.replace("__", ".").replace("_", "-"): v for k, v in values.items()})


def combo_settings(include: bool, fmt: str, strip: str, **extra: Any) -> Settings:
    return settings(
        reasoning__includeInContext=include, reasoning__format=fmt, reasoning__stripFromContext=strip, **extra
    )


async def collect(
    provider: Provider, config: Settings | None = None, messages: list[Content] | None = None
) -> tuple[list[StreamEvent], MessageAssembler]:
    """Stream one reply; the history goes through the reasoning policy as the compile step does."""
    config = config or Settings()
    history = apply_reasoning_policy(messages or [Content.human("hi")], config)
    events: list[StreamEvent] = []
    assembler = MessageAssembler()
    async for event in provider.stream(history, config):
        events.append(event)
        assembler.feed(event)
    await provider.aclose()
    return events, assembler


def meta_of(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name.rsplit(".", 1)[0] + ".meta.json").read_text())


def stamped(assembler: MessageAssembler, provider: str, model: str) -> Content:
    """The assembled reply with the provenance the conversation loop stamps on it."""
    return assembler.content({"provider": provider, "model": model, "base_url": "http://loopback"})
