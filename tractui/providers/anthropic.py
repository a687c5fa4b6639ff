"""Anthropic Messages API: extended thinking with signatures, redacted thinking, tools.

Thinking is asked for with ``thinking: {type: enabled, budget_tokens}``; the
budget must be at least 1024 and below ``max_tokens``, so ``max_tokens`` is
raised when it can be and the request is refused (never sent) when it cannot.
Signed thinking goes back natively only to the model that signed it (see
``thinking_back``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.events import (
    RedactedThinking,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    UsageEvent,
)
from tractui.core.reasoning import lowest_effort, map_effort
from tractui.core.settings import Settings
from tractui.core.surrogates import loads
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.errors import RequestError
from tractui.providers.errors import describe_error_payload, stream_error
from tractui.providers.models import ModelInfo, anthropic_models
from tractui.providers.shape import count, integer, json_text, loads_object, obj, string
from tractui.providers.thinking_back import (
    current_turn_start,
    route_thinking,
    routed_thinking_tokens,
    same_origin,
    thinking_as_text,
)
from tractui.providers.transport import Provider, add_turn, system_text
from tractui.providers.wire import WireMemo

API_VERSION = "2023-06-01"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
BINDING_BETA = "thinking-binding-controls-2026-08-01"
MIN_BUDGET = 1024
DEFAULT_MAX_TOKENS = 8192
ANSWER_ROOM = 4096  # tokens left for the answer when max_tokens is raised above the budget
EFFORT_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768, "max": 32768}
TEMPERATURE_NOTICE = "temperature is not sent while thinking is on (Anthropic requires its default with thinking)"

_TOOL_USE = "tool_use"


# -- request ------------------------------------------------------------------
@dataclass(frozen=True)
class ThinkingPlan:
    """What the settings ask of the API: the budget (None = thinking off) and max_tokens."""

    budget: int | None
    max_tokens: int


def thinking_budget(settings: Settings) -> int | None:
    """A fixed thinking budget (Claude 4.5 and earlier): ``reasoning.mode budget``, or ``auto`` with
    ``reasoning.maxTokens`` set; None means adaptive thinking (or none)."""
    view = settings.view
    if not view.reasoning_enabled or view.reasoning_mode not in ("auto", "budget"):
        return None
    budget = view.reasoning_max_tokens
    if budget is not None:
        return int(budget) if budget > 0 else None
    if view.reasoning_mode == "auto":
        return None
    effort = view.reasoning_effort
    return EFFORT_BUDGET.get(effort) if effort else None


def thinking_param(settings: Settings, budget: int | None) -> dict[str, Any] | None:
    """The request's ``thinking``: adaptive (Claude 4.6 and later; the only kind Opus 4.7 and later
    take), a fixed budget, the model's way of turning it off when reasoning is off
    (``reasoning.off``), or nothing (``reasoning.mode none``)."""
    view = settings.view
    if view.reasoning_mode == "none":
        return None
    if not view.reasoning_enabled and view.reasoning_off != "never":
        return {"type": view.reasoning_off}
    if budget is not None:
        return {"type": "enabled", "budget_tokens": budget}
    if view.reasoning_mode == "budget":
        return None  # budget mode without a budget: the model's default
    param: dict[str, Any] = {"type": "adaptive"}
    if view.reasoning_display != "auto":
        param["display"] = view.reasoning_display
    return param


def output_config(settings: Settings) -> dict[str, Any] | None:
    """``output_config.effort`` for adaptive thinking, mapped onto the efforts the model takes;
    the lowest it takes when reasoning is off on a model that cannot turn it off."""
    view = settings.view
    if view.reasoning_mode not in ("auto", "adaptive"):
        return None
    if not view.reasoning_enabled:
        return {"effort": lowest_effort(view.reasoning_efforts)} if view.reasoning_off == "never" else None
    effort = map_effort(view.reasoning_effort, view.reasoning_efforts)
    if effort is None or effort == "none":
        return None
    return {"effort": effort}


def plan_thinking(settings: Settings) -> ThinkingPlan:
    """Apply the budget rule; raises ``RequestError`` for a request the API would reject."""
    user_max = settings.view.max_tokens
    cap = settings.view.max_output
    max_tokens = int(user_max or cap or DEFAULT_MAX_TOKENS)
    budget = thinking_budget(settings)
    if budget is None:
        return ThinkingPlan(None, max_tokens)
    if budget < MIN_BUDGET:
        raise RequestError(
            f"reasoning.maxTokens is {budget}: Anthropic needs a thinking budget of at least {MIN_BUDGET} tokens"
        )
    if budget >= max_tokens:
        if cap is not None and budget >= cap:
            raise RequestError(
                f"reasoning.maxTokens ({budget}) must be below the model's max-output ({cap}): lower the budget or raise max-output"
            )
        max_tokens = budget + int(user_max or ANSWER_ROOM)
        if cap is not None:
            max_tokens = min(max_tokens, int(cap))
    return ThinkingPlan(budget, max_tokens)


def _tool_input(arguments: str) -> Any:
    """The model's raw JSON arguments as an object (``""`` is a call without arguments)."""
    try:
        value = loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _assistant_blocks(
    content: Content, native_ok: bool, settings: Settings, *, current_turn: bool = False
) -> list[dict[str, Any]]:
    """An assistant message's blocks; in a tool loop its own thinking goes first, byte for byte,
    signatures intact (empty thinking whose display was omitted included)."""
    out: list[dict[str, Any]] = []
    for block in content.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            signed = native_ok and (block.is_hidden or bool(block.signature))
            route = route_thinking(block, signed, settings, current_turn=current_turn)
            if route == "native":
                if block.is_hidden:
                    out.append({"type": "redacted_thinking", "data": block.provider_metadata.get("data", "")})
                else:
                    out.append({"type": "thinking", "thinking": block.thought, "signature": block.signature})
            elif route == "text":
                out.append({"type": "text", "text": thinking_as_text(block)})
        # server tools (web search, code execution, MCP) ran on Anthropic's side: their calls
        # and results stay in our history but are not replayed
        elif isinstance(block, ToolCallBlock) and block.provider_metadata.get("anthropic_type", _TOOL_USE) == _TOOL_USE:
            out.append({"type": "tool_use", "id": block.id, "name": block.name, "input": _tool_input(block.arguments)})
    return out


