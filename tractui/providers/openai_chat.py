"""OpenAI-compatible Chat Completions: OpenAI, DeepSeek, Kimi, OpenRouter, Groq, xAI, vLLM, llama.cpp, Ollama.

One protocol, many dialects. Thinking arrives in ``delta.reasoning_content``
(DeepSeek, Qwen, Kimi, llama.cpp), ``delta.reasoning`` (OpenRouter, Groq,
Ollama), OpenRouter's ``reasoning_details`` (often mirroring the plain field,
so only one is rendered) or as ``<think>`` tags inside ``delta.content``.
Usage may arrive in the finish chunk, a trailing ``choices: []`` chunk, twice,
or only under ``x_groq``; the last one seen wins and is normalised once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import Any

from tractui.core.content import Content, SourceField, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.events import (
    RedactedThinking,
    StreamError,
    StreamEvent,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingSignature,
    ToolCallDelta,
    UsageEvent,
)
from tractui.core.reasoning import THOUGHT, map_effort, thinking_to_reasoning_field
from tractui.core.settings import Settings
from tractui.core.surrogates import without_surrogates
from tractui.core.tags import ThinkTagExtractor, tag_pairs
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.errors import describe_error_payload, stream_error
from tractui.providers.shape import (
    as_object,
    as_text,
    count,
    integer,
    json_text,
    obj,
    objects,
    string,
    wrong,
)
from tractui.providers.thinking_back import current_turn_start
from tractui.providers.transport import Provider, StreamParser

_loads = json.loads


def normalise_usage(raw: dict[str, Any], where: str = "usage") -> Usage:
    """Chat Completions usage in our one meaning (input incl. cached, output incl. reasoning).

    xAI reports ``completion_tokens`` without reasoning; it shows as
    ``prompt + completion + reasoning == total``, and the reasoning is added back.
    """
    prompt = count(raw, "prompt_tokens", where)
    completion = count(raw, "completion_tokens", where)
    total = raw.get("total_tokens")
    details = obj(raw, "completion_tokens_details", where)
    reasoning = count(details, "reasoning_tokens", where) or count(raw, "reasoning_tokens", where)
    prompt_details = obj(raw, "prompt_tokens_details", where)
    cached = (
        count(prompt_details, "cached_tokens", where)
        or count(raw, "prompt_cache_hit_tokens", where)
        or count(raw, "cached_tokens", where)
    )
    cache_write = count(prompt_details, "cache_write_tokens", where) or count(raw, "cache_creation_input_tokens", where)
    if (
        reasoning
        and isinstance(total, int)
        and prompt + completion != total
        and prompt + completion + reasoning == total
    ):
        completion += reasoning
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
        cache_write_tokens=cache_write,
    )


def _read_tool_calls(delta: dict[str, Any], where: str) -> list[ToolCallDelta]:
    calls: list[ToolCallDelta] = []
    for position, call in enumerate(objects(delta, "tool_calls", where)):
        at = f"{where}.tool_calls[{position}]"
        function = obj(call, "function", at)
        index = integer(call, "index", at)
        calls.append(
            ToolCallDelta(
                index=position if index is None else index,
                id=string(call, "id", at) or None,
                name=string(function, "name", f"{at}.function") or None,
                arguments=json_text(function, "arguments", f"{at}.function"),
            )
        )
    return calls


def _read_details(delta: dict[str, Any], where: str) -> list[dict[str, Any]]:
    details = objects(delta, "reasoning_details", where)
    for i, item in enumerate(details):
        at = f"{where}.reasoning_details[{i}]"
        for name in ("type", "text", "summary", "data", "signature", "format", "id"):
            string(item, name, at)
        integer(item, "index", at)
    return details


class ChatCompletionsParser:
    """One response stream's state: open thinking, tag extractor, last usage, finish reason."""

    __slots__ = ("_details_by_index", "_extractor", "_field_open", "_usage", "finish_reason", "response_model")

    def __init__(self, settings: Settings) -> None:
        self.finish_reason: str | None = None
        self.response_model: str | None = None
        self._extractor = ThinkTagExtractor(
            tag_pairs(settings.view.reasoning_tags),
            anywhere=settings.view.reasoning_tags_anywhere,
            starts_in_thinking=settings.view.reasoning_starts_in_thinking,
        )
        self._field_open = False  # thinking from a reasoning field is being streamed
        self._usage: Usage | None = None
        self._details_by_index: dict[int, dict[str, Any]] = {}  # OpenRouter's reasoning_details, merged

    def reply_metadata(self) -> dict[str, Any]:
        """OpenRouter's ``reasoning_details`` as the complete items the stream spelled out in pieces:
        they go back unchanged with the assistant message (signatures and encrypted parts included)."""
        if not self._details_by_index:
            return {}
        return {"reasoning_details": [self._details_by_index[i] for i in sorted(self._details_by_index)]}

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        chunk = _loads(data)
        if "\\" in data and "\\u" in data and ("\\ud" in data or "\\uD" in data):  # as surrogates.loads, inline
            chunk = without_surrogates(chunk)  # a lone surrogate reads as U+FFFD
        if type(chunk) is not dict:
            chunk = as_object(chunk, "chunk")
        # Every field is read and checked before any is acted on, so a bad chunk changes nothing.
        # The checks are spelled out inline: this runs for every chunk of the busiest protocol.
        choices = chunk.get("choices")
        choice: dict[str, Any] = {}
        if choices:
            if type(choices) is not list:
                raise wrong("chunk.choices", choices, "a list")
            choice = as_object(choices[0], "choices[0]")
        delta = choice.get("delta")
        if delta is not None and type(delta) is not dict:
            raise wrong("choices[0].delta", delta, "an object")
        reasoning, content = "", ""
        source: SourceField = "reasoning_content"
        details: list[dict[str, Any]] = []
        calls: list[ToolCallDelta] = []
        if delta:
            value = delta.get("reasoning_content")
            reasoning = value if type(value) is str else as_text(value, "choices[0].delta.reasoning_content")
            if not reasoning:
                value = delta.get("reasoning")
                reasoning = value if type(value) is str else as_text(value, "choices[0].delta.reasoning")
                source = "reasoning"
            value = delta.get("content")
            content = value if type(value) is str else as_text(value, "choices[0].delta.content")
            if delta.get("reasoning_details") is not None:
                details = _read_details(delta, "choices[0].delta")
            if delta.get("tool_calls") is not None:
                calls = _read_tool_calls(delta, "choices[0].delta")
        reason = choice.get("finish_reason")
        if reason is not None and type(reason) is not str:
            raise wrong("choices[0].finish_reason", reason, "a string")
        model = chunk.get("model")
        if model is not None and type(model) is not str:
            raise wrong("chunk.model", model, "a string")
        usage = self._read_usage(chunk, choice)
        out = self._delta(reasoning, source, details, content, calls) if delta else []
        if reason:
            self.finish_reason = reason
        if self.response_model is None:
            self.response_model = model or None
        if usage is not None:
            self._usage = usage
        if event == "error" or chunk.get("error"):
            out.append(self._error(chunk))
        return out

    @staticmethod
    def _read_usage(chunk: dict[str, Any], choice: dict[str, Any]) -> Usage | None:
        """The chunk's usage, wherever this server puts it: top level, inside the choice (Moonshot), ``x_groq``."""
        if chunk.get("usage") is not None:
            usage = obj(chunk, "usage", "chunk")
            return normalise_usage(usage) if usage else None
        if choice.get("usage") is not None:
            usage = obj(choice, "usage", "choices[0]")
            return normalise_usage(usage, "choices[0].usage") if usage else None
        if chunk.get("x_groq") is not None:
            usage = obj(obj(chunk, "x_groq", "chunk"), "usage", "x_groq")
            return normalise_usage(usage, "x_groq.usage") if usage else None
        return None

    def _delta(
        self,
        reasoning: str,
        source: SourceField,
        details: list[dict[str, Any]],
        content: str,
        calls: list[ToolCallDelta],
    ) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if reasoning:
            self._field_open = True
            out.append(ThinkingDelta(reasoning, source))
        if details:
            self._details(details, bool(reasoning), out)
        if content:
            if self._field_open:
                out.append(ThinkingEnd())
                self._field_open = False
            out.extend(self._extractor.feed(content))
        if calls:
            if self._field_open:
                out.append(ThinkingEnd())
                self._field_open = False
            out.extend(calls)
        return out

    def _details(self, details: list[dict[str, Any]], mirrored: bool, out: list[StreamEvent]) -> None:
        """OpenRouter ``reasoning_details``: text only when no plain field carried it; opaque parts kept."""
        for item in details:
            self._merge_detail(item)
            kind = item.get("type")
            meta = {k: item[k] for k in ("type", "id", "format", "index") if item.get(k) is not None}
            if kind == "reasoning.encrypted":
                if item.get("data"):
                    out.append(RedactedThinking(item["data"], "reasoning", meta))
                continue
            thought = item.get("text") or item.get("summary")
            if thought and not mirrored:
                self._field_open = True
                out.append(ThinkingDelta(thought, "reasoning" if kind != "reasoning.summary" else "summary"))
            if item.get("signature"):
                out.append(ThinkingSignature(item["signature"], meta))

    def _merge_detail(self, item: dict[str, Any]) -> None:
        index = item.get("index")
        key = index if type(index) is int else len(self._details_by_index)
        merged = self._details_by_index.setdefault(key, {})
        for name, value in item.items():
            if name in ("text", "summary", "data") and isinstance(value, str) and isinstance(merged.get(name), str):
                merged[name] += value
            elif value is not None:
                merged[name] = value

    def _error(self, obj: dict[str, Any]) -> StreamError:
        err = obj.get("error") or obj
        status = None
        if isinstance(err, dict):
            for key in ("status_code", "status", "code"):
                value = err.get(key)
                if isinstance(value, int):
                    status = value
                    break
        message, code = describe_error_payload(obj)
        return stream_error(status, message, code)

    def close(self) -> list[StreamEvent]:
        out: list[StreamEvent] = list(self._extractor.close())
        if self._field_open:
            out.append(ThinkingEnd())
            self._field_open = False
        if self._usage is not None:
            out.append(UsageEvent(self._usage))
            self._usage = None
        return out


