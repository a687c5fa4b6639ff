"""OpenAI Responses API: reasoning summaries, encrypted reasoning kept opaque.

Requests are stateless (``store: false``) and ask for
``reasoning.encrypted_content``, so each reasoning item comes back with an
opaque payload that is re-sent as an input item on later turns: the model
sees its own reasoning again without the server keeping anything. The system
prompt goes as ``instructions`` or, with ``system-prompt-as developer``, as a
developer message first in ``input``: GPT-6.2 and later put ``instructions``
after the input, where the prompt cache does not reach it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.events import (
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
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.errors import describe_error_payload, stream_error
from tractui.providers.shape import count, json_text, loads_object, obj, string
from tractui.providers.thinking_back import (
    current_turn_start,
    route_thinking,
    routed_thinking_tokens,
    same_origin,
    thinking_as_text,
)
from tractui.providers.transport import Provider, system_text
from tractui.providers.wire import WireMemo

SUMMARY_SEPARATOR = "\n\n"  # summary parts are separate paragraphs
BILLED_REASONING = "reasoning_tokens"  # reply metadata: what the encrypted reasoning costs when it goes back
TEMPERATURE_NOTICE = "temperature is not sent while reasoning is on (OpenAI reasoning models reject it)"


# -- request ------------------------------------------------------------------
def reasoning_param(settings: Settings) -> dict[str, Any] | None:
    """``reasoning``: the effort (mapped onto ``reasoning.efforts``) and the summary detail. With
    reasoning off: ``effort: none`` where the model takes it (GPT-5.1 to 5.6); on a model that
    cannot turn it off (GPT-6.2: its efforts have no ``none``, or ``reasoning.off never``) the
    lowest effort it takes, as with reasoning on; nothing when no effort list says either."""
    view = settings.view
    if view.reasoning_mode == "none":
        return None
    if view.reasoning_enabled:
        effort = map_effort(view.reasoning_effort, view.reasoning_efforts)
    elif (effort := off_effort(settings)) in (None, "none"):
        return {"effort": "none"} if effort else None
    param: dict[str, Any] = {}
    if effort:
        param["effort"] = effort
    if settings.view.reasoning_summary != "none":
        param["summary"] = settings.view.reasoning_summary
    return param


def reasons(param: dict[str, Any] | None) -> bool:
    """Whether a request with this ``reasoning`` has the model reason: OpenAI takes sampling
    parameters only without reasoning (effort ``none``, or no reasoning parameter at all)."""
    return param is not None and param.get("effort") != "none"


def off_effort(settings: Settings) -> str | None:
    """The effort that stands for reasoning off: ``none`` where the model takes it, the lowest it
    takes where it cannot turn reasoning off, None (send nothing) when no list says."""
    view = settings.view
    efforts = view.reasoning_efforts
    if view.reasoning_off != "never" and (not efforts or "none" in efforts):
        return "none" if efforts else None
    return lowest_effort(efforts)


def off_note(settings: Settings) -> str | None:
    """What is sent instead when reasoning is off on a model that cannot turn it off."""
    view = settings.view
    if view.reasoning_enabled or view.reasoning_mode == "none" or off_effort(settings) in (None, "none"):
        return None
    why = "reasoning.off never" if view.reasoning_off == "never" else "reasoning.efforts has no none"
    return f"this model cannot turn reasoning off ({why}): it reasons at effort {off_effort(settings)}"


def _reasoning_item(block: ThinkingBlock) -> dict[str, Any]:
    meta = block.provider_metadata
    item: dict[str, Any] = {"type": "reasoning", "encrypted_content": meta["encrypted_content"]}
    if meta.get("item_id"):
        item["id"] = meta["item_id"]
    item["summary"] = [{"type": "summary_text", "text": block.thought}] if block.thought else []
    return item


def _assistant_items(
    content: Content, native_ok: bool, settings: Settings, *, current_turn: bool = False
) -> list[dict[str, Any]]:
    """An assistant message as output items; in a tool loop each reasoning item (its encrypted
    content) goes back right before the function call it led to, as the API requires."""
    items: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []

    def flush() -> None:
        if texts:
            items.append({"type": "message", "role": "assistant", "content": list(texts)})
            texts.clear()

    for block in content.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                texts.append({"type": "output_text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            signed = native_ok and bool(block.provider_metadata.get("encrypted_content"))
            route = route_thinking(block, signed, settings, current_turn=current_turn)
            if route == "native":
                flush()
                items.append(_reasoning_item(block))
            elif route == "text":
                texts.append({"type": "output_text", "text": thinking_as_text(block)})
        elif isinstance(block, ToolCallBlock):
            flush()
            call = {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": block.arguments or "{}",
            }
            item_id = block.provider_metadata.get("item_id")
            if current_turn and native_ok and isinstance(item_id, str) and item_id:  # its reasoning item goes too
                call["id"] = item_id
            items.append(call)
    flush()
    return items


def build_input(
    messages: list[Content], model: str, settings: Settings, wire: WireMemo, system: str | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Responses ``input`` items and the system texts left for ``instructions``; each message's
    items are kept in ``wire`` for the next request. With ``system-prompt-as developer`` the
    system prompt (the caller's or the setting's) is the first item and the history's system
    messages stay where they are, as developer messages: the prefix a prompt cache matches
    does not change when one is added later."""
    loop = current_turn_start(messages)
    view = settings.view
    developer = view.system_prompt_as == "developer"
    first = (system or view.system_prompt) if developer else ""
    fresh: tuple[list[dict[str, Any]], list[str]] = ([_developer_item(first)] if first else [], [])
    (items, found), steps = wire.fold(messages, (view, model, first), loop, fresh)
    for index in steps:
        content = messages[index]
        match content.speaker:
            case "system" if developer:
                if content.text:
                    items.append(wire.form(content, "developer", partial(_developer_item, content.text)))
            case "system":
                found.append(content.text)
            case "ai":
                current = index >= loop
                items.extend(
                    wire.form(
                        content, (view, model, current), partial(_assistant_of, content, model, settings, current)
                    )
                )
            case "human" | "tool":
                items.extend(wire.form(content, "user", partial(_user_items, content)))
    return items, found


