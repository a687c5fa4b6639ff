"""A typed, read-only view of the settings, for code: ``settings.view.context_limit``.

The registry (``tractui.core.settings``) stays the one place that parses what
a user types and completes keys; this view gives the same values their Python
types, one field per registered key, named by ``field_name``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
ThinkingFormat = Literal["native", "field", "tags"]
ThinkingMode = Literal["auto", "adaptive", "budget", "switch", "template", "none"]
ThinkingDisplay = Literal["auto", "summarized", "omitted"]
ThinkingOff = Literal["disabled", "between_tools", "never"]
StripPolicy = Literal["all", "allButLast", "none"]
FieldName = Literal["reasoning_content", "reasoning"]
SummaryDetail = Literal["auto", "concise", "detailed", "none"]
MarkdownDrawing = Literal["fast", "public"]
SystemPromptAs = Literal["instructions", "developer"]


def field_name(key: str) -> str:
    """``reasoning.includeInContext`` → ``reasoning_include_in_context``, ``context-limit`` → ``context_limit``."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key)
    return re.sub(r"[.\-]", "_", snake).lower()


@dataclass(frozen=True, slots=True)
class SettingsView:
    reasoning_enabled: bool
    reasoning_include_in_context: bool
    reasoning_include_in_response: bool
    reasoning_effort: Effort | None
    reasoning_max_tokens: int | None
    reasoning_format: ThinkingFormat
    reasoning_mode: ThinkingMode
    reasoning_efforts: tuple[str, ...] | None
    reasoning_display: ThinkingDisplay
    reasoning_off: ThinkingOff
    reasoning_strip_from_context: StripPolicy
    reasoning_field_name: FieldName
    reasoning_summary: SummaryDetail
    reasoning_tags: tuple[str, ...]
    reasoning_tags_anywhere: bool
    reasoning_starts_in_thinking: bool
    ui_markdown: MarkdownDrawing
    context_limit: int
    compression_threshold: float
    max_tokens: int | None
    max_output: int | None
    temperature: float | None
    retries: int
    timeout: float
    system_prompt: str
    system_prompt_as: SystemPromptAs
    tools_enabled: bool
    tools_max_steps: int
    tools_max_result_tokens: int
    compaction_auto: bool
    compaction_model: str | None
    compaction_profile: str | None
    compaction_keep_turns: int
    compaction_keep_fraction: float | None