# The servers whose output cap is ``max_completion_tokens``: api.openai.com refuses max_tokens for
# reasoning models, Moonshot documents max_completion_tokens for Kimi, MiniMax marks max_tokens
# deprecated in its favour (platform.minimax.io's API reference, read 2026-11-28); other servers
# only know max_tokens.
MAX_COMPLETION_TOKENS_HOSTS = (
    "api.openai.com",
    "api.moonshot.ai",
    "api.moonshot.cn",
    "api.minimax.io",
    "api.minimaxi.com",
)


class OpenAIChatProvider(Provider):
    """``POST {base_url}/chat/completions`` with ``stream: true``."""

    name = "openai"
    default_base_url = "https://api.openai.com/v1"

    def url(self, settings: Settings) -> str:
        return f"{self.base_url}/chat/completions"

    def new_parser(self, settings: Settings) -> StreamParser:
        return ChatCompletionsParser(settings)

    def build_request(
        self,
        messages: list[Content],
        settings: Settings,
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": self._messages(messages, settings, system),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = self.tool_definitions(tools)
        self._reasoning_params(body, settings)
        max_tokens = settings.view.max_tokens
        if max_tokens is not None:
            modern = any(host in self.base_url for host in MAX_COMPLETION_TOKENS_HOSTS)
            body["max_completion_tokens" if modern else "max_tokens"] = max_tokens
        temperature = settings.view.temperature
        if temperature is not None:
            body["temperature"] = temperature
        return body

    def thinking_tokens(
        self, message: Content, settings: Settings, counter: TokenCounter, *, current_turn: bool
    ) -> int:
        """As ``_messages`` sends it: the turn in progress and the reasoning field (``field`` or
        ``native``) carry the thinking as it is; ``tags`` wraps each block in the text."""
        visible = counter.count_thinking(message)
        if current_turn or not visible:
            return visible
        if settings.view.reasoning_format == "tags":
            blocks = sum(1 for b in message.blocks if isinstance(b, ThinkingBlock) and not b.is_hidden)
            return visible + counter.count("<think></think>\n\n") * blocks
        return visible

    def _reasoning_params(self, body: dict[str, Any], settings: Settings) -> None:
        """How this server is asked to think, by ``reasoning.mode``: ``switch`` sends
        ``thinking: {type: enabled|disabled}`` (DeepSeek V4, Kimi K2.6, GLM), ``template`` the
        chat template's ``enable_thinking`` (Qwen3 on vLLM or SGLang), ``budget`` DashScope's
        ``thinking_budget``; OpenRouter (by its URL) takes its ``reasoning`` object; and the
        effort goes as ``reasoning_effort``, mapped onto ``reasoning.efforts``."""
        view = settings.view
        mode = view.reasoning_mode
        if mode == "none":
            return
        enabled = view.reasoning_enabled
        asked_none = view.reasoning_effort == "none"  # before mapping: a list without none maps it upwards
        effort = map_effort(view.reasoning_effort, view.reasoning_efforts)
        budget = view.reasoning_max_tokens
        if "openrouter.ai" in self.base_url:
            if not enabled:
                body["reasoning"] = {"enabled": False}
            elif budget is not None:
                body["reasoning"] = {"max_tokens": budget}
            elif effort is not None:
                body["reasoning"] = {"effort": effort}
            return
        if mode == "switch":
            body["thinking"] = {"type": "enabled" if enabled and not asked_none else "disabled"}
        elif mode == "template":
            body["chat_template_kwargs"] = {"enable_thinking": enabled and not asked_none}
        if not enabled:
            return
        if effort is not None and not (asked_none and mode in ("switch", "template")):
            body["reasoning_effort"] = effort
        if budget is not None and (mode == "budget" or "dashscope" in self.base_url):
            body["enable_thinking"] = True
            body["thinking_budget"] = budget

    def _messages(self, messages: list[Content], settings: Settings, system: str | None) -> list[dict[str, Any]]:
        view = settings.view
        prompt = system or view.system_prompt
        fmt = view.reasoning_format
        send_field = fmt in ("field", "native")  # this protocol's native way is the field
        send_tags = fmt == "tags"
        field_name = view.reasoning_field_name or "reasoning_content"
        thinking_on = view.reasoning_enabled
        send_as = field_name if send_field else None
        key = (send_as, field_name, thinking_on)
        loop = current_turn_start(messages)
        wire = self.wire
        fresh: list[dict[str, Any]] = [{"role": "system", "content": prompt}] if prompt else []
        (out,), steps = wire.fold(messages, (view, prompt), loop, (fresh,))
        for index in steps:
            message = messages[index]
            if message.speaker == "system":
                out.append({"role": "system", "content": message.text})
            elif message.speaker == "human":
                _user(out, wire.form(message, "user", partial(_user_entry, message)))
            elif message.speaker == "tool":
                out.extend(wire.form(message, "tool", partial(_tool_results, message)))
            elif index >= loop:
                step = ("loop", field_name, thinking_on)
                out.append(wire.form(message, step, partial(_loop_step, message, field_name, thinking_on=thinking_on)))
            elif send_tags and message.thinking:
                out.append(wire.form(message, "tags", partial(_tagged, message)))
            else:
                out.append(wire.form(message, key, partial(_assistant, message, send_as, field_name, thinking_on)))
        return out


def _tool_results(message: Content) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_call_id": b.tool_call_id, "content": b.content}
        for b in message.blocks
        if isinstance(b, ToolResultBlock)
    ]


