"""Google Gemini ``streamGenerateContent``: thought parts and thought signatures.

Parts with ``thought: true`` are thinking. A ``thoughtSignature`` can sit on
any part (a thought, the first answer text, a function call, a trailing empty
text part); it is kept where it was and sent back in the same position, since
Gemini 3 rejects a function call in the history without its signature.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.events import (
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    UsageEvent,
)
from tractui.core.reasoning import map_effort
from tractui.core.settings import Settings
from tractui.core.surrogates import loads
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.errors import describe_error_payload, stream_error
from tractui.providers.models import ModelInfo, gemini_models
from tractui.providers.shape import as_object, count, flag, loads_object, obj, objects, string
from tractui.providers.thinking_back import (
    current_turn_start,
    route_thinking,
    routed_thinking_tokens,
    same_origin,
    thinking_as_text,
)
from tractui.providers.transport import Provider, add_turn, system_text
from tractui.providers.wire import WireMemo

EFFORT_LEVEL = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}
# Google's documented stand-in for a function call whose signature came from another model (Gemini 3)
SKIP_SIGNATURE = "skip_thought_signature_validator"


# -- request ------------------------------------------------------------------
def thinking_config(settings: Settings) -> dict[str, Any] | None:
    """``thinkingConfig``: a budget (``reasoning.maxTokens``, Gemini 2.5) or a level (``reasoning.effort``,
    Gemini 3: mapped onto ``reasoning.efforts`` when the profile lists the levels its model takes).
    Never both: the API refuses a request with a level and a budget."""
    view = settings.view
    if not view.reasoning_enabled or view.reasoning_mode == "none":
        return None
    budget = view.reasoning_max_tokens
    effort = map_effort(view.reasoning_effort, view.reasoning_efforts)
    if budget == 0 or (budget is None and effort == "none"):
        return {"thinkingBudget": 0}
    config: dict[str, Any] = {"includeThoughts": True}
    if budget is not None:
        config["thinkingBudget"] = int(budget)
    elif effort in EFFORT_LEVEL and view.reasoning_mode != "budget":
        config["thinkingLevel"] = EFFORT_LEVEL[effort]
    return config


def checks_signatures(model: str) -> bool:
    """Whether the model refuses a tool-loop step whose first call has no signature: Gemini 3 and
    later. An id it does not recognise counts (an alias such as ``gemini-flash-latest``, a proxy's
    own name, a later Gemini): only the 1.x and 2.x models and Gemma are known not to check."""
    name = model.rsplit("/", 1)[-1].lower()
    return not name.startswith(("gemini-1", "gemini-2", "gemma"))


def _args(arguments: str) -> Any:
    try:
        value = loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _model_parts(
    content: Content, native_ok: bool, model: str, settings: Settings, *, current_turn: bool = False
) -> list[dict[str, Any]]:
    """A model turn's parts; each signature stays on the exact part it came with. A step of a
    tool loop that another model made gets the documented placeholder on its first call, for a
    model that checks signatures (``checks_signatures``)."""
    parts: list[dict[str, Any]] = []
    first_call = True
    for block in content.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"text": block.text})
        elif isinstance(block, ThinkingBlock):
            route = route_thinking(block, native_ok, settings, current_turn=current_turn)
            if route == "text":
                parts.append({"text": thinking_as_text(block)})
            elif route == "native":
                _native_thought(parts, block)
        elif isinstance(block, ToolCallBlock):
            call: dict[str, Any] = {"name": block.name, "args": _args(block.arguments)}
            if block.provider_metadata.get("gemini_id"):
                call["id"] = block.provider_metadata["gemini_id"]
            part: dict[str, Any] = {"functionCall": call}
            signature = block.provider_metadata.get("thought_signature")
            if native_ok and signature:
                part["thoughtSignature"] = signature
            elif not native_ok and first_call and checks_signatures(model):
                part["thoughtSignature"] = SKIP_SIGNATURE
            first_call = False
            parts.append(part)
    return parts


def _native_thought(parts: list[dict[str, Any]], block: ThinkingBlock) -> None:
    """A thought part, or a bare signature put back on the part it came with."""
    if block.thought:
        part: dict[str, Any] = {"text": block.thought, "thought": True}
        if block.signature:
            part["thoughtSignature"] = block.signature
        parts.append(part)
        return
    if not block.signature:
        return
    previous = parts[-1] if parts else None
    if (
        block.provider_metadata.get("gemini_part") == "text"
        and previous is not None
        and "text" in previous
        and not previous.get("thought")
        and "thoughtSignature" not in previous
    ):
        previous["thoughtSignature"] = block.signature
    else:
        parts.append({"text": "", "thoughtSignature": block.signature})


def _user_parts(content: Content, calls: dict[str, ToolCallBlock]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in content.blocks:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"text": block.text})
        elif isinstance(block, ToolResultBlock):
            key = "error" if block.is_error else "result"
            call = calls.get(block.tool_call_id)
            response: dict[str, Any] = {
                "name": call.name if call is not None else block.tool_call_id,
                "response": {key: block.content},
            }
            if call is not None and call.provider_metadata.get("gemini_id"):
                response["id"] = call.provider_metadata["gemini_id"]
            parts.append({"functionResponse": response})
    return parts


def build_contents(
    messages: list[Content], model: str, settings: Settings, wire: WireMemo
) -> tuple[list[dict[str, Any]], list[str]]:
    """Gemini ``contents`` (roles user/model, merged when consecutive) and the system texts;
    each message's turn is kept in ``wire`` for the next request."""
    loop = current_turn_start(messages)
    view = settings.view
    fresh: tuple[list[dict[str, Any]], list[str], dict[str, ToolCallBlock]] = ([], [], {})
    (contents, system, calls), steps = wire.fold(messages, (view, model), loop, fresh)
    for index in steps:
        content = messages[index]
        if content.speaker == "system":
            system.append(content.text)
            continue
        if content.speaker == "ai":
            calls.update({c.id: c for c in content.tool_calls})
            current = index >= loop
            turn = wire.form(content, (view, model, current), partial(_model_turn, content, model, settings, current))
        else:
            # a result names its call: the turn is kept for the calls it answered, as found now
            answered = tuple(calls.get(b.tool_call_id) for b in content.blocks if isinstance(b, ToolResultBlock))
            turn = wire.form(content, answered, partial(_user_turn, content, calls))
        add_turn(contents, turn, "parts")
    return contents, system


