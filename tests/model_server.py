"""A loopback model that counts, reports, enforces and refuses like a real server, for the gauge and compaction.

``ModelServer`` is a handler for ``LoopbackServer`` (``loopback.default = server``)
speaking the OpenAI-compatible Chat Completions or the Anthropic Messages shape.
Each request's prompt is counted with the real tokenizer over exactly what the
body carries (plus per-message template framing and an optional hidden server
prompt), the way a server's chat template would see it:

* OpenAI-compatible: every message's content, its reasoning field when sent,
  tool calls and results, the tool definitions.
* Anthropic: text, tool use and results; ``thinking`` blocks of earlier turns
  are stripped by the server (not counted), the current turn's are counted;
  thinking sent back as text counts as the text it is.

It reports usage like the real APIs (``completion_tokens_details`` on one,
``input_tokens``/``output_tokens`` on the other, thinking billed in full even
when only a summary, or nothing, is shown: ``display``), refuses a request
whose prompt plus ``max_tokens`` passes ``limit`` with the vendor's words, and
in ``strict_template`` mode refuses a history whose roles do not alternate
(the Jinja templates of vLLM and llama.cpp). Summary requests (recognised by
the compaction system prompt) get a structured summary; with ``summary_thinks``
the model first thinks that many tokens unless thinking was explicitly
switched off, as servers that think by default do.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from loopback import Reply, Request, encode_sse, error

from tractui.conversation.compaction import prompt
from tractui.core.tokens import MESSAGE_OVERHEAD, TokenCounter, get_encoding

COUNTER = TokenCounter("loopback-model")
ALTERNATE = "Conversation roles must alternate user/assistant/user/assistant/..."
OPENAI_TOO_LONG = (
    "This model's maximum context length is {limit} tokens. However, you requested {total} tokens "
    "({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages or completion."
)
ANTHROPIC_TOO_LONG = (
    "input length and `max_tokens` exceed context limit: {prompt} + {completion} > {limit}, "
    "decrease input length or `max_tokens` and try again"
)
MISSING_REASONING = "Missing `reasoning_content` field in the assistant message at message index {i}"
UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"
)
VOCABULARY = [
    "parser",
    "lexer",
    "token",
    "module",
    "config",
    "cache",
    "index",
    "the",
    "a",
    "of",
    "to",
    "and",
    "for",
    "with",
    "file",
    "function",
    "returns",
    "value",
    "test",
    "error",
    "fixes",
    "build",
    "path",
    "user",
    "data",
    "request",
    "stream",
    "buffer",
    "queue",
    "thread",
]
SUMMARY = (
    "## User's goal\nBuild the parser in src/parser.py.\n## Decisions and facts established\nTokens are cached.\n"
    "## Code and file names mentioned\nsrc/parser.py, lex()\n## Open questions\nnone\n## User preferences\n"
    "short answers\n## Where the conversation stood\nDiscussing the lexer."
)


def words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCABULARY) for _ in range(n))


def first_tokens(text: str, budget: int) -> str:
    """The first ``budget`` tokens of ``text``."""
    encoding = get_encoding(COUNTER.encoding_name)
    return encoding.decode(encoding.encode_ordinary(text)[: max(0, budget)])


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def alternation_problem(messages: list[dict[str, Any]]) -> str | None:
    """The strict template's rule: after the system prompt, user and assistant alternate, starting with
    the user; tool messages may sit between an assistant's tool calls and the next assistant message."""
    previous = None
    for message in messages:
        role = message.get("role")
        if role == "system":
            if previous is not None:
                return ALTERNATE
            continue
        if role == "tool":
            if previous not in ("calls", "tool"):
                return ALTERNATE
            previous = "tool"
        elif role == "user":
            if previous == "user":
                return ALTERNATE
            previous = "user"
        elif role == "assistant":
            if previous not in ("user", "tool"):
                return ALTERNATE
            previous = "calls" if message.get("tool_calls") else "assistant"
    return None