def _tagged(message: Content) -> dict[str, Any]:
    """An earlier turn with all its readable thinking in tags (``reasoning.format tags``)."""
    entry: dict[str, Any] = {"role": "assistant", "content": _with_think_tags(message, every=True)}
    if message.tool_calls:
        entry["tool_calls"] = _tool_calls(message.tool_calls)
    return entry


def _user_entry(message: Content) -> dict[str, Any]:
    return {"role": "user", "content": message.text}


def _user(out: list[dict[str, Any]], entry: dict[str, Any]) -> None:
    """A user message, joined to the one before it when that is a user message too: strict chat
    templates (vLLM, llama.cpp) refuse roles that do not alternate, and a history can hold two in a
    row (a compaction summary then the kept question; a question whose failed reply was dropped).
    The join is a new entry: ``entry`` and the one before may be kept forms (``WireMemo``)."""
    last = out[-1] if out else None
    if last is not None and last["role"] == "user" and isinstance(last["content"], str):
        out[-1] = {"role": "user", "content": f"{last['content']}\n\n{entry['content']}"}
    else:
        out.append(entry)


def _tool_calls(calls: list[ToolCallBlock]) -> list[dict[str, Any]]:
    """The calls with their ids byte for byte (Kimi's ``functions.NAME:IDX`` included)."""
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}} for c in calls
    ]