def _developer_item(text: str) -> dict[str, Any]:
    return {"role": "developer", "content": [{"type": "input_text", "text": text}]}


def _assistant_of(content: Content, model: str, settings: Settings, current_turn: bool) -> list[dict[str, Any]]:
    native_ok = same_origin(content, OpenAIResponsesProvider.name, model)
    return _assistant_items(content, native_ok, settings, current_turn=current_turn)


def _user_items(content: Content) -> list[dict[str, Any]]:
    parts = [{"type": "input_text", "text": b.text} for b in content.blocks if isinstance(b, TextBlock) and b.text]
    items: list[dict[str, Any]] = [{"role": "user", "content": parts}] if parts else []
    items.extend(
        {"type": "function_call_output", "call_id": b.tool_call_id, "output": b.content}
        for b in content.blocks
        if isinstance(b, ToolResultBlock)
    )
    return items


# -- stream -------------------------------------------------------------------
def normalise_usage(raw: dict[str, Any], where: str = "response.usage") -> Usage:
    """Responses usage already has our meaning: cached inside input, reasoning inside output."""
    return Usage(
        input_tokens=count(raw, "input_tokens", where),
        output_tokens=count(raw, "output_tokens", where),
        reasoning_tokens=count(obj(raw, "output_tokens_details", where), "reasoning_tokens", where),
        cached_input_tokens=count(obj(raw, "input_tokens_details", where), "cached_tokens", where),
    )


@dataclass
class _ReasoningItem:
    summary_parts: int = 0
    wrote: bool = False  # any thinking text emitted for this item


