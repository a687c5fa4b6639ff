"""The neutral content model every provider's output is stored in.

Thinking is first-class: each provider's reasoning becomes ``ThinkingBlock``s
and nothing is filtered when stored. Filtering happens on the way out
(``tractui.core.reasoning``), per settings.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Speaker = Literal["human", "ai", "tool", "system"]

SourceField = Literal[
    "reasoning_content",  # OpenAI-compatible servers: DeepSeek, Kimi, vLLM, llama.cpp
    "reasoning",  # Ollama, OpenRouter, Groq
    "thinking",  # Anthropic thinking blocks
    "thought",  # Gemini parts with thought: true
    "think_tags",  # <think>...</think> inside the answer text
    "summary",  # OpenAI Responses reasoning summaries
]


class _Block(BaseModel):
    model_config = ConfigDict(frozen=False, extra="forbid")


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Block):
    """One span of model reasoning.

    ``is_hidden`` marks redacted/encrypted thinking: the opaque payload is kept
    in ``provider_metadata`` (``data`` / ``encrypted_content``) so it can be sent
    back unchanged, and it is never shown as text.
    """

    type: Literal["thinking"] = "thinking"
    thought: str = ""
    is_hidden: bool = False
    source_field: SourceField = "reasoning_content"
    signature: str | None = None
    provider_metadata: dict[str, Any] = Field(default_factory=dict)


class ToolCallBlock(_Block):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: str = ""  # raw JSON text as the model wrote it
    provider_metadata: dict[str, Any] = Field(default_factory=dict)


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: str = ""
    is_error: bool = False


Block = Annotated[
    TextBlock | ThinkingBlock | ToolCallBlock | ToolResultBlock,
    Field(discriminator="type"),
]


class Usage(BaseModel):
    """Token usage with one meaning for every provider.

    ``input_tokens`` is everything the model read, cached included;
    ``output_tokens`` is everything it wrote, reasoning included.
    ``reasoning_tokens`` and ``cached_input_tokens`` are parts of those.
    """

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class Content(BaseModel):
    """One message: who spoke and what, as blocks.

    ``metadata`` carries provenance stamps for assistant turns (``provider``,
    ``model``, ``base_url``) so signed thinking is only sent back natively to
    the model that signed it.
    """

    model_config = ConfigDict(extra="forbid")

    speaker: Speaker
    blocks: list[Block] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        """The visible answer text (text blocks joined)."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    @property
    def thinking(self) -> list[ThinkingBlock]:
        return [b for b in self.blocks if isinstance(b, ThinkingBlock)]

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        return [b for b in self.blocks if isinstance(b, ToolCallBlock)]

    @classmethod
    def human(cls, text: str) -> Content:
        return cls(speaker="human", blocks=[TextBlock(text=text)])

    @classmethod
    def system_prompt(cls, text: str) -> Content:
        return cls(speaker="system", blocks=[TextBlock(text=text)])