def _with_think_tags(message: Content, *, every: bool = False) -> str:
    """The text as the model wrote it: thinking back inside its tags, then the answer (the tag
    name and the blank lines after it as recorded, ``think`` and a blank line if not). ``every``
    puts all readable thinking in tags (``reasoning.format tags``), not only what came in them."""
    parts: list[str] = []
    for block in message.blocks:
        wrapped = every and not block.is_hidden if isinstance(block, ThinkingBlock) else False
        if isinstance(block, ThinkingBlock) and (block.source_field == "think_tags" or wrapped):
            tag = block.provider_metadata.get("tag", "think")
            parts.append(f"<{tag}>{block.thought}</{tag}>{block.provider_metadata.get('after', chr(10) * 2)}")
        elif isinstance(block, TextBlock):
            parts.append(block.text)
    return "".join(parts)


def _assistant(message: Content, send_as: str | None, field_name: str, thinking_on: bool) -> dict[str, Any]:
    """An earlier turn's message: thinking in ``send_as`` when the policy sends it. A message that
    called tools always has the field while thinking is on, or when it was made with thinking (empty
    when the policy keeps its thinking back): Kimi and DeepSeek refuse a history with a tool-call
    message without it, also when they think by default and the request did not ask."""
    calls = message.tool_calls
    text = message.text
    entry: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if send_as:
        # Signed or foreign thinking goes as plain text: this field carries no signature.
        thought = thinking_to_reasoning_field(message)
        if thought:
            entry[send_as] = thought
    if calls:
        if (thinking_on or message.metadata.get(THOUGHT)) and field_name not in entry:
            entry[field_name] = ""
        entry["tool_calls"] = _tool_calls(calls)
    return entry


def _loop_step(message: Content, field_name: str, *, thinking_on: bool) -> dict[str, Any]:
    """An assistant message of the tool loop in progress: its thinking always goes back.

    Thinking the model wrote inside its text (``<think>`` tags, MiniMax M2 and the
    like) goes back there, exactly as written; thinking from a reasoning field goes
    back in the field, as ``""`` when thinking is on and this step had none (Kimi
    and DeepSeek refuse a tool-call message without it). OpenRouter's
    ``reasoning_details`` go back unchanged.
    """
    calls = message.tool_calls
    if any(isinstance(b, ThinkingBlock) and b.source_field == "think_tags" for b in message.blocks):
        entry: dict[str, Any] = {"role": "assistant", "content": _with_think_tags(message) or None}
    else:
        text = message.text
        entry = {"role": "assistant", "content": text if text or not calls else None}
        thought = thinking_to_reasoning_field(message)
        if thought is not None or (thinking_on and calls):
            entry[field_name] = thought or ""
    details = message.metadata.get("reasoning_details")
    if isinstance(details, list) and details:
        entry["reasoning_details"] = details
    if calls:
        entry["tool_calls"] = _tool_calls(calls)
    return entry
