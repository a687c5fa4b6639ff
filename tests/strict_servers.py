"""Strict loopback models for tool loops: one per wire protocol, enforcing each vendor's rules.

Each ``Strict*`` is a handler for ``LoopbackServer`` (``loopback.default =
model``). It plays a scripted model: every request is checked against the
rules the real API enforces for a tool loop — thinking, signatures and
reasoning items echoed exactly, every call answered, ids byte for byte —
and a broken rule gets the vendor's own 400 text, so a test fails the way a
user would. Otherwise the next scripted step is streamed back: thinking,
then tool calls, or the final answer.
"""

from __future__ import annotations

import copy
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from loopback import Reply, Request, encode_sse, error


@dataclass
class Step:
    """One reply of the scripted model: its thinking, then calls ``(tool name, arguments)`` or text."""

    thinking: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""


@dataclass
class Strict:
    steps: list[Step]
    refusals: list[str] = field(default_factory=list)  # every 400 sent, for the test to show
    served: int = 0
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def __call__(self, request: Request) -> Reply:
        body = request.json
        problem = self.check(body)
        if problem is not None:
            self.refusals.append(problem)
            return self.refuse(problem)
        step = self.steps[min(self.served, len(self.steps) - 1)]
        self.served += 1
        return self.stream(step, body)

    def check(self, body: Any) -> str | None:
        raise NotImplementedError

    def refuse(self, message: str) -> Reply:
        return error(400, {"error": {"message": message, "type": "invalid_request_error"}})

    def stream(self, step: Step, body: Any) -> Reply:
        raise NotImplementedError


# -- OpenAI-compatible: Kimi and DeepSeek with thinking ---------------------------------------------
KIMI_MISSING = "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
DEEPSEEK_MISSING = "The `reasoning_content` in the thinking mode must be passed back to the API."
OPENAI_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)


# The effort DeepSeek runs for each it is asked (its thinking-mode guide, api-docs.deepseek.com/guides/
# thinking_mode, read 2026-11-28); thinking on and no reasoning_effort runs high
DEEPSEEK_RUNS = {
    "minimal": "low",
    "low": "low",
    "medium": "high",
    "high": "high",
    "xhigh": "high",
    "max": "max",
    "ultra": "max",
}


@dataclass
class StrictChat(Strict):
    """Kimi (``functions.NAME:IDX`` ids) or DeepSeek V4: reasoning_content back on every tool-call message."""

    vendor: str = "kimi"
    field_name: str = "reasoning_content"
    issued: dict[str, str] = field(default_factory=dict)  # call id -> the reasoning of its step
    ran: list[str | None] = field(default_factory=list)  # DeepSeek: the effort each reply thought at (None: off)

    def effort_run(self, body: dict[str, Any]) -> str | None:
        """What DeepSeek thinks at for this request, by its table; a value outside it is marked as such
        (DeepSeek's answer to one is not documented)."""
        if not self.thinking_on(body):
            return None
        asked = body.get("reasoning_effort", "high")
        return DEEPSEEK_RUNS.get(asked, f"not in DeepSeek's table: {asked}")

    def thinking_on(self, body: dict[str, Any]) -> bool:
        return (body.get("thinking") or {}).get("type") != "disabled"

    def check(self, body: Any) -> str | None:
        """Every tool-call message carries the reasoning field while thinking is on; within the turn
        in progress (after the last user message) it must be the reasoning of that step, as issued."""
        messages = body["messages"]
        turn = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        for i, message in enumerate(messages):
            calls = message.get("tool_calls") or []
            if message.get("role") != "assistant" or not calls:
                continue
            missing = KIMI_MISSING.format(i=i) if self.vendor == "kimi" else DEEPSEEK_MISSING
            if self.thinking_on(body) and self.field_name not in message:
                return missing
            for call in calls:
                if call["id"] not in self.issued:
                    return f"tool_call_id {call['id']} is not found"
                if i > turn and self.thinking_on(body) and message.get(self.field_name) != self.issued[call["id"]]:
                    return missing
            answered = set()
            for later in messages[i + 1 :]:
                if later.get("role") != "tool":
                    break
                answered.add(later.get("tool_call_id"))
            missing = [c["id"] for c in calls if c["id"] not in answered]
            if missing:
                return OPENAI_UNANSWERED.format(ids=", ".join(missing))
        return None

    def stream(self, step: Step, body: Any) -> Reply:
        if self.vendor == "deepseek":
            self.ran.append(self.effort_run(body))
        base = {"id": "chatcmpl-strict", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
        chunks: list[Any] = []

        def delta(d: dict[str, Any], finish: str | None = None) -> None:
            chunks.append({**base, "choices": [{"index": 0, "delta": d, "finish_reason": finish}]})

        for piece in _halves(step.thinking):
            delta({self.field_name: piece})
        for index, (name, arguments) in enumerate(step.calls):
            number = next(self._ids)
            call_id = f"functions.{name}:{number}" if self.vendor == "kimi" else f"call_{number:08x}"
            self.issued[call_id] = step.thinking
            text = json.dumps(arguments)
            delta({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": {"name": name}}]})
            for piece in _halves(text):
                delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        for piece in _halves(step.text):
            delta({"content": piece})
        delta({}, "tool_calls" if step.calls else "stop")
        chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 20}})
        return Reply(body=encode_sse(chunks))