@dataclass
class ResponsesParser:
    """Responses API stream events to stream events. One instance per response."""

    finish_reason: str | None = None
    response_model: str | None = None
    _reasoning: dict[str, _ReasoningItem] = field(default_factory=dict)  # item id -> state
    _calls: dict[str, int] = field(default_factory=dict)  # function_call item id -> tool index
    _call_args: set[str] = field(default_factory=set)  # calls whose arguments streamed
    _failed: bool = False
    _encrypted: bool = False  # a reasoning item came with its encrypted content
    _billed: int | None = None  # reasoning tokens the usage reported

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        payload = loads_object(data, "event")
        kind = string(payload, "type", "event") or event
        handler = _HANDLERS.get(kind)
        return handler(self, payload) if handler else []

    def reply_metadata(self) -> dict[str, Any]:
        return {BILLED_REASONING: self._billed} if self._encrypted and self._billed is not None else {}

    def close(self) -> list[StreamEvent]:
        return []

    def _item(self, payload: dict[str, Any]) -> _ReasoningItem:
        return self._reasoning.setdefault(_item_id(payload, "item_id", "event"), _ReasoningItem())

    # -- handlers -------------------------------------------------------------
    def _created(self, payload: dict[str, Any]) -> list[StreamEvent]:
        model = string(obj(payload, "response", "event"), "model", "event.response")
        self.response_model = model or self.response_model
        return []

    def _item_added(self, payload: dict[str, Any]) -> list[StreamEvent]:
        item = obj(payload, "item", "event")
        kind = string(item, "type", "event.item")
        item_id = _item_id(item, "id", "event.item")
        if kind == "reasoning":
            self._reasoning.setdefault(item_id, _ReasoningItem())
        elif kind == "function_call":
            call_id = _item_id(item, "call_id", "event.item")
            name = string(item, "name", "event.item")
            index = len(self._calls)
            self._calls[item_id] = index
            meta = {"item_id": item_id} if item_id else {}
            return [ToolCallDelta(index, id=call_id or item_id or f"call_{index}", name=name, metadata=meta)]
        return []

    def _summary_part(self, payload: dict[str, Any]) -> list[StreamEvent]:
        state = self._item(payload)
        state.summary_parts += 1
        if state.summary_parts > 1 and state.wrote:
            return [ThinkingDelta(SUMMARY_SEPARATOR, "summary")]
        return []

    def _summary_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        text = string(payload, "delta", "event")
        if not text:
            return []
        state = self._item(payload)
        state.summary_parts = max(state.summary_parts, 1)
        state.wrote = True
        return [ThinkingDelta(text, "summary")]

    def _reasoning_text_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        text = string(payload, "delta", "event")
        state = self._item(payload)
        if not text or state.summary_parts:  # raw reasoning only stands in when there is no summary
            return []
        state.wrote = True
        return [ThinkingDelta(text, "reasoning")]

    def _text_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        text = string(payload, "delta", "event")
        return [TextDelta(text)] if text else []

    def _args_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        item_id = _item_id(payload, "item_id", "event")
        delta = string(payload, "delta", "event")
        index = self._calls.get(item_id)
        if index is None or not delta:
            return []
        self._call_args.add(item_id)
        return [ToolCallDelta(index, arguments=delta)]

    def _args_done(self, payload: dict[str, Any], where: str = "event") -> list[StreamEvent]:
        item_id = _item_id(payload, "item_id", where)
        arguments = json_text(payload, "arguments", where)
        index = self._calls.get(item_id)
        if index is None or item_id in self._call_args or not arguments:
            return []
        self._call_args.add(item_id)  # LM Studio sends arguments only here
        return [ToolCallDelta(index, arguments=arguments)]

    def _item_done(self, payload: dict[str, Any]) -> list[StreamEvent]:
        item = obj(payload, "item", "event")
        kind = string(item, "type", "event.item")
        if kind == "function_call":
            return self._args_done({"item_id": item.get("id"), "arguments": item.get("arguments")}, "event.item")
        if kind != "reasoning":
            return []
        item_id = _item_id(item, "id", "event.item")
        encrypted = string(item, "encrypted_content", "event.item")
        events: list[StreamEvent] = []
        if encrypted:
            self._encrypted = True
            meta = {"encrypted_content": encrypted, "item_id": item.get("id")}
            if not self._reasoning.get(item_id, _ReasoningItem()).wrote:
                meta["source_field"] = "summary"  # hidden reasoning: a block of its own
            events.append(ThinkingSignature(None, meta))
        return [*events, ThinkingEnd()]

    def _completed(self, payload: dict[str, Any]) -> list[StreamEvent]:
        response = obj(payload, "response", "event")
        model = string(response, "model", "event.response")
        status = string(response, "status", "event.response") or "completed"
        reason = string(
            obj(response, "incomplete_details", "event.response"), "reason", "event.response.incomplete_details"
        )
        usage = obj(response, "usage", "event.response")
        events: list[StreamEvent] = []
        if usage:
            normalised = normalise_usage(usage)
            self._billed = normalised.reasoning_tokens
            events.append(UsageEvent(normalised))
        self.response_model = model or self.response_model
        self.finish_reason = reason or ("tool_calls" if self._calls else status)
        return events

    def _failed_event(self, payload: dict[str, Any]) -> list[StreamEvent]:
        if self._failed:  # the `error` event already said it
            return []
        self._failed = True
        response = payload.get("response")
        error = (
            payload.get("error")
            or (response.get("error") if isinstance(response, dict) else None)
            or {"message": "the response failed"}
        )
        message, code = describe_error_payload({"error": error})
        return [stream_error(None, message, code)]


