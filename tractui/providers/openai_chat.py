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
from tractui.core.tags import ThinkTagExtractor, tag_pairs
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.errors import describe_error_payload, make_error
from tractui.providers.thinking_back import current_turn_start
from tractui.providers.transport import Provider, StreamParser

_loads = json.loads


def normalise_usage(raw: dict[str, Any]) -> Usage:
    """Chat Completions usage in our one meaning (input incl. cached, output incl. reasoning).

    xAI reports ``completion_tokens`` without reasoning; it shows as
    ``prompt + completion + reasoning == total``, and the reasoning is added back.
    """
    prompt = int(raw.get("prompt_tokens") or 0)
    completion = int(raw.get("completion_tokens") or 0)
    total = raw.get("total_tokens")
    details = raw.get("completion_tokens_details") or {}
    reasoning = int(details.get("reasoning_tokens") or raw.get("reasoning_tokens") or 0)
    prompt_details = raw.get("prompt_tokens_details") or {}
    cached = int(
        prompt_details.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or raw.get("cached_tokens") or 0
    )
    cache_write = int(prompt_details.get("cache_write_tokens") or raw.get("cache_creation_input_tokens") or 0)
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
        self._usage: dict[str, Any] | None = None
        self._details_by_index: dict[int, dict[str, Any]] = {}  # OpenRouter's reasoning_details, merged

    def reply_metadata(self) -> dict[str, Any]:
        """OpenRouter's ``reasoning_details`` as the complete items the stream spelled out in pieces:
        they go back unchanged with the assistant message (signatures and encrypted parts included)."""
        if not self._details_by_index:
            return {}
        return {"reasoning_details": [self._details_by_index[i] for i in sorted(self._details_by_index)]}

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        obj = _loads(data)
        if type(obj) is not dict:
            raise ValueError("chunk is not a JSON object")
        choices = obj.get("choices")
        if choices and type(choices) is list:
            choice = choices[0]
            delta = choice.get("delta")
            out = self._delta(delta) if delta else []
            reason = choice.get("finish_reason")
            if reason:
                self.finish_reason = reason
            if choice.get("usage"):
                self._usage = choice["usage"]  # Moonshot puts usage inside the choice
        else:
            out = []
        if self.response_model is None:
            self.response_model = obj.get("model") or None
        usage = obj.get("usage")
        if usage:
            self._usage = usage
        else:
            groq = obj.get("x_groq")
            if groq and groq.get("usage"):
                self._usage = groq["usage"]
        if event == "error" or obj.get("error"):
            out.append(self._error(obj))
        return out

    def _delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        plain = delta.get("reasoning_content")
        source: SourceField = "reasoning_content"
        if not plain:
            plain = delta.get("reasoning")
            source = "reasoning"
        if plain and type(plain) is str:
            self._field_open = True
            out.append(ThinkingDelta(plain, source))
        details = delta.get("reasoning_details")
        if details:
            self._details(details, bool(plain), out)
        content = delta.get("content")
        if content:
            if self._field_open:
                out.append(ThinkingEnd())
                self._field_open = False
            out.extend(self._extractor.feed(content))
        calls = delta.get("tool_calls")
        if calls:
            if self._field_open:
                out.append(ThinkingEnd())
                self._field_open = False
            for position, call in enumerate(calls):
                function = call.get("function") or {}
                index = call.get("index")
                out.append(
                    ToolCallDelta(
                        index=position if index is None else index,
                        id=call.get("id") or None,
                        name=function.get("name") or None,
                        arguments=function.get("arguments") or "",
                    )
                )
        return out

    def _details(self, details: list[dict[str, Any]], mirrored: bool, out: list[StreamEvent]) -> None:
        """OpenRouter ``reasoning_details``: text only when no plain field carried it; opaque parts kept."""
        for item in details:
            if type(item) is not dict:
                continue
            self._merge_detail(item)
            kind = item.get("type")
            meta = {k: item[k] for k in ("type", "id", "format", "index") if item.get(k) is not None}
            if kind == "reasoning.encrypted":
                if item.get("data"):
                    out.append(RedactedThinking(item["data"], "reasoning", meta))
                continue
            text = item.get("text") or item.get("summary")
            if text and not mirrored:
                self._field_open = True
                out.append(ThinkingDelta(text, "reasoning" if kind != "reasoning.summary" else "summary"))
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
        return make_error(status, message, code)

    def close(self) -> list[StreamEvent]:
        out: list[StreamEvent] = list(self._extractor.close())
        if self._field_open:
            out.append(ThinkingEnd())
            self._field_open = False
        if self._usage is not None:
            out.append(UsageEvent(normalise_usage(self._usage)))
            self._usage = None
        return out


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
            # api.openai.com refuses max_tokens for reasoning models and Moonshot documents
            # max_completion_tokens for Kimi; other servers only know max_tokens
            modern = any(host in self.base_url for host in ("api.openai.com", "api.moonshot.ai", "api.moonshot.cn"))
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
        view = settings.view
        if current_turn or not visible:
            return visible
        if not view.reasoning_include_in_context:
            return 0
        if view.reasoning_format == "tags":
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
            body["thinking"] = {"type": "enabled" if enabled and effort != "none" else "disabled"}
        elif mode == "template":
            body["chat_template_kwargs"] = {"enable_thinking": enabled and effort != "none"}
        if not enabled:
            return
        if effort is not None and not (effort == "none" and mode in ("switch", "template")):
            body["reasoning_effort"] = effort
        if budget is not None and (mode == "budget" or "dashscope" in self.base_url):
            body["enable_thinking"] = True
            body["thinking_budget"] = budget

    def _messages(self, messages: list[Content], settings: Settings, system: str | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        prompt = system or settings.view.system_prompt
        if prompt:
            out.append({"role": "system", "content": prompt})
        include, fmt = settings.view.reasoning_include_in_context, settings.view.reasoning_format
        send_field = include and fmt in ("field", "native")  # this protocol's native way is the field
        send_tags = include and fmt == "tags"
        field_name = settings.view.reasoning_field_name or "reasoning_content"
        loop = current_turn_start(messages)
        for index, message in enumerate(messages):
            if message.speaker == "system":
                out.append({"role": "system", "content": message.text})
            elif message.speaker == "human":
                _user(out, message.text)
            elif message.speaker == "tool":
                out.extend(
                    {"role": "tool", "tool_call_id": b.tool_call_id, "content": b.content}
                    for b in message.blocks
                    if isinstance(b, ToolResultBlock)
                )
            elif index >= loop:
                out.append(_loop_step(message, field_name, thinking_on=settings.view.reasoning_enabled))
            elif send_tags and message.thinking:
                entry: dict[str, Any] = {"role": "assistant", "content": _with_think_tags(message, every=True)}
                if message.tool_calls:
                    entry["tool_calls"] = _tool_calls(message.tool_calls)
                out.append(entry)
            else:
                out.append(
                    _assistant(message, field_name if send_field else None, field_name, settings.view.reasoning_enabled)
                )
        return out


def _user(out: list[dict[str, Any]], text: str) -> None:
    """A user message, joined to the one before it when that is a user message too: strict chat
    templates (vLLM, llama.cpp) refuse roles that do not alternate, and a history can hold two in a
    row (a compaction summary then the kept question; a question whose failed reply was dropped)."""
    last = out[-1] if out else None
    if last is not None and last["role"] == "user" and isinstance(last["content"], str):
        last["content"] = f"{last['content']}\n\n{text}"
    else:
        out.append({"role": "user", "content": text})


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