# -- Anthropic with thinking --------------------------------------------------------------------------
ANTHROPIC_START = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` "
    "is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
    "`tool_use` and `tool_result` blocks). To avoid this requirement, disable `thinking`."
)
ANTHROPIC_MODIFIED = (
    "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
    "modified. These blocks must remain as they were in the original response."
)
ANTHROPIC_SIGNATURE = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
ANTHROPIC_UNANSWERED = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` "
    "block must have a corresponding `tool_result` block in the next message."
)
ANTHROPIC_FORCED = "Thinking may not be enabled when tool_choice forces tool use."
ANTHROPIC_BUDGET_GONE = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)
# Opus 5.5 and Fable 5.1 and later (platform.claude.com, what's new in Claude Opus 5.5, read 2026-11-27)
ANTHROPIC_CANNOT_DISABLE = (
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)
# between_tools where the model does not take it, or at effort xhigh or max on Sonnet 5.5: a 400 per the
# troubleshooting page, whose wording for these two was not found; this follows the pattern above
ANTHROPIC_BETWEEN_TOOLS = '"thinking.type.between_tools" is not supported {why}.'
# preserved thinking (platform.claude.com, "Fix a thinking block bound to a different conversation", read 2026-11-27)
ANTHROPIC_BOUND = (
    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block is bound to a different "
    'conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)
BINDING_BETA = "thinking-binding-controls-2026-08-01"
# drop_block without its beta header: the page says the error then asks for the header; its wording was not found
ANTHROPIC_BINDING_HEADER = f"thinking.block_binding: requires the anthropic-beta header {BINDING_BETA}"


def _prefix(body: Any, messages: list[Any]) -> str:
    """What a thinking block is bound to: the system prompt, the tools and the messages before it."""
    return json.dumps([body.get("system"), body.get("tools"), messages], sort_keys=True)


@dataclass
class StrictAnthropic(Strict):
    signed: dict[str, str] = field(default_factory=dict)  # signature -> thinking text

    adaptive_only: bool = True  # Opus 4.7 and later, Sonnet 5 and later: budgets are refused
    off: str = "disabled"  # how the model turns thinking off: disabled, between_tools (Sonnet 5.5), never
    binding: bool = False  # preserved thinking's prefix check (Fable 5.1 and later)
    prefixes: dict[str, str] = field(default_factory=dict)  # signature -> the prefix it was made under
    dropped: int = 0  # blocks dropped on drop_block
    headers: dict[str, str] = field(default_factory=dict)  # the request's being checked

    sent: Any = None  # the request as sent: a block is bound to the prefix the client sent, drops before

    def __call__(self, request: Request) -> Reply:
        self.headers = dict(request.headers)
        self.sent = copy.deepcopy(request.json)
        return super().__call__(request)

    def check(self, body: Any) -> str | None:
        if (problem := self._bound(body)) is not None:
            return problem
        kind = (body.get("thinking") or {}).get("type")
        if kind == "enabled" and self.adaptive_only:
            return ANTHROPIC_BUDGET_GONE
        if kind == "disabled" and self.off != "disabled":
            return ANTHROPIC_CANNOT_DISABLE
        if kind == "between_tools":
            if self.off != "between_tools":
                return ANTHROPIC_BETWEEN_TOOLS.format(why="for this model")
            effort = (body.get("output_config") or {}).get("effort")
            if effort in ("xhigh", "max"):
                return ANTHROPIC_BETWEEN_TOOLS.format(why=f"with effort {effort}")
        thinking = kind in ("enabled", "adaptive")  # between_tools: no thinking before the first tool call
        choice = (body.get("tool_choice") or {}).get("type")
        if thinking and choice in ("any", "tool"):
            return ANTHROPIC_FORCED
        messages = body["messages"]
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            ids = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
            if ids:
                following = messages[i + 1]["content"] if i + 1 < len(messages) else []
                answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
                missing = [x for x in ids if x not in answered]
                if missing:
                    return ANTHROPIC_UNANSWERED.format(i=i, ids=", ".join(missing))
            for j, block in enumerate(message["content"]):
                if block.get("type") == "thinking":
                    if block.get("signature") not in self.signed:
                        return ANTHROPIC_SIGNATURE.format(i=i, j=j)
                    if self.signed[block["signature"]] != block.get("thinking"):
                        return ANTHROPIC_MODIFIED.format(i=i, j=j)
        last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] == "assistant"), None)
        ends_in_results = any(b.get("type") == "tool_result" for b in messages[-1]["content"])
        # a model that cannot turn thinking off is not documented to refuse a loop without it (it drops the
        # thinking of models it cannot read, without an error): this server takes such a loop
        if thinking and self.off != "never" and last is not None and ends_in_results:
            first = messages[last]["content"][0]["type"]
            if first not in ("thinking", "redacted_thinking"):
                return ANTHROPIC_START.format(i=last, found=first)
        return None

    def _bound(self, body: Any) -> str | None:
        """The prefix check: a block whose prefix changed since it was made is refused, or dropped
        from the request under ``drop_block`` (with its beta header). Blocks made before the change
        and after it are valid; those made before it and coming after it are not."""
        binding = (body.get("thinking") or {}).get("block_binding") or {}
        drop = binding.get("prefix_mismatch_behavior") == "drop_block"
        if drop and BINDING_BETA not in self.headers.get("anthropic-beta", "").split(","):
            return ANTHROPIC_BINDING_HEADER
        if not self.binding:
            return None
        sent = self.sent["messages"]
        for i, message in enumerate(body["messages"]):
            kept = []
            for j, block in enumerate(message["content"]):
                made_under = self.prefixes.get(block.get("signature", ""))
                if block.get("type") == "thinking" and made_under not in (None, _prefix(self.sent, sent[:i])):
                    if not drop:
                        return ANTHROPIC_BOUND.format(i=i, j=j)
                    self.dropped += 1
                    continue
                kept.append(block)
            message["content"] = kept
        return None

    def refuse(self, message: str) -> Reply:
        return error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})

    def stream(self, step: Step, body: Any) -> Reply:
        events: list[Any] = [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_strict",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [],
                    "usage": {"input_tokens": 50, "output_tokens": 1},
                },
            }
        ]
        index = 0
        if (body.get("thinking") or {}).get("type") in ("enabled", "adaptive") and step.thinking:
            signature = f"sig-{next(self._ids)}-" + "A" * 24
            self.signed[signature] = step.thinking
            self.prefixes[signature] = _prefix(self.sent, self.sent["messages"])
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
            for piece in _halves(step.thinking):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": piece},
                    }
                )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": signature},
                }
            )
            events.append({"type": "content_block_stop", "index": index})
            index += 1
        if step.text:
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            events.append(
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": step.text}}
            )
            events.append({"type": "content_block_stop", "index": index})
            index += 1
        for name, arguments in step.calls:
            call_id = f"toolu_{next(self._ids):020d}"
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                }
            )
            for piece in _halves(json.dumps(arguments)):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    }
                )
            events.append({"type": "content_block_stop", "index": index})
            index += 1
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if step.calls else "end_turn"},
                "usage": {"output_tokens": 20},
            }
        )
        events.append({"type": "message_stop"})
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]))


