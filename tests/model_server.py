"""A loopback model that counts, reports, enforces and refuses like a real server, for the gauge and compaction.

``ModelServer`` is a handler for ``LoopbackServer`` (``loopback.default = server``)
speaking the OpenAI-compatible Chat Completions, the Anthropic Messages, the
Gemini ``streamGenerateContent`` or the OpenAI Responses shape.
Each request's prompt is counted with the real tokenizer over exactly what the
body carries (plus per-message template framing and an optional hidden server
prompt), the way a server's chat template would see it:

* OpenAI-compatible: every message's content, its reasoning field when sent,
  tool calls and results, the tool definitions.
* Anthropic: text, tool use and results; ``thinking`` blocks of earlier turns
  are stripped by the server (not counted) unless it plays a model with
  preserved thinking (``preserved``: Fable 5.1 and later keep them, billed),
  the current turn's are counted;
  thinking sent back as text counts as the text it is.
* Gemini: every part's text, thought parts included (Google asks for them back
  unchanged and documents no stripping), function calls and responses.
* Responses: message texts, function calls and outputs; a reasoning item counts
  only in the turn in progress (after the last user message), as the reasoning
  its encrypted content carries (what was billed for it); earlier turns'
  reasoning items are discarded by the model, as OpenAI documents.

It reports usage like the real APIs (``completion_tokens_details`` on one,
``input_tokens``/``output_tokens`` on the other, thinking billed in full even
when only a summary, or nothing, is shown: ``display``), refuses a request
whose prompt plus ``max_tokens`` passes ``limit`` (Gemini: whose prompt does) with
the vendor's words, and
in ``strict_template`` mode refuses a history whose roles do not alternate
(the Jinja templates of vLLM and llama.cpp). Summary requests (recognised by
the compaction system prompt) get a structured summary; with ``summary_thinks``
the model first thinks that many tokens unless thinking was explicitly
switched off, as servers that think by default do.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from loopback import Reply, Request, encode_sse, error

from tractui.conversation.compaction import prompt
from tractui.core.tokens import MESSAGE_OVERHEAD, TokenCounter, get_encoding

COUNTER = TokenCounter("loopback-model")
GEMINI_MODEL = "gemini-loop"  # what the replies name (Gemini's request names its model in the URL)
ALTERNATE = "Conversation roles must alternate user/assistant/user/assistant/..."
OPENAI_TOO_LONG = (
    "This model's maximum context length is {limit} tokens. However, you requested {total} tokens "
    "({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages or completion."
)
GEMINI_TOO_LONG = "The input token count ({prompt}) exceeds the maximum number of tokens allowed ({limit})."
GEMINI_ALTERNATE = "Please ensure that multiturn requests alternate between user and model."
RESPONSES_TOO_LONG = "Your input exceeds the context window of this model. Please adjust your input and try again."
RESPONSES_ORPHAN_REASONING = "Item '{id}' of type 'reasoning' was provided without its required following item."
RESPONSES_NO_CALL = "No tool call found for function call output with call_id {id}."
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
    protocol: Literal["openai", "anthropic", "gemini", "openai-responses"] = "openai"
    limit: int = 2000
    strict_template: bool = False
    strict_reasoning: bool = False  # DeepSeek: a tool-call message needs reasoning_content while thinking is on
    usage: bool = True
    preserved: bool = False  # Anthropic, Claude Fable 5.1 and later: earlier turns' thinking stays in context
    hidden_prompt: int = 0  # tokens of a server-side prompt the client never sees
    over_count: float = 1.0  # a server whose count grows faster than ours (1.3: 30% more per token sent)
    reply_words: int = 40
    thinking_words: int = 0
    # what of the billed thinking is shown (Anthropic; Gemini and Responses always show a summary: "summarized")
    display: Literal["full", "summarized", "omitted"] = "full"
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
        match self.protocol:
            case "openai":
                counted = self._openai(body)
            case "anthropic":
                counted = self._anthropic(body)
            case "gemini":
                counted = self._gemini(body)
            case "openai-responses":
                counted = self._responses(body)
        return self.hidden_prompt + round(counted * self.over_count)

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
                    case "thinking" if i > human or self.preserved:  # else stripped by the server
                        total += COUNTER.count(block["thinking"])
                    case "tool_use":
                        total += COUNTER.count(block["name"]) + COUNTER.count(json.dumps(block["input"]))
                    case "tool_result":
                        total += COUNTER.count(_text(block["content"]))
        if body.get("tools"):
            total += COUNTER.count(json.dumps(body["tools"], ensure_ascii=False))
        return total

    def _gemini(self, body: dict[str, Any]) -> int:
        system = _text((body.get("systemInstruction") or {}).get("parts"))
        total = COUNTER.count(system) + MESSAGE_OVERHEAD if system else 0
        for content in body["contents"]:
            total += MESSAGE_OVERHEAD
            for part in content["parts"]:
                total += COUNTER.count(part.get("text") or "")
                if call := part.get("functionCall"):
                    total += COUNTER.count(call["name"]) + COUNTER.count(json.dumps(call.get("args") or {}))
                if response := part.get("functionResponse"):
                    result = response.get("response") or {}
                    total += COUNTER.count(_text(result.get("result", result.get("error"))))
        if body.get("tools"):
            total += COUNTER.count(json.dumps(body["tools"], ensure_ascii=False))
        return total

    def _responses(self, body: dict[str, Any]) -> int:
        instructions = body.get("instructions") or ""
        total = COUNTER.count(instructions) + MESSAGE_OVERHEAD if instructions else 0
        items = body["input"]
        human = max((i for i, item in enumerate(items) if item.get("role") == "user"), default=-1)
        for i, item in enumerate(items):
            match item.get("type", "message"):
                case "message":
                    total += MESSAGE_OVERHEAD + COUNTER.count(_text(item["content"]))
                case "reasoning" if i > human:  # earlier turns' reasoning is discarded by the model
                    total += _billed(item["encrypted_content"])
                case "function_call":
                    total += COUNTER.count(item["name"]) + COUNTER.count(item["arguments"])
                case "function_call_output":
                    total += MESSAGE_OVERHEAD + COUNTER.count(_text(item["output"]))
        if body.get("tools"):
            total += COUNTER.count(json.dumps(body["tools"], ensure_ascii=False))
        return total

    # -- checks ---------------------------------------------------------------------------------
    def thinking_off(self, body: dict[str, Any]) -> bool:
        """Thinking explicitly switched off in the request, in any dialect this server knows."""
        match self.protocol:
            case "anthropic":
                return (body.get("thinking") or {}).get("type") not in ("enabled", "adaptive")
            case "gemini":
                return ((body.get("generationConfig") or {}).get("thinkingConfig") or {}).get("thinkingBudget") == 0
            case "openai-responses":
                return (body.get("reasoning") or {}).get("effort") == "none"
        return (
            (body.get("thinking") or {}).get("type") == "disabled"
            or (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False
            or body.get("reasoning_effort") == "none"
        )

    def problem(self, body: dict[str, Any], prompt_tokens: int) -> str | None:
        completion = _max_output(body) or 0
        if prompt_tokens + (0 if self.protocol == "gemini" else completion) > self.limit:
            self.over_limit += 1
            template = {
                "openai": OPENAI_TOO_LONG,
                "anthropic": ANTHROPIC_TOO_LONG,
                "gemini": GEMINI_TOO_LONG,
                "openai-responses": RESPONSES_TOO_LONG,
            }[self.protocol]
            return template.format(
                limit=self.limit, total=prompt_tokens + completion, prompt=prompt_tokens, completion=completion
            )
        match self.protocol:
            case "gemini":
                roles = [c.get("role") for c in body["contents"]]
                alternates = all(a != b for a, b in itertools.pairwise(roles))
                return None if alternates and roles[:1] == ["user"] else GEMINI_ALTERNATE
            case "openai-responses":
                return _responses_problem(body["input"])
            case "anthropic":
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
            match self.protocol:
                case "anthropic":
                    payload: dict[str, Any] = {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": found},
                    }
                case "gemini":
                    payload = {"error": {"code": 400, "message": found, "status": "INVALID_ARGUMENT"}}
                case _:
                    payload = {"error": {"message": found, "type": "invalid_request_error", "code": None}}
            return error(400, payload)
        completion = _max_output(body) or 10**6
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
        match self.protocol:
            case "anthropic":
                system = body.get("system")
                return (system if isinstance(system, str) else _text(system)) == prompt.SYSTEM_PROMPT
            case "gemini":
                return _text((body.get("systemInstruction") or {}).get("parts")) == prompt.SYSTEM_PROMPT
            case "openai-responses":  # as instructions, or as the first developer message (system-prompt-as)
                first = body["input"][0] if body["input"] else {}
                developer = first.get("role") == "developer" and _text(first["content"]) == prompt.SYSTEM_PROMPT
                return body.get("instructions") == prompt.SYSTEM_PROMPT or developer
        first = body["messages"][0]
        return first["role"] == "system" and _text(first["content"]) == prompt.SYSTEM_PROMPT

    def reply(
        self, body: dict[str, Any], prompt_tokens: int, text: str, thinking: str, calls: list[tuple[str, Any]]
    ) -> Reply:
        match self.protocol:
            case "anthropic":
                return self._anthropic_reply(body, prompt_tokens, text, thinking, calls)
            case "gemini":
                return self._gemini_reply(body, prompt_tokens, text, thinking, calls)
            case "openai-responses":
                return self._responses_reply(body, prompt_tokens, text, thinking, calls)
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
            out = _answer_tokens(text, calls) + reasoning
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
        billed = self._billed_thinking(thinking)
        shown = "" if self.display == "omitted" else thinking
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
        out = _answer_tokens(text, calls) + billed
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if calls else "end_turn"},
                "usage": {"output_tokens": out},
            }
        )
        events.append({"type": "message_stop"})
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]), seed=None)

    def _billed_thinking(self, thinking: str) -> int:
        """Thinking tokens billed: twice the shown summary when only a summary is shown (the model
        thought twice as much as it shows)."""
        billed = COUNTER.count(thinking)
        return billed * 2 if thinking and self.display == "summarized" else billed

    def _gemini_reply(
        self, body: dict[str, Any], prompt_tokens: int, text: str, thinking: str, calls: list[tuple[str, Any]]
    ) -> Reply:
        signature = f"c2lnLWdlbWluaS0{self._served:04d}"
        chunks: list[Any] = []

        def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> None:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                candidate["finishReason"] = finish
            chunks.append({"candidates": [candidate], "modelVersion": GEMINI_MODEL})

        if thinking and self.display != "omitted":
            chunk([{"text": thinking, "thought": True}])
        if text:
            chunk([{"text": text, "thoughtSignature": signature}] if thinking else [{"text": text}])
        for index, (name, arguments) in enumerate(calls):
            part: dict[str, Any] = {"functionCall": {"name": name, "args": arguments}}
            if index == 0:
                part["thoughtSignature"] = signature
            chunk([part])
        thoughts = self._billed_thinking(thinking)
        answer = _answer_tokens(text, calls)
        last: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0}]}
        last["candidates"][0]["finishReason"] = "STOP"
        if self.usage:
            last["usageMetadata"] = {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": answer,
                "thoughtsTokenCount": thoughts,
                "totalTokenCount": prompt_tokens + answer + thoughts,
            }
        chunks.append(last)
        return Reply(body=encode_sse(chunks, done=False), seed=None)

    def _responses_reply(
        self, body: dict[str, Any], prompt_tokens: int, text: str, thinking: str, calls: list[tuple[str, Any]]
    ) -> Reply:
        n = self._served
        response = {"id": f"resp_{n}", "object": "response", "model": body["model"], "status": "in_progress"}
        events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
        billed = self._billed_thinking(thinking)
        if thinking:
            rid = f"rs_{n}"
            events.append(
                {"type": "response.output_item.added", "item": {"type": "reasoning", "id": rid, "summary": []}}
            )
            shown = thinking if self.display != "omitted" else ""
            if shown:
                events.append({"type": "response.reasoning_summary_part.added", "item_id": rid, "summary_index": 0})
                events.append({"type": "response.reasoning_summary_text.delta", "item_id": rid, "delta": shown})
            summary = [{"type": "summary_text", "text": shown}] if shown else []
            item = {"type": "reasoning", "id": rid, "summary": summary, "encrypted_content": f"enc:{billed}:{n}"}
            events.append({"type": "response.output_item.done", "item": item})
        if text:
            mid = f"msg_{n}"
            message = {"type": "message", "id": mid, "role": "assistant", "content": []}
            events.append({"type": "response.output_item.added", "item": message})
            events.append({"type": "response.output_text.delta", "item_id": mid, "delta": text})
            done = {**message, "content": [{"type": "output_text", "text": text}]}
            events.append({"type": "response.output_item.done", "item": done})
        for index, (name, arguments) in enumerate(calls):
            fid = f"fc_{n}_{index}"
            call = {"type": "function_call", "id": fid, "call_id": f"call_{n}_{index}", "name": name, "arguments": ""}
            events.append({"type": "response.output_item.added", "item": call})
            args = json.dumps(arguments)
            events.append({"type": "response.function_call_arguments.delta", "item_id": fid, "delta": args})
            events.append({"type": "response.output_item.done", "item": {**call, "arguments": args}})
        out = _answer_tokens(text, calls) + billed
        completed: dict[str, Any] = {**response, "status": "completed"}
        if self.usage:
            completed["usage"] = {
                "input_tokens": prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": billed},
                "total_tokens": prompt_tokens + out,
            }
        events.append({"type": "response.completed", "response": completed})
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]), seed=None)


def _answer_tokens(text: str, calls: list[tuple[str, Any]]) -> int:
    """Output tokens of a reply besides its thinking: the text and each call's name and arguments."""
    return COUNTER.count(text) + sum(COUNTER.count(n) + COUNTER.count(json.dumps(a)) for n, a in calls)


