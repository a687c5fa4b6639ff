"""The offline demo provider: what ``tractui`` talks to when nothing is configured.

No network and no key. It thinks briefly about the question, then answers in
markdown with a code block, streamed word by word at a readable pace, with
usage counted by the real tokenizer. It yields exactly the events an HTTP
provider yields, so everything downstream (assembler, store, gauge, UI) runs
the real path. Deterministic: the same conversation gives the same reply.

Offered the shipped demo server's tools (``demo__add``, ``demo__multiply``,
``demo__now``, ``demo__read_file``), it calls one when the question asks for
it — a sum, a product, the time, a file — and answers from the result, so a
first run shows a whole tool loop offline.
"""

from __future__ import annotations

import asyncio
import json
import re
import zlib
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import httpx

from tractui.core.content import Content, ToolResultBlock, Usage
from tractui.core.events import Done, StreamEvent, TextDelta, ThinkingDelta, ThinkingEnd, ToolCallDelta, UsageEvent
from tractui.core.settings import Settings
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.models import ModelInfo
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


def _from_results(results: list[ToolResultBlock]) -> tuple[str, str]:
    """Thinking about the tool's answer, then the answer built on it."""
    result = results[-1]
    said = " ".join(result.content.split())
    said = said if len(said) <= 300 else said[:299] + "…"
    if result.is_error:
        return (
            f"The tool did not give a result: “{said}”. I should say so rather than make one up.",
            f"The tool call did not work out: {said}\n\nI'm the offline demo model, so I can't do it another way.",
        )
    return (
        f"The tool answered “{said}”. That is the answer; I'll give it plainly.",
        f"The demo tool says: **{said}**\n\nThat came from a real MCP server (tractui's offline demo, over stdio); "
        "`/tools` lists its tools, and `docs/tools.md` says how to add your own servers.",
    )


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


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FILE = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,8}")


def plan_call(question: str, offered: set[str]) -> tuple[str, dict[str, Any]] | None:
    """The demo server's tool this question calls for, with its arguments; ``None`` when none fits."""
    low = question.lower()
    numbers = [float(n) if "." in n else int(n) for n in _NUMBER.findall(question)]
    if len(numbers) >= 2 and "demo__multiply" in offered and any(w in low for w in ("×", "*", "times", "multiply")):
        return "demo__multiply", {"a": numbers[0], "b": numbers[1]}
    if len(numbers) >= 2 and "demo__add" in offered and any(w in low for w in ("+", "plus", "add", "sum")):
        return "demo__add", {"a": numbers[0], "b": numbers[1]}
    if "demo__now" in offered and any(w in low for w in ("time", "date", "clock", "today")):
        return "demo__now", {}
    file = _FILE.search(question)
    if file and "demo__read_file" in offered and any(w in low for w in ("read", "file", "show", "open")):
        return "demo__read_file", {"path": file.group(0)}
    return None


def _results(messages: list[Content]) -> list[ToolResultBlock]:
    """The tool results after the last reply, when the conversation is mid-loop."""
    out: list[ToolResultBlock] = []
    for message in reversed(messages):
        if message.speaker != "tool":
            break
        out[:0] = [b for b in message.blocks if isinstance(b, ToolResultBlock)]
    return out


class DemoProvider(Provider):
    """Streams ``compose(...)``; ``pace`` seconds between words (0 in tests)."""

    name = "demo"

    def __init__(
        self, config: ProviderConfig, *, client: httpx.AsyncClient | None = None, pace: float | None = None
    ) -> None:
        super().__init__(config, client=client)
        self.pace = PACE if pace is None else pace
        self._counter = TokenCounter(config.model)

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo("demo", name="the offline demo")]

    async def warm(self) -> None:
        """Nothing to ready: the demo never opens a connection."""

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
        request: dict[str, Any] = {"model": self.config.model, "messages": sent}
        if prompt:
            request["system"] = prompt
        if tools:
            request["tools"] = self.tool_definitions(tools)
        return request

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
        results = _results(messages)
        call = None if results else plan_call(_question(messages), {t.name for t in tools})
        if results:
            thinking, answer = _from_results(results)
        elif call is not None:
            thinking = (
                f"The user asks: “{_question(messages)}”. The demo tools can do that: "
                f"I'll call {call[0].split('__', 1)[1]} with {json.dumps(call[1])} rather than guess."
            )
            answer = ""
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
        if call is not None:
            turn = sum(1 for m in messages if m.speaker == "human")
            yield ToolCallDelta(0, id=f"call_demo_{turn}", name=call[0], arguments=json.dumps(call[1]))
        count = self._counter
        reasoning = count.count(thinking)
        offered = json.dumps(self.tool_definitions(tools), ensure_ascii=False) if tools else ""
        usage = Usage(  # what a real server reads: the messages, the system prompt and the tools declared
            input_tokens=count.count_messages(messages) + count.count(prompt) + count.count(offered),
            output_tokens=reasoning + count.count(answer),
            reasoning_tokens=reasoning,
        )
        yield UsageEvent(usage)
        yield Done(finish_reason="tool_calls" if call else "stop", response_model=self.config.model)