# -- Gemini 3 -----------------------------------------------------------------------------------------
GEMINI_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
GEMINI_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of function call parts of "
    "the function call turn."
)
SKIP = "skip_thought_signature_validator"


@dataclass
class StrictGemini(Strict):
    signatures: set[str] = field(default_factory=set)

    def check(self, body: Any) -> str | None:
        contents = body["contents"]
        start = 0
        for i in range(len(contents) - 1, -1, -1):
            parts = contents[i]["parts"]
            if contents[i]["role"] == "user" and any("text" in p for p in parts):
                start = i + 1
                break
        for i, content in enumerate(contents):
            calls = [p for p in content["parts"] if "functionCall" in p]
            if content["role"] != "model" or not calls:
                continue
            if i >= start:
                signature = calls[0].get("thoughtSignature")
                if signature != SKIP and signature not in self.signatures:
                    return GEMINI_SIGNATURE.format(name=calls[0]["functionCall"]["name"], position=i + 1)
            following = contents[i + 1]["parts"] if i + 1 < len(contents) else []
            if len([p for p in following if "functionResponse" in p]) != len(calls):
                return GEMINI_COUNT
        return None

    def refuse(self, message: str) -> Reply:
        return error(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})

    def stream(self, step: Step, body: Any) -> Reply:
        parts: list[dict[str, Any]] = []
        if step.thinking:
            parts.append({"text": step.thinking, "thought": True})
        for k, (name, arguments) in enumerate(step.calls):
            part: dict[str, Any] = {"functionCall": {"name": name, "args": arguments}}
            if k == 0:
                signature = f"CiQB{next(self._ids):08d}sig"
                self.signatures.add(signature)
                part["thoughtSignature"] = signature
            parts.append(part)
        if step.text:
            parts.append({"text": step.text})
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 20, "totalTokenCount": 70},
            "modelVersion": "gemini-3-pro-preview",
        }
        return Reply(body=encode_sse([chunk], done=False))