def _user_blocks(content: Content) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content.blocks:
        if isinstance(block, TextBlock) and block.text:
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolResultBlock):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": block.tool_call_id,
                "content": block.content,
            }
            if block.is_error:
                result["is_error"] = True
            out.append(result)
    return out


# models that drop earlier turns' thinking on Anthropic's side: Claude 3 and 4, and the 5.0 models
_DROPS_EARLIER_THINKING = re.compile(r"claude-(3.*|[a-z]+-4.*|[a-z]+-5(-\d{8})?|mythos-preview.*)")


def keeps_earlier_thinking(model: str) -> bool:
    """Preserved thinking: from Claude Fable 5.1 on (Opus 5.5, Sonnet 5.5, Haiku 5.5 and later),
    earlier turns' thinking blocks sent back stay in the model's context, billed as input;
    older models drop them. An id of neither kind counts as keeping: a gauge that errs, errs high."""
    return _DROPS_EARLIER_THINKING.fullmatch(model) is None


def binds_thinking(model: str) -> bool:
    """A Claude model with preserved thinking, whose earlier blocks are bound to what came before
    them: a block made under another system prompt, tool list or history is dropped, asked by
    ``thinking.block_binding.prefix_mismatch_behavior: "drop_block"`` — without it, the request is
    refused with "The block is bound to a different conversation", and again at every later turn
    while the block is in the history."""
    return model.startswith("claude-") and keeps_earlier_thinking(model)


def off_note(settings: Settings) -> str | None:
    """What is sent instead when reasoning is off on a model that cannot turn thinking off."""
    view = settings.view
    if view.reasoning_enabled or view.reasoning_off != "never" or view.reasoning_mode == "none":
        return None
    return f"this model cannot turn thinking off (reasoning.off never): it thinks at effort {lowest_effort(view.reasoning_efforts)}"


def _thinks(thinking: dict[str, Any] | None) -> bool:
    return thinking is not None and thinking["type"] != "disabled"


def loop_lacks_thinking(converted: list[dict[str, Any]]) -> bool:
    """A tool loop whose last assistant message has no thinking block to start with (its steps
    came from another model, or from a request without thinking): Anthropic refuses such a
    history with thinking on ("Expected `thinking` or `redacted_thinking`, but found `tool_use`"),
    so the request goes with thinking off (``reasoning.off``) until the loop ends; a model that
    cannot turn it off is sent the loop as it is."""
    if not converted or converted[-1]["role"] != "user":
        return False
    if not any(b.get("type") == "tool_result" for b in converted[-1]["content"]):
        return False
    last = next((m for m in reversed(converted) if m["role"] == "assistant"), None)
    if last is None or not last["content"]:
        return False
    return last["content"][0].get("type") not in ("thinking", "redacted_thinking")


