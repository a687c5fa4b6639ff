"""Helpers for the app's pilot and snapshot tests: a real Conversation on a
real SQLite file, the offline demo provider made instant (or any provider
config, e.g. pointed at the loopback server), and a frozen clock so thinking
timers and countdowns draw the same on every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tractui.conversation.conversation import Conversation
from tractui.core.settings import Settings
from tractui.providers import make_provider
from tractui.providers.demo import DemoProvider
from tractui.providers.transport import ProviderConfig
from tractui.store.history import HistoryStore
from tractui.ui.app import TractApp
from tractui.ui.internals import screen_strips

DEMO = ProviderConfig(provider="demo", model="demo")


class FakeClock:
    """Time stands still unless a test moves it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def build_app(
    tmp_path: Path,
    *,
    config: ProviderConfig = DEMO,
    settings: Settings | None = None,
    clock: FakeClock | None = None,
    notices: list[str] | None = None,
    theme: str | None = None,
    provider: Any = None,
    profile_name: str | None = None,
) -> TractApp:
    store = HistoryStore(tmp_path / "history.db")
    if provider is None:
        provider = DemoProvider(config, pace=0) if config.provider == "demo" else make_provider(config)
    conversation = Conversation(store, settings or Settings(), config, provider=provider, profile_name=profile_name)
    return TractApp(conversation, notices=notices or [], theme=theme, clock=clock or FakeClock())


async def settle(pilot: Any) -> None:
    """Wait until the reply (or command) in flight has finished and the screen caught up."""
    app = pilot.app
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def type_line(pilot: Any, text: str, *, enter: bool = True) -> None:
    from tractui.ui.widgets.input_box import InputBox

    box = pilot.app.query_one(InputBox)
    box.focus()
    box.insert(text)
    await pilot.pause()
    if enter:
        await pilot.press("enter")


def terminal_sends(app: TractApp, data: str) -> None:
    """Post to the app what its parser reads from ``data``, all before it handles the first:
    the keys of a burst come so (a fast typist, ``tmux send-keys BSpace d``)."""
    from tractui.ui.internals import WholePastes

    for event in WholePastes().feed(data):
        app.post_message(event)


def screen_text(app: TractApp) -> str:
    """What the terminal would show, as plain text, line by line."""
    lines = []
    for strip in screen_strips(app.screen):
        lines.append("".join(segment.text for segment in strip))
    return "\n".join(lines)


def loop_config(loopback: Any, model: str = "loop-model") -> ProviderConfig:
    """An OpenAI-compatible provider pointed at the loopback server (no key needed)."""
    return ProviderConfig(provider="openai", model=model, base_url=f"{loopback.url}/v1", api_key_env="")


def chat_stream(
    reasoning: list[str], text: list[str], *, usage: tuple[int, int] | None = (1200, 300), finish: bool = True
) -> bytes:
    """Chat Completions SSE bytes: reasoning deltas, then content deltas, then usage."""
    from loopback import encode_sse

    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "loop-model"}
    chunks: list[Any] = []
    for piece in reasoning:
        chunks.append({**base, "choices": [{"index": 0, "delta": {"reasoning_content": piece}, "finish_reason": None}]})
    for piece in text:
        chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    if finish:
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if usage is not None:
        prompt, completion = usage
        chunks.append(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )
    return encode_sse(chunks, done=finish)


async def wait_for(pilot: Any, predicate: Any, timeout: float = 30.0) -> None:
    """Poll the app until ``predicate()`` holds (streams arrive over real sockets; a loaded machine is slow)."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


def stalled(body: bytes, seconds: float = 30.0) -> Any:
    """Serve ``body`` and then hold the connection open, as a model that is still thinking."""
    from loopback import sse

    return sse(body + b": still thinking\n\n", stall_after=len(body), stall=seconds)
