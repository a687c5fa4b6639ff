"""What a server offers: its models, with the context window and output limit when it says them.

Each protocol lists models its own way (OpenAI-compatible ``GET /models`` —
OpenRouter adds ``context_length``; Anthropic ``GET /v1/models`` with
``max_input_tokens``; Gemini ``models.list`` with ``inputTokenLimit``); the
answer is untrusted JSON, read defensively. A server that cannot be reached
or answers an error is one line (``ModelListError``), never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import httpx

from tractui.errors import UserError

MAX_PAGES = 20  # a server that pages forever is cut off here
TIMEOUT = httpx.Timeout(15.0, connect=10.0)


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


async def fetch_pages(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    parse: ModelPageParser,
    page_param: str | None,
    params: dict[str, str] | None = None,
) -> list[ModelInfo]:
    """GET ``url`` (following the protocol's paging) and parse each page; one-line errors."""
    models: list[ModelInfo] = []
    query = dict(params or {})
    for _ in range(MAX_PAGES):
        try:
            response = await client.get(url, headers=headers, params=query, timeout=TIMEOUT)
        except httpx.HTTPError as exc:
            raise ModelListError(f"cannot reach {url}: {type(exc).__name__}") from None
        if response.status_code >= 400:
            from tractui.providers.errors import parse_error_body

            message, _, _ = parse_error_body(response.content)
            raise ModelListError(f"{url} answered HTTP {response.status_code}: {message or 'no details'}")
        try:
            payload = response.json()
        except ValueError:
            raise ModelListError(f"{url} did not answer JSON") from None
        page, token = parse(payload)
        models.extend(page)
        if token is None or page_param is None:
            break
        query[page_param] = token
    return sorted({m.id: m for m in models}.values(), key=lambda m: m.id)