# -- OpenAI Responses ---------------------------------------------------------------------------------
RESPONSES_REASONING = "Item '{fc}' of type 'function_call' was provided without its required 'reasoning' item: '{rs}'."
RESPONSES_OUTPUT = "No tool call found for function call output with call_id {call_id}."
# An effort the model does not take: OpenAI's wording as openai-agents-python issue 2089 quotes it for
# gpt-5.1 (2025-11-17); GPT-6's values as inspect_ai PR 5254 measured them on the live API (2026-09-04)
RESPONSES_EFFORT = (
    "Unsupported value: '{effort}' is not supported with the '{model}' model. Supported values are: {values}."
)
# sampling while the model reasons: the wording of modelparams.dev PR 356's top_p probe of gpt-6-astra (2026-09-05)
RESPONSES_SAMPLING = "Unsupported parameter: '{name}' is not supported with this model."
GPT6_EFFORTS = ("low", "medium", "high", "xhigh", "max")
RESPONSES_EFFORTS: dict[str, tuple[str, ...]] = {  # the models' pages (GPT-6.2's full list: third parties)
    "gpt-5.4": ("none", "low", "medium", "high", "xhigh"),
    "gpt-6.2-astra": GPT6_EFFORTS,
    "gpt-6.2-sol": GPT6_EFFORTS,
}
# "Starting with GPT-6.2, the Responses API drops reasoning items after mid-conversation edits to the
# conversation history" (OpenAI, "Using GPT-6.2", read 2026-11-28): no error, the model reasons afresh.
# Its prefix is what came before it; GPT-6.2 appends top-level instructions after the input, so they are
# not part of it; a changed reasoning.effort or tool list is (OpenAI, "Keep the prefix unchanged").
DROPS_AFTER_PREFIX_EDIT = ("gpt-6.2-",)
# "GPT-6.2 and later models append top-level instructions after input in the Responses API": a repeated
# prompt is cached when it is a developer message first in input (OpenAI, "Using GPT-6.2", its Japanese
# copy on developers.openai.com, read 2026-11-28; the English one as stored breaks off at the heading)
INSTRUCTIONS_AFTER_INPUT = ("gpt-6.2-",)
# a message part of the wrong kind for its role: OpenAI's words as LangChain.js PR 11169 (2026-07-09) and
# nagobot issue 27 (gpt-5.4, 2026-03-14) quote them
RESPONSES_PART = "Invalid value: '{found}'. Supported values are: {values}."
PART_TYPES = {
    "assistant": ("output_text", "refusal"),
    "user": ("input_text", "input_image", "input_file", "scoped_content"),
}


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values[:-1]) + f", and '{values[-1]}'"