def _max_output(body: dict[str, Any]) -> int:
    """The request's output cap in any of the four dialects (0: none)."""
    generation = body.get("generationConfig") or {}
    for value in (
        body.get("max_tokens"),
        body.get("max_completion_tokens"),
        body.get("max_output_tokens"),
        generation.get("maxOutputTokens"),
    ):
        if value:
            return int(value)
    return 0


def _billed(encrypted: str) -> int:
    """The reasoning tokens this server billed for an item it handed out (``enc:BILLED:N``)."""
    parts = encrypted.split(":")
    return int(parts[1]) if len(parts) == 3 and parts[0] == "enc" and parts[1].isdigit() else 0


def _responses_problem(items: list[dict[str, Any]]) -> str | None:
    """What the Responses API refuses in ``input``: a reasoning item with nothing after it, an
    output for a call that is not there."""
    calls: set[str] = set()
    for i, item in enumerate(items):
        match item.get("type"):
            case "reasoning":
                following = items[i + 1] if i + 1 < len(items) else None
                if following is None or following.get("type") == "reasoning":
                    return RESPONSES_ORPHAN_REASONING.format(id=item.get("id", ""))
            case "function_call":
                calls.add(item["call_id"])
            case "function_call_output" if item["call_id"] not in calls:
                return RESPONSES_NO_CALL.format(id=item["call_id"])
    return None