def build_messages(
    messages: list[Content], model: str, settings: Settings, wire: WireMemo
) -> tuple[list[dict[str, Any]], list[str]]:
    """Anthropic ``messages`` and the system texts found in the history.

    Consecutive messages of one role are merged and empty ones skipped, since
    the API rejects empty content and expects alternating roles. Each message's
    turn is kept in ``wire`` for the next request.
    """
    loop = current_turn_start(messages)
    view = settings.view
    fresh: tuple[list[dict[str, Any]], list[str]] = ([], [])
    (out, system), steps = wire.fold(messages, (view, model), loop, fresh)
    for index in steps:
        content = messages[index]
        if content.speaker == "system":
            system.append(content.text)
            continue
        if content.speaker == "ai":
            current = index >= loop
            turn = wire.form(
                content, (view, model, current), partial(_assistant_turn, content, model, settings, current)
            )
        else:
            turn = wire.form(content, "user", partial(_user_turn, content))
        add_turn(out, turn, "content")
    return out, system


def _assistant_turn(content: Content, model: str, settings: Settings, current_turn: bool) -> dict[str, Any]:
    native_ok = same_origin(content, AnthropicProvider.name, model)
    return {"role": "assistant", "content": _assistant_blocks(content, native_ok, settings, current_turn=current_turn)}


def _user_turn(content: Content) -> dict[str, Any]:
    return {"role": "user", "content": _user_blocks(content)}


# -- stream -------------------------------------------------------------------
def normalise_usage(raw: dict[str, Any], where: str = "usage") -> Usage:
    """Anthropic counts cache reads and writes beside ``input_tokens``; ours includes them."""
    cached = count(raw, "cache_read_input_tokens", where)
    written = count(raw, "cache_creation_input_tokens", where)
    details = obj(raw, "output_tokens_details", where)
    return Usage(
        input_tokens=count(raw, "input_tokens", where) + cached + written,
        output_tokens=count(raw, "output_tokens", where),
        reasoning_tokens=count(details, "thinking_tokens", where),
        cached_input_tokens=cached,
        cache_write_tokens=written,
    )


@dataclass
class AnthropicParser:
    """Messages API SSE events to stream events. One instance per response."""

    finish_reason: str | None = None
    response_model: str | None = None
    _usage: dict[str, Any] = field(default_factory=dict)
    _kinds: dict[int, str] = field(default_factory=dict)  # block index -> block type
    _tools: dict[str, int] = field(default_factory=dict)  # tool id -> block index
    _thought: set[int] = field(default_factory=set)  # thinking blocks that streamed text

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        payload = loads_object(data, "event")
        kind = string(payload, "type", "event") or event
        handler = _HANDLERS.get(kind)
        return handler(self, payload) if handler else []

    def reply_metadata(self) -> dict[str, Any]:
        return {}

    def close(self) -> list[StreamEvent]:
        return []

    # -- handlers -------------------------------------------------------------
    def _message_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        message = obj(payload, "message", "message_start")
        model = string(message, "model", "message_start.message")
        events = self._merge_usage(obj(message, "usage", "message_start.message"), "message_start.message.usage")
        self.response_model = model or self.response_model
        return events

    def _merge_usage(self, usage: dict[str, Any], where: str) -> list[StreamEvent]:
        if not usage:
            return []
        merged = {**self._usage, **{k: v for k, v in usage.items() if v is not None}}
        normalised = normalise_usage(merged, where)
        self._usage = merged
        return [UsageEvent(normalised)]

    def _block_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = integer(payload, "index", "content_block_start") or 0
        where = "content_block_start.content_block"
        block = obj(payload, "content_block", "content_block_start")
        kind = string(block, "type", where)
        if kind == "thinking":
            thought = string(block, "thinking", where)
            self._kinds[index] = kind
            if not thought:
                return []
            self._thought.add(index)
            return [ThinkingDelta(thought, "thinking")]
        if kind == "redacted_thinking":
            data = string(block, "data", where)
            self._kinds[index] = kind
            return [RedactedThinking(data, "thinking")]
        if kind == "text":
            answer = string(block, "text", where)
            self._kinds[index] = kind
            return [TextDelta(answer)] if answer else []
        if "id" in block and "name" in block:  # tool_use, server_tool_use, mcp_tool_use
            call_id, name = string(block, "id", where), string(block, "name", where)
            server = string(block, "server_name", where)
            arguments = json_text(block, "input", where)
            self._kinds[index] = kind
            self._tools[call_id] = index
            meta: dict[str, Any] = {"anthropic_type": kind}
            if server:
                meta["server_name"] = server
            events: list[StreamEvent] = [ToolCallDelta(index, id=call_id, name=name, metadata=meta)]
            if arguments:
                events.append(ToolCallDelta(index, arguments=arguments))
            return events
        owner = self._tools.get(string(block, "tool_use_id", where))
        self._kinds[index] = kind
        if owner is not None:  # a server tool's result: kept with its call, never lost
            return [ToolCallDelta(owner, metadata={"anthropic_result": block})]
        return []

    def _block_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = integer(payload, "index", "content_block_delta") or 0
        where = "content_block_delta.delta"
        delta = obj(payload, "delta", "content_block_delta")
        kind = string(delta, "type", where)
        if kind == "thinking_delta":
            thought = string(delta, "thinking", where)
            if not thought:
                return []
            self._thought.add(index)
            return [ThinkingDelta(thought, "thinking")]
        if kind == "text_delta":
            answer = string(delta, "text", where)
            return [TextDelta(answer)] if answer else []
        if kind == "signature_delta":
            # a block with no visible thought (display omitted) starts its own thinking block
            meta = {} if index in self._thought else {"source_field": "thinking"}
            return [ThinkingSignature(string(delta, "signature", where), meta)]
        if kind == "input_json_delta":
            partial = string(delta, "partial_json", where)
            return [ToolCallDelta(index, arguments=partial)] if partial else []
        return []

    def _block_stop(self, payload: dict[str, Any]) -> list[StreamEvent]:
        kind = self._kinds.get(integer(payload, "index", "content_block_stop") or 0)
        return [ThinkingEnd()] if kind == "thinking" else []

    def _message_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        reason = string(obj(payload, "delta", "message_delta"), "stop_reason", "message_delta.delta")
        events = self._merge_usage(obj(payload, "usage", "message_delta"), "message_delta.usage")
        if reason:
            self.finish_reason = reason
        return events

    def _error(self, payload: dict[str, Any]) -> list[StreamEvent]:
        message, code = describe_error_payload(payload)
        return [stream_error(None, message, code)]