def _model_turn(content: Content, model: str, settings: Settings, current_turn: bool) -> dict[str, Any]:
    native_ok = same_origin(content, GeminiProvider.name, model)
    return {"role": "model", "parts": _model_parts(content, native_ok, model, settings, current_turn=current_turn)}


def _user_turn(content: Content, calls: dict[str, ToolCallBlock]) -> dict[str, Any]:
    return {"role": "user", "parts": _user_parts(content, calls)}


# -- stream -------------------------------------------------------------------
def normalise_usage(meta: dict[str, Any], where: str = "usageMetadata") -> Usage:
    """Gemini counts thoughts beside candidates; ours counts them in output.

    Input includes ``toolUsePromptTokenCount`` (what code execution fed back),
    so input + output equals ``totalTokenCount``.
    """
    thoughts = count(meta, "thoughtsTokenCount", where)
    return Usage(
        input_tokens=count(meta, "promptTokenCount", where) + count(meta, "toolUsePromptTokenCount", where),
        output_tokens=count(meta, "candidatesTokenCount", where) + thoughts,
        reasoning_tokens=thoughts,
        cached_input_tokens=count(meta, "cachedContentTokenCount", where),
    )


def _set_path(target: dict[str, Any], path: str, value: Any, append: bool) -> None:
    """Apply one streamed ``partialArgs`` entry (``$.a.b`` paths; strings arrive in pieces)."""
    keys = [k for k in path.removeprefix("$").split(".") if k]
    if not keys:
        return
    node = target
    for key in keys[:-1]:
        node = as_object(node.setdefault(key, {}), f"functionCall.partialArgs {path}")
    last = keys[-1]
    if append and isinstance(node.get(last), str):
        node[last] += value
    else:
        node[last] = value


def _check_part(part: dict[str, Any], where: str) -> None:
    """Every field of a part the parser reads has the type the API gives it (else ``ChunkShapeError``)."""
    string(part, "text", where)
    string(part, "thoughtSignature", where)
    flag(part, "thought", where)
    if "functionCall" not in part:
        return
    call = obj(part, "functionCall", where)
    at = f"{where}.functionCall"
    string(call, "name", at)
    string(call, "id", at)
    flag(call, "willContinue", at)
    for i, entry in enumerate(objects(call, "partialArgs", at)):
        string(entry, "jsonPath", f"{at}.partialArgs[{i}]")
        string(entry, "stringValue", f"{at}.partialArgs[{i}]")


