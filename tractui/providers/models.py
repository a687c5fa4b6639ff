"""What a server offers: its models, with the context window and output limit when it says them.

Each protocol lists models its own way (OpenAI-compatible ``GET /models`` —
OpenRouter adds ``context_length``; Anthropic ``GET /v1/models`` with
``max_input_tokens``; Gemini ``models.list`` with ``inputTokenLimit``); the
answer is untrusted JSON, read defensively. A server that cannot be reached
or answers an error is one line (``ModelListError``), never a traceback.
Fetching the pages is the transport's (``Provider.fetch_models``): the
command palette reads this module at start-up, before any HTTP client is
needed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from tractui.errors import UserError


class ModelListError(UserError):
    """The model list could not be had: offline, refused, or not a list."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    id: str
    context_limit: int | None = None
    max_output: int | None = None
    name: str | None = None


ModelPageParser: TypeAlias = Callable[[Any], tuple[list["ModelInfo"], str | None]]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def openai_models(payload: Any) -> tuple[list[ModelInfo], str | None]:
    """``{"data": [{"id": …}]}``; OpenRouter's ``context_length`` and ``top_provider``, vLLM's ``max_model_len``."""
    out: list[ModelInfo] = []
    for item in _items(payload, "data"):
        raw_top = item.get("top_provider")
        top: dict[str, Any] = raw_top if isinstance(raw_top, dict) else {}
        context = _int(item.get("context_length")) or _int(top.get("context_length")) or _int(item.get("max_model_len"))
        name = item.get("name") if isinstance(item.get("name"), str) else None
        out.append(ModelInfo(item["id"], context, _int(top.get("max_completion_tokens")), name))
    return out, None


def anthropic_models(payload: Any) -> tuple[list[ModelInfo], str | None]:
    """``{"data": [...], "has_more", "last_id"}`` with ``max_input_tokens`` and ``max_tokens``."""
    out = [
        ModelInfo(
            item["id"],
            _int(item.get("max_input_tokens")),
            _int(item.get("max_tokens")),
            item.get("display_name") if isinstance(item.get("display_name"), str) else None,
        )
        for item in _items(payload, "data")
    ]
    more = isinstance(payload, dict) and payload.get("has_more") is True and isinstance(payload.get("last_id"), str)
    return out, payload["last_id"] if more else None


def gemini_models(payload: Any) -> tuple[list[ModelInfo], str | None]:
    """``{"models": [{"name": "models/…", "inputTokenLimit", …}], "nextPageToken"}``: the ones that generate."""
    out: list[ModelInfo] = []
    for item in _items(payload, "models", key="name"):
        methods = item.get("supportedGenerationMethods")
        if isinstance(methods, list) and "generateContent" not in methods and "streamGenerateContent" not in methods:
            continue
        name = item["name"].removeprefix("models/")
        display = item.get("displayName") if isinstance(item.get("displayName"), str) else None
        out.append(ModelInfo(name, _int(item.get("inputTokenLimit")), _int(item.get("outputTokenLimit")), display))
    token = payload.get("nextPageToken") if isinstance(payload, dict) else None
    return out, token if isinstance(token, str) and token else None


def _items(payload: Any, field: str, *, key: str = "id") -> list[dict[str, Any]]:
    if not isinstance(payload, dict) or not isinstance(payload.get(field), list):
        raise ModelListError(f"the server's answer has no '{field}' list")
    return [i for i in payload[field] if isinstance(i, dict) and isinstance(i.get(key), str) and i[key].strip()]
