"""The offline demo provider: what ``tractui`` talks to when nothing is configured.

No network and no key. It thinks briefly about the question, then answers in
markdown with a code block, streamed word by word at a readable pace, with
usage counted by the real tokenizer. It yields exactly the events an HTTP
provider yields, so everything downstream (assembler, store, gauge, UI) runs
the real path. Deterministic: the same conversation gives the same reply.
"""

from __future__ import annotations

import asyncio
import re
import zlib
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import httpx

from tractui.core.content import Content, Usage
from tractui.core.events import Done, StreamEvent, TextDelta, ThinkingDelta, ThinkingEnd, UsageEvent
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.transport import Provider, ProviderConfig

PACE = 0.03  # seconds between streamed words: fast enough to read along, slow enough to watch
_WORD = re.compile(r"\s*\S+\s*|\s+")
_SNIPPETS = (
    ("python", 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n\nprint(greet("tractui"))'),
    (
        "python",
        'from collections import Counter\n\nwords = open("notes.txt").read().split()\nprint(Counter(words).most_common(3))',
    ),
    ("bash", "# count lines in every Python file\nfind . -name '*.py' | xargs wc -l | sort -n | tail"),
    (
        "python",
        "import asyncio\n\nasync def tick(n: int) -> None:\n    for i in range(n):\n"
        "        print(i)\n        await asyncio.sleep(0.1)\n\nasyncio.run(tick(3))",
    ),
)


def _question(messages: list[Content]) -> str:
    for message in reversed(messages):
        if message.speaker == "human" and message.text.strip():
            text = " ".join(message.text.split())
            return text if len(text) <= 80 else text[:79] + "…"
    return "(nothing yet)"


def compose(messages: list[Content]) -> tuple[str, str]:
    """The (thinking, answer) for this conversation; varies with the question and turn."""
    question = _question(messages)
    turn = sum(1 for m in messages if m.speaker == "human")
    lang, code = _SNIPPETS[zlib.crc32(question.encode()) % len(_SNIPPETS)]
    thinking = (
        f"The user asks: “{question}”. This is turn {turn} of our conversation.\n\n"
        "I am the offline demo model, so I cannot really answer. Best to say so plainly, "
        "show what a reply looks like — some markdown and a code block — and point to a real provider."
    )
    answer = (
        f"You asked: **{question}**\n\n"
        "I'm the *demo* model: I run offline and can't answer for real, but this is how a reply looks.\n\n"
        f"```{lang}\n{code}\n```\n\n"
        "To talk to a real model, load a profile (`/profile load NAME`) or start with "
        "`tractui --provider openai --model MODEL`. Thinking like the passage above is shown inline."
    )
    return thinking, answer


class DemoProvider(Provider):
    """Streams ``compose(...)``; ``pace`` seconds between words (0 in tests)."""

    name = "demo"

    def __init__(self, config: ProviderConfig, *, client: httpx.AsyncClient | None = None, pace: float = PACE) -> None:
        super().__init__(config, client=client)
        self.pace = pace
        self._counter = TokenCounter(config.model)

    def build_request(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        prompt = system or settings.view.system_prompt
        sent = [{"role": m.speaker, "content": m.text} for m in messages]
        return {"model": self.config.model, "messages": sent, **({"system": prompt} if prompt else {})}

    async def stream(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> AsyncGenerator[StreamEvent, None]:
        prompt = system or settings.view.system_prompt or ""
        thinking, answer = compose(messages)
        if not settings.view.reasoning_enabled:
            thinking = ""
        for word in _WORD.findall(thinking):
            yield ThinkingDelta(word, "reasoning_content")
            await asyncio.sleep(self.pace)
        if thinking:
            yield ThinkingEnd()
        for word in _WORD.findall(answer):
            yield TextDelta(word)
            await asyncio.sleep(self.pace)
        count = self._counter
        reasoning = count.count(thinking)
        usage = Usage(
            input_tokens=count.count_messages(messages) + count.count(prompt),
            output_tokens=reasoning + count.count(answer),
            reasoning_tokens=reasoning,
        )
        yield UsageEvent(usage)
        yield Done(finish_reason="stop", response_model=self.config.model)