@dataclass
class GeminiParser:
    """``GenerateContentResponse`` chunks to stream events. One instance per response."""

    finish_reason: str | None = None
    response_model: str | None = None
    _usage: Usage | None = None
    _thinking: bool = False
    _tools: int = 0
    _streamed_args: dict[str, Any] | None = None  # Vertex streamFunctionCallArguments in progress

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        return self.feed_chunk(loads_object(data, "response"))

    def feed_chunk(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        if "error" in chunk:
            message, code = describe_error_payload(chunk)
            status = chunk["error"].get("code") if isinstance(chunk["error"], dict) else None
            return [stream_error(status if isinstance(status, int) else None, message, code)]
        model = string(chunk, "modelVersion", "response")
        usage = obj(chunk, "usageMetadata", "response")
        normalised = normalise_usage(usage) if any(k.endswith("TokenCount") for k in usage) else None
        blocked = string(obj(chunk, "promptFeedback", "response"), "blockReason", "response.promptFeedback")
        candidates = objects(chunk, "candidates", "response")
        read: list[tuple[list[dict[str, Any]], str]] = []
        for i, candidate in enumerate(candidates):
            where = f"candidates[{i}]"
            if candidate.get("index", 0) not in (0, None):
                continue
            content = obj(candidate, "content", where)
            parts = objects(content, "parts", f"{where}.content")
            for j, part in enumerate(parts):
                _check_part(part, f"{where}.content.parts[{j}]")
            read.append((parts, string(candidate, "finishReason", where)))
        self.response_model = model or self.response_model
        if normalised is not None:
            self._usage = normalised
        if blocked:
            return [StreamError(kind="bad_request", message=f"Gemini blocked the prompt ({blocked})")]
        events: list[StreamEvent] = []
        for parts, reason in read:
            for part in parts:
                events.extend(self._part(part))
            if reason:
                self.finish_reason = reason
        return events

    def _part(self, part: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        signature = part.get("thoughtSignature")
        if part.get("thought"):
            self._thinking = True
            if part.get("text"):
                events.append(ThinkingDelta(part["text"], "thought"))
            if signature:
                events.append(ThinkingSignature(signature, {"gemini_part": "thought"}))
            return events
        if self._thinking:
            self._thinking = False
            events.append(ThinkingEnd())
        if "functionCall" in part:
            events.extend(self._function_call(part["functionCall"] or {}))
            if signature:
                events.append(ThinkingSignature(signature, {"target": "tool_call"}))
            return events
        text = part.get("text") or ""
        if text:
            events.append(TextDelta(text))
        if signature:
            where = "text" if text else "empty"
            events.append(ThinkingSignature(signature, {"gemini_part": where}))
        return events

    def _function_call(self, call: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if call.get("name"):
            self._tools += 1
            meta = {"gemini_id": call["id"]} if call.get("id") else {}
            call_id = call.get("id") or f"gemini_call_{self._tools}"
            events.append(ToolCallDelta(self._tools - 1, id=call_id, name=call["name"], metadata=meta))
            if "args" in call:
                events.append(ToolCallDelta(self._tools - 1, arguments=json.dumps(call["args"], ensure_ascii=False)))
            elif call.get("willContinue"):
                self._streamed_args = {}
        if self._streamed_args is not None:
            for entry in call.get("partialArgs") or []:
                value = next((entry[k] for k in ("stringValue", "numberValue", "boolValue") if k in entry), None)
                _set_path(self._streamed_args, entry.get("jsonPath") or "", value, isinstance(value, str))
            if not call.get("willContinue") and not call.get("name"):
                events.append(
                    ToolCallDelta(self._tools - 1, arguments=json.dumps(self._streamed_args, ensure_ascii=False))
                )
                self._streamed_args = None
        return events

    def reply_metadata(self) -> dict[str, Any]:
        return {}

    def close(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._streamed_args is not None:  # cut before the terminator: keep what arrived
            events.append(ToolCallDelta(self._tools - 1, arguments=json.dumps(self._streamed_args, ensure_ascii=False)))
            self._streamed_args = None
        if self._thinking:
            self._thinking = False
            events.append(ThinkingEnd())
        if self._usage is not None:
            events.append(UsageEvent(self._usage))
        return events


# -- provider -----------------------------------------------------------------
class GeminiProvider(Provider):
    """POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse."""

    name: ClassVar[str] = "gemini"
    history_key: ClassVar[str] = "contents"
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com"

    def url(self, settings: Settings) -> str:
        return f"{self.base_url}/v1beta/models/{self.config.model}:streamGenerateContent?alt=sse"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": key} if key else {}

    async def list_models(self) -> list[ModelInfo]:
        return await self.fetch_models(
            f"{self.base_url}/v1beta/models", gemini_models, "pageToken", {"pageSize": "1000"}
        )

    def tool_definitions(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters} for t in tools
        ]
        return [{"functionDeclarations": declarations}]

    def build_request(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        contents, system_texts = build_contents(messages, self.config.model, settings, self.wire)
        body: dict[str, Any] = {"contents": contents}
        prompt = system_text(system, settings, system_texts)
        if prompt:
            body["systemInstruction"] = {"parts": [{"text": prompt}]}
        generation: dict[str, Any] = {}
        if settings.view.max_tokens is not None:
            generation["maxOutputTokens"] = settings.view.max_tokens
        if settings.view.temperature is not None:
            generation["temperature"] = settings.view.temperature
        thinking = thinking_config(settings)
        if thinking is not None:
            generation["thinkingConfig"] = thinking
        if generation:
            body["generationConfig"] = generation
        if tools:
            body["tools"] = self.tool_definitions(tools)
        return body

    def thinking_tokens(
        self, message: Content, settings: Settings, counter: TokenCounter, *, current_turn: bool
    ) -> int:
        """As ``_model_parts`` routes each block: Gemini reads thought parts back in every turn
        (its documentation asks for them unchanged and says nothing of dropping them)."""
        native_ok = same_origin(message, self.name, self.config.model)
        return routed_thinking_tokens(
            message, lambda _: native_ok, settings, counter, current_turn=current_turn, native_kept=True
        )

    def new_parser(self, settings: Settings) -> GeminiParser:
        return GeminiParser()