@dataclass
class ModelServer:
    protocol: Literal["openai", "anthropic"] = "openai"
    limit: int = 2000
    strict_template: bool = False
    strict_reasoning: bool = False  # DeepSeek: a tool-call message needs reasoning_content while thinking is on
    usage: bool = True
    hidden_prompt: int = 0  # tokens of a server-side prompt the client never sees
    reply_words: int = 40
    thinking_words: int = 0
    display: Literal["full", "summarized", "omitted"] = "full"  # Anthropic: what of the billed thinking is shown
    summary_thinks: int = 0
    unoffered_call: set[int] = field(default_factory=set)  # chat requests (1-based) answered with a call to "shell"
    fail: set[int] = field(default_factory=set)  # chat requests (1-based) answered with a server error
    chat: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[int] = field(default_factory=list)  # the counted prompt of each answered chat request
    refusals: list[str] = field(default_factory=list)
    over_limit: int = 0
    _served: int = 0

    # -- counting -------------------------------------------------------------------------------
    def count(self, body: dict[str, Any]) -> int:
        return self.hidden_prompt + (self._openai(body) if self.protocol == "openai" else self._anthropic(body))

    def _openai(self, body: dict[str, Any]) -> int:
        total = 0
        for message in body["messages"]:
            total += MESSAGE_OVERHEAD + COUNTER.count(_text(message.get("content")))
            total += COUNTER.count(message.get("reasoning_content") or message.get("reasoning") or "")
            for call in message.get("tool_calls") or []:
                total += COUNTER.count(call["function"]["name"]) + COUNTER.count(call["function"]["arguments"])
        if body.get("tools"):
            total += COUNTER.count(json.dumps(body["tools"], ensure_ascii=False))
        return total

    def _anthropic(self, body: dict[str, Any]) -> int:
        system = body.get("system") or ""
        system = system if isinstance(system, str) else _text(system)
        total = COUNTER.count(system) + MESSAGE_OVERHEAD if system else 0
        messages = body["messages"]
        human = max(
            (
                i
                for i, m in enumerate(messages)
                if m["role"] == "user" and any(b["type"] == "text" for b in m["content"])
            ),
            default=-1,
        )
        for i, message in enumerate(messages):
            total += MESSAGE_OVERHEAD
            for block in message["content"]:
                match block["type"]:
                    case "text":
                        total += COUNTER.count(block["text"])
                    case "thinking" if i > human:  # earlier turns' thinking is stripped by the server
                        total += COUNTER.count(block["thinking"])
                    case "tool_use":
                        total += COUNTER.count(block["name"]) + COUNTER.count(json.dumps(block["input"]))
                    case "tool_result":
                        total += COUNTER.count(_text(block["content"]))
        if body.get("tools"):
            total += COUNTER.count(json.dumps(body["tools"], ensure_ascii=False))
        return total

    # -- checks ---------------------------------------------------------------------------------
    def thinking_off(self, body: dict[str, Any]) -> bool:
        """Thinking explicitly switched off in the request, in any dialect this server knows."""
        if self.protocol == "anthropic":
            return (body.get("thinking") or {}).get("type") not in ("enabled", "adaptive")
        return (
            (body.get("thinking") or {}).get("type") == "disabled"
            or (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False
            or body.get("reasoning_effort") == "none"
        )

    def problem(self, body: dict[str, Any], prompt_tokens: int) -> str | None:
        completion = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        if prompt_tokens + completion > self.limit:
            self.over_limit += 1
            template = OPENAI_TOO_LONG if self.protocol == "openai" else ANTHROPIC_TOO_LONG
            return template.format(
                limit=self.limit, total=prompt_tokens + completion, prompt=prompt_tokens, completion=completion
            )
        if self.protocol != "openai":
            return None
        messages = body["messages"]
        if self.strict_template and (found := alternation_problem(messages)) is not None:
            return found
        for i, message in enumerate(messages):
            calls = message.get("tool_calls") or []
            if not calls:
                continue
            if self.strict_reasoning and not self.thinking_off(body) and "reasoning_content" not in message:
                return MISSING_REASONING.format(i=i)
            answered = set()
            for later in messages[i + 1 :]:
                if later.get("role") != "tool":
                    break
                answered.add(later.get("tool_call_id"))
            if any(c["id"] not in answered for c in calls):
                return UNANSWERED
        return None

    # -- answering ------------------------------------------------------------------------------
    def __call__(self, request: Request) -> Reply:
        body = request.json
        summary = self._is_summary(body)
        if not summary:
            self._served += 1
            if self._served in self.fail:
                return error(500, {"error": {"message": "the server had an error while processing your request"}})
        prompt_tokens = self.count(body)
        found = self.problem(body, prompt_tokens)
        if found is not None:
            self.refusals.append(found)
            if self.protocol == "anthropic":
                return error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": found}})
            return error(400, {"error": {"message": found, "type": "invalid_request_error", "code": None}})
        completion = int(body.get("max_tokens") or body.get("max_completion_tokens") or 10**6)
        if summary:
            self.summaries.append(body)
            thinking, text = "", SUMMARY
            if self.summary_thinks and not self.thinking_off(body):
                budget = min(self.summary_thinks, completion)
                thinking = first_tokens(words(budget * 2, 7), budget)
                text = first_tokens(SUMMARY, completion - COUNTER.count(thinking))
            return self.reply(body, prompt_tokens, text, thinking, [])
        self.chat.append(body)
        self.prompts.append(prompt_tokens)
        n = self._served
        thinking = "" if self.thinking_off(body) or not self.thinking_words else words(self.thinking_words, 10_000 + n)
        if n in self.unoffered_call:
            return self.reply(body, prompt_tokens, "", thinking or "I should run it.", [("shell", {"cmd": "ls"})])
        return self.reply(body, prompt_tokens, f"answer {n}: {words(self.reply_words, n)}", thinking, [])

    def _is_summary(self, body: dict[str, Any]) -> bool:
        if self.protocol == "anthropic":
            system = body.get("system")
            return (system if isinstance(system, str) else _text(system)) == prompt.SYSTEM_PROMPT
        first = body["messages"][0]
        return first["role"] == "system" and _text(first["content"]) == prompt.SYSTEM_PROMPT

    def reply(
        self, body: dict[str, Any], prompt_tokens: int, text: str, thinking: str, calls: list[tuple[str, Any]]
    ) -> Reply:
        if self.protocol == "anthropic":
            return self._anthropic_reply(body, prompt_tokens, text, thinking, calls)
        return self._openai_reply(body, prompt_tokens, text, thinking, calls)

    def _openai_reply(
        self, body: dict[str, Any], prompt_tokens: int, text: str, thinking: str, calls: list[tuple[str, Any]]
    ) -> Reply:
        base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
        chunks: list[Any] = []

        def delta(d: dict[str, Any], finish: str | None = None) -> None:
            chunks.append({**base, "choices": [{"index": 0, "delta": d, "finish_reason": finish}]})

        if thinking:
            delta({"role": "assistant", "reasoning_content": thinking})
        if text:
            delta({"content": text})
        for index, (name, arguments) in enumerate(calls):
            function = {"name": name, "arguments": json.dumps(arguments)}
            delta({"tool_calls": [{"index": index, "id": f"call_{self._served}_{index}", "function": function}]})
        delta({}, "tool_calls" if calls else "stop")
        if self.usage:
            reasoning = COUNTER.count(thinking)
            out = COUNTER.count(text) + reasoning
            out += sum(COUNTER.count(n) + COUNTER.count(json.dumps(a)) for n, a in calls)
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": out,
                "total_tokens": prompt_tokens + out,
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            }
            chunks.append({**base, "choices": [], "usage": usage})
        return Reply(body=encode_sse(chunks), seed=None)

    def _anthropic_reply(
        self, body: dict[str, Any], prompt_tokens: int, text: str, thinking: str, calls: list[tuple[str, Any]]
    ) -> Reply:
        billed = COUNTER.count(thinking)
        shown = thinking
        if thinking and self.display == "summarized":
            billed *= 2  # the model thought twice as much as the summary shows
        elif self.display == "omitted":
            shown = ""
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_loop",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [],
                    "usage": {"input_tokens": prompt_tokens, "output_tokens": 1},
                },
            }
        ]
        index = 0

        def block(start: dict[str, Any], *deltas: dict[str, Any]) -> None:
            nonlocal index
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
            events.append({"type": "content_block_stop", "index": index})
            index += 1

        if thinking:
            signature = {"type": "signature_delta", "signature": f"sig-{self._served}-" + "A" * 24}
            if shown:
                block({"type": "thinking", "thinking": ""}, {"type": "thinking_delta", "thinking": shown}, signature)
            else:
                block({"type": "thinking", "thinking": ""}, signature)
        if text:
            block({"type": "text", "text": ""}, {"type": "text_delta", "text": text})
        for name, arguments in calls:
            block(
                {"type": "tool_use", "id": f"toolu_{self._served:08d}", "name": name, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(arguments)},
            )
        out = COUNTER.count(text) + billed + sum(COUNTER.count(n) + COUNTER.count(json.dumps(a)) for n, a in calls)
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if calls else "end_turn"},
                "usage": {"output_tokens": out},
            }
        )
        events.append({"type": "message_stop"})
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]), seed=None)