def _item_id(parent: dict[str, Any], key: str, where: str) -> str:
    """An item or call id: a string (numbers, as some servers send, read as their digits)."""
    value = parent.get(key)
    if type(value) is int:
        return str(value)
    return string(parent, key, where)


_HANDLERS = {
    "response.created": ResponsesParser._created,
    "response.output_item.added": ResponsesParser._item_added,
    "response.reasoning_summary_part.added": ResponsesParser._summary_part,
    "response.reasoning_summary_text.delta": ResponsesParser._summary_delta,
    "response.reasoning_text.delta": ResponsesParser._reasoning_text_delta,
    "response.output_text.delta": ResponsesParser._text_delta,
    "response.function_call_arguments.delta": ResponsesParser._args_delta,
    "response.function_call_arguments.done": ResponsesParser._args_done,
    "response.output_item.done": ResponsesParser._item_done,
    "response.completed": ResponsesParser._completed,
    "response.incomplete": ResponsesParser._completed,
    "response.failed": ResponsesParser._failed_event,
    "error": ResponsesParser._failed_event,
}


# -- provider -----------------------------------------------------------------
class OpenAIResponsesProvider(Provider):
    """POST {base_url}/responses with ``stream: true`` and ``store: false``."""

    name: ClassVar[str] = "openai-responses"
    history_key: ClassVar[str] = "input"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"

    def url(self, settings: Settings) -> str:
        return f"{self.base_url}/responses"

    def tool_definitions(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        return [
            {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}
            for t in tools
        ]

    def build_request(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        items, found = build_input(messages, self.config.model, settings, self.wire, system)
        body: dict[str, Any] = {"model": self.config.model, "input": items, "stream": True, "store": False}
        if settings.view.system_prompt_as == "instructions" and (prompt := system_text(system, settings, found)):
            body["instructions"] = prompt
        reasoning = reasoning_param(settings)
        if reasoning is not None:
            body["reasoning"] = reasoning
            body["include"] = ["reasoning.encrypted_content"]
        if settings.view.temperature is not None and not reasons(reasoning):
            body["temperature"] = settings.view.temperature
        if settings.view.max_tokens is not None:
            body["max_output_tokens"] = settings.view.max_tokens
        if tools:
            body["tools"] = self.tool_definitions(tools)
        return body

    def thinking_tokens(
        self, message: Content, settings: Settings, counter: TokenCounter, *, current_turn: bool
    ) -> int:
        """As ``_assistant_items`` routes each block: reasoning items of earlier turns are
        discarded by the model (only a tool loop in progress reads its own, at the reasoning
        tokens billed for it: the summary shown is shorter); thinking sent as text stays."""
        native_ok = same_origin(message, self.name, self.config.model)
        billed = message.metadata.get(BILLED_REASONING)
        return routed_thinking_tokens(
            message,
            lambda b: native_ok and bool(b.provider_metadata.get("encrypted_content")),
            settings,
            counter,
            current_turn=current_turn,
            native_kept=False,
            native_cost=billed if type(billed) is int else None,
        )

    def notices(self, settings: Settings) -> list[str]:
        notes = self.note_once(note) if (note := off_note(settings)) else []
        if settings.view.temperature is None or not reasons(reasoning_param(settings)):
            return notes
        return notes + self.note_once(TEMPERATURE_NOTICE)

    def new_parser(self, settings: Settings) -> ResponsesParser:
        return ResponsesParser()