_HANDLERS = {
    "message_start": AnthropicParser._message_start,
    "content_block_start": AnthropicParser._block_start,
    "content_block_delta": AnthropicParser._block_delta,
    "content_block_stop": AnthropicParser._block_stop,
    "message_delta": AnthropicParser._message_delta,
    "error": AnthropicParser._error,
}


# -- provider -----------------------------------------------------------------
class AnthropicProvider(Provider):
    """POST {base_url}/v1/messages with ``stream: true``."""

    name: ClassVar[str] = "anthropic"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"

    def url(self, settings: Settings) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def extra_headers(self, settings: Settings) -> dict[str, str]:
        betas = [INTERLEAVED_BETA] if thinking_budget(settings) is not None else []
        if self._binding(thinking_param(settings, thinking_budget(settings))):
            betas.append(BINDING_BETA)
        return {"anthropic-beta": ",".join(betas)} if betas else {}

    def _binding(self, thinking: dict[str, Any] | None) -> bool:
        """Ask for blocks whose prefix changed to be dropped (``binds_thinking``): with adaptive thinking only."""
        return thinking is not None and thinking["type"] == "adaptive" and binds_thinking(self.config.model)

    async def list_models(self) -> list[ModelInfo]:
        return await self.fetch_models(f"{self.base_url}/v1/models", anthropic_models, "after_id", {"limit": "1000"})

    def tool_definitions(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]

    def build_request(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        plan = plan_thinking(settings)
        converted, system_texts = build_messages(messages, self.config.model, settings, self.wire)
        body: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": plan.max_tokens,
            "messages": converted,
            "stream": True,
        }
        prompt = system_text(system, settings, system_texts)
        if prompt:
            body["system"] = prompt
        if tools:
            body["tools"] = self.tool_definitions(tools)
        thinking = thinking_param(settings, plan.budget)
        off = settings.view.reasoning_off
        if thinking is not None and thinking["type"] != off and off != "never" and loop_lacks_thinking(converted):
            thinking = {"type": off}
        if self._binding(thinking):
            thinking = {**(thinking or {}), "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
        if thinking is not None:
            body["thinking"] = thinking
        if (config := output_config(settings)) is not None and thinking and thinking["type"] == "adaptive":
            body["output_config"] = config
        if settings.view.temperature is not None and not _thinks(thinking):
            body["temperature"] = settings.view.temperature
        return body

    def thinking_tokens(
        self, message: Content, settings: Settings, counter: TokenCounter, *, current_turn: bool
    ) -> int:
        """As ``_assistant_blocks`` routes each block: earlier turns' thinking blocks count only
        on models that keep them (``keeps_earlier_thinking``); thinking sent as text stays."""
        native_ok = same_origin(message, self.name, self.config.model)
        return routed_thinking_tokens(
            message,
            lambda b: native_ok and (b.is_hidden or bool(b.signature)),
            settings,
            counter,
            current_turn=current_turn,
            native_kept=keeps_earlier_thinking(self.config.model),
        )

    def notices(self, settings: Settings) -> list[str]:
        notes = self.note_once(note) if (note := off_note(settings)) else []
        if settings.view.temperature is None or not _thinks(thinking_param(settings, thinking_budget(settings))):
            return notes
        return notes + self.note_once(TEMPERATURE_NOTICE)

    def new_parser(self, settings: Settings) -> AnthropicParser:
        return AnthropicParser()