def _responses_prefix(body: Any, items: list[Any]) -> str:
    return json.dumps([body.get("tools"), (body.get("reasoning") or {}).get("effort"), items], sort_keys=True)


def responses_rendered(body: Any) -> list[str]:
    """The request as this server lays it out for its prompt cache, one piece per part: the effort and
    tools, the input items, and the instructions before them or, on GPT-6.2, after them."""
    head = [json.dumps([(body.get("reasoning") or {}).get("effort"), body.get("tools")], sort_keys=True)]
    items = [json.dumps(item, sort_keys=True) for item in body["input"]]
    instructions = [json.dumps({"instructions": body["instructions"]})] if body.get("instructions") else []
    if str(body.get("model", "")).startswith(INSTRUCTIONS_AFTER_INPUT):
        return head + items + instructions
    return head + instructions + items


def _cost(piece: str) -> int:
    """This server's token count for a piece: one per four bytes of its JSON."""
    return max(1, len(piece) // 4)


def responses_part_problem(items: list[Any]) -> str | None:
    """A message part whose type its role does not take (an assistant's is output, the others' input)."""
    for item in items:
        if item.get("type", "message") != "message" or not isinstance(item.get("content"), list):
            continue
        taken = PART_TYPES["assistant" if item.get("role") == "assistant" else "user"]
        for part in item["content"]:
            if part.get("type") not in taken:
                return RESPONSES_PART.format(found=part.get("type"), values=_quoted(taken))
    return None


def responses_parameters(body: Any) -> str | None:
    """A Responses request's parameters against the model's own rules, where the table says them:
    the efforts it takes, and no sampling parameters while it reasons (any effort but none; always,
    on a model without none)."""
    taken = RESPONSES_EFFORTS.get(body.get("model", ""))
    if taken is None:
        return None
    effort = (body.get("reasoning") or {}).get("effort")
    if effort is not None and effort not in taken:
        return RESPONSES_EFFORT.format(effort=effort, model=body["model"], values=_quoted(taken))
    reasons = effort != "none" if effort is not None else "none" not in taken
    sampling = next((name for name in ("temperature", "top_p") if name in body), None)
    if reasons and sampling is not None:
        return RESPONSES_SAMPLING.format(name=sampling)
    return None


@dataclass
class StrictResponses(Strict):
    pairs: dict[str, str] = field(default_factory=dict)  # function_call item id -> its reasoning item id
    encrypted: dict[str, str] = field(default_factory=dict)  # reasoning item id -> encrypted content
    by_call: dict[str, str] = field(default_factory=dict)  # call_id -> its reasoning item id
    degraded: list[str] = field(default_factory=list)  # calls sent back without their reasoning (accepted, worse)
    made_under: dict[str, str] = field(default_factory=dict)  # reasoning item id -> the prefix it followed
    prefix_drops: list[str] = field(default_factory=list)  # reasoning items dropped after a prefix edit (GPT-6.2)
    # the prompt cache: each answered request as rendered, and the pieces each one found cached (no
    # 1,024-token minimum here: every common prefix counts)
    renderings: list[list[str]] = field(default_factory=list)
    cached: list[list[str]] = field(default_factory=list)

    def check(self, body: Any) -> str | None:
        if body.get("store") is not False:
            return "store must be false for this test: reasoning comes back as encrypted content"
        if (problem := responses_parameters(body) or responses_part_problem(body["input"])) is not None:
            return problem
        drops = str(body["model"]).startswith(DROPS_AFTER_PREFIX_EDIT)
        seen_reasoning: set[str] = set()
        lost: set[str] = set()
        calls: set[str] = set()
        for k, item in enumerate(body["input"]):
            kind = item.get("type")
            if kind == "reasoning":
                if self.encrypted.get(item.get("id", "")) != item.get("encrypted_content"):
                    return f"The encrypted content for item {item.get('id')} could not be verified."
                seen_reasoning.add(item["id"])
                made = self.made_under.get(item["id"])
                if drops and made is not None and made != _responses_prefix(body, body["input"][:k]):
                    self.prefix_drops.append(item["id"])
                    lost.add(item["id"])
            elif kind == "function_call":
                calls.add(item["call_id"])
                reasoning = self.by_call.get(item["call_id"])
                if reasoning is not None and (reasoning not in seen_reasoning or reasoning in lost):
                    self.degraded.append(item["call_id"])
                needed = self.pairs.get(item.get("id", ""))
                if needed is not None and needed not in seen_reasoning:
                    return RESPONSES_REASONING.format(fc=item["id"], rs=needed)
            elif kind == "function_call_output" and item["call_id"] not in calls:
                return RESPONSES_OUTPUT.format(call_id=item["call_id"])
        return None

    def refuse(self, message: str) -> Reply:
        code = {
            "Unsupported value": "unsupported_value",
            "Unsupported parameter": "unsupported_parameter",
            "Invalid value": "invalid_value",
        }
        found = next((c for prefix, c in code.items() if message.startswith(prefix)), None)
        return error(400, {"error": {"message": message, "type": "invalid_request_error", "code": found}})

    def cache(self, body: Any) -> tuple[int, int]:
        """The request's input tokens and how many of them the prompt cache had: the longest run of
        leading pieces it shares with a request answered before."""
        pieces = responses_rendered(body)
        hit: list[str] = []
        for earlier in self.renderings:
            common = list(itertools.takewhile(lambda pair: pair[0] == pair[1], zip(pieces, earlier, strict=False)))
            if len(common) > len(hit):
                hit = [piece for piece, _ in common]
        self.renderings.append(pieces)
        self.cached.append(hit)
        return sum(map(_cost, pieces)), sum(map(_cost, hit))

    def stream(self, step: Step, body: Any) -> Reply:
        n = next(self._ids)
        input_tokens, cached_tokens = self.cache(body)
        events: list[Any] = [{"type": "response.created", "response": {"id": f"resp_{n}", "model": body["model"]}}]
        output = 0
        rs = f"rs_{n:012d}"
        # effort none: no reasoning; without the include, reasoning items come without their content
        thinks = bool(step.thinking) and (body.get("reasoning") or {}).get("effort") != "none"
        if thinks:
            done: dict[str, Any] = {"id": rs, "type": "reasoning", "summary": []}
            if "reasoning.encrypted_content" in (body.get("include") or []):
                done["encrypted_content"] = self.encrypted[rs] = f"gAAAA{n:06d}" + "x" * 16
            self.made_under[rs] = _responses_prefix(body, body["input"])
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": output,
                    "item": {"id": rs, "type": "reasoning", "summary": []},
                }
            )
            if (body.get("reasoning") or {}).get("summary"):
                done["summary"] = [{"type": "summary_text", "text": step.thinking}]
                events.append(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": rs,
                        "output_index": output,
                        "summary_index": 0,
                        "delta": step.thinking,
                    }
                )
            events.append({"type": "response.output_item.done", "output_index": output, "item": done})
            output += 1
        for k, (name, arguments) in enumerate(step.calls):
            fc, call_id = f"fc_{n:06d}{k}", f"call_{n:06d}{k}"
            if thinks:
                self.pairs[fc] = rs
                self.by_call[call_id] = rs
            item = {"id": fc, "type": "function_call", "call_id": call_id, "name": name, "arguments": ""}
            events.append({"type": "response.output_item.added", "output_index": output, "item": item})
            text = json.dumps(arguments)
            events.append(
                {"type": "response.function_call_arguments.delta", "item_id": fc, "output_index": output, "delta": text}
            )
            events.append(
                {"type": "response.output_item.done", "output_index": output, "item": {**item, "arguments": text}}
            )
            output += 1
        if step.text:
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": "msg_1",
                    "output_index": output,
                    "content_index": 0,
                    "delta": step.text,
                }
            )
        events.append(
            {
                "type": "response.completed",
                "response": {
                    "id": f"resp_{n}",
                    "status": "completed",
                    "usage": {
                        "input_tokens": input_tokens,
                        "input_tokens_details": {"cached_tokens": cached_tokens},
                        "output_tokens": 20,
                    },
                },
            }
        )
        return Reply(body=encode_sse(events, done=False, event_names=[e["type"] for e in events]))


def _halves(text: str) -> list[str]:
    half = len(text) // 2
    return [piece for piece in (text[:half], text[half:]) if piece]
