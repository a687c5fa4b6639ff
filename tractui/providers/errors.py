"""Turn provider error answers into one precise line and an error kind.

Every provider words its errors differently (OpenAI ``{"error": {...}}`` with a
string ``code``, OpenRouter an integer ``code`` and the real reason in
``metadata.raw``, Anthropic ``{"type": "error", "error": {...}}``, Gemini a
``status`` name, FastAPI servers ``detail``); the user gets one line either way,
and the conversation loop gets a kind it can act on (``context_length`` starts
compaction, ``rate_limit``/``server``/``overloaded`` are retried).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from tractui.core.events import KEPT, ErrorKind, StreamError
from tractui.core.surrogates import loads
from tractui.errors import ChunkShapeError
from tractui.providers.config import DEFAULT_KEY_ENV

_CONTEXT = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many tokens|"
    r"input is too long|reduce the length|exceeds? the (?:model'?s? )?(?:maximum|max|context)|"
    r"input token count|request too large|string too long",
    re.IGNORECASE,
)
_MAX_LINE = 300
# A request shape the server refuses, and the setting that changes it: the user's next step, in the line.
_HINTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), hint)
    for pattern, hint in (
        (
            r"thinking\.type\.disabled.{0,40}not supported",
            "this model cannot turn thinking off: /set reasoning.off never (between_tools on Claude Sonnet 5.5)",
        ),
        (
            r"thinking\.type\.enabled.{0,40}not supported|use .?thinking\.type\.adaptive",
            "this model thinks adaptively: /set reasoning.mode adaptive (or /set unset reasoning.maxTokens)",
        ),
        (
            r"bound to a different conversation|invalid .?signature.? in .?thinking",
            "earlier thinking no longer matches this conversation (its system prompt, tools or history changed): "
            "/set reasoning.includeInContext false sends none back",
        ),
        (
            r"(temperature|top_p|top_k).{0,80}(only 1 is allowed|non-default|not supported|does not support)"
            r"|invalid temperature",
            "this model fixes its sampling: /set unset temperature",
        ),
        (
            r"thinking_?level.{0,80}thinking_?budget|thinking_?budget.{0,80}thinking_?level",
            "set reasoning.effort or reasoning.maxTokens, not both",
        ),
        (
            r"reasoning_effort.{0,80}(invalid|unsupported|not supported|must be one of)"
            r"|unsupported value.{0,40}reasoning"
            # OpenAI's Responses API names the value and the model, not the parameter
            r"|unsupported value: '(none|minimal|low|medium|high|xhigh|max)' is not supported with",
            "the server takes other effort values: /set reasoning.efforts with the ones it lists",
        ),
        (
            r"model_not_found|not found the model|unknown model|no such model|model .{0,80}(does not exist|not found|is not available|unknown)",
            "pick one the server offers with /model",
        ),
    )
)


def _first(obj: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = obj.get(key)
        if value not in (None, "", {}):
            return value
    return None


def describe_error_payload(payload: Any) -> tuple[str, str]:
    """``(message, code_or_type)`` from any provider's error JSON (already parsed)."""
    if isinstance(payload, list) and payload:
        payload = payload[0]
    if not isinstance(payload, dict):
        return (str(payload) if payload not in (None, "") else "", "")
    err = payload.get("error", payload)
    if isinstance(err, str):
        return err, str(payload.get("type") or "")
    if not isinstance(err, dict):
        return str(err), ""
    message = _first(err, "message", "detail", "msg")
    if message is None:
        message = _first(payload, "detail", "message")
    if isinstance(message, (list, dict)):
        message = json.dumps(message)
    metadata = err.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str) and raw.strip():
        # OpenRouter: "Provider returned error" is useless; the upstream reason is in raw.
        message = f"{message}: {raw.strip()}" if message else raw.strip()
    code = _first(err, "type", "status", "code")
    if isinstance(err.get("code"), str) and err.get("code") != code:
        code = f"{code}/{err['code']}" if code else err["code"]
    return str(message or ""), str(code or "")


def one_line(text: str, most: int = _MAX_LINE) -> str:
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1] + "…"


def parse_error_body(body: bytes | str) -> tuple[str, str, Any]:
    """``(message, code, parsed_or_None)`` from a raw error body (JSON or text)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip()
    try:
        parsed = loads(text) if text else None
    except ValueError:
        return one_line(text), "", None
    message, code = describe_error_payload(parsed)
    return one_line(message), code, parsed


def classify(status: int | None, message: str, code: str = "") -> tuple[ErrorKind, bool]:
    """Error kind and whether a retry may help."""
    low = f"{code} {message}".lower()
    if "insufficient_quota" in low or "billing" in low:
        return "rate_limit", False
    if _CONTEXT.search(low) or status == 413:
        return "context_length", False
    if "overloaded" in low or status == 529:
        return "overloaded", True
    if status in (401, 403) or "authentication" in low or "permission_denied" in low:
        return "auth", False
    if status == 429 or "rate_limit" in low or "resource_exhausted" in low:
        return "rate_limit", True
    if status == 404 or "not_found" in low:
        return "not_found", False
    if status is not None and (status >= 500 or status == 408):
        return "server", True
    return "bad_request", False


def make_error(status: int | None, message: str, code: str = "", *, key_env: str | None = None) -> StreamError:
    """The ``StreamError`` for an HTTP error answer (or an error body where a stream was due)."""
    kind, retryable = classify(status, message, code)
    where = f"HTTP {status}" if status else "stream error"
    return StreamError(
        kind=kind, message=_line(kind, where, message, code, key_env), status=status, retryable=retryable
    )


def stream_error(number: int | None, message: str, code: str = "") -> StreamError:
    """An error event inside a stream the server answered with HTTP 200: classified by the number its
    payload may carry (OpenRouter's and Gemini's ``code``, Groq's ``status_code``), so a busy server
    stays one to retry, but said as what it was, with no HTTP status the answer did not have."""
    kind, retryable = classify(number, message, code)
    where = "server error in the stream" + (f" (its code {number})" if number else "")
    code = "" if number is not None and code == str(number) else code  # said once, in where
    return StreamError(kind=kind, message=_line(kind, where, message, code, None), retryable=retryable)


def _line(kind: ErrorKind, where: str, message: str, code: str, key_env: str | None) -> str:
    detail = message or "no details given"
    if code and code.lower() not in detail.lower():
        detail = f"{detail} ({code})"
    if kind == "auth":
        hint = f"; check the key in {key_env}" if key_env else ""
        text = f"authentication failed ({where}): {detail}{hint}"
    elif kind == "context_length":
        text = f"context too long ({where}): {detail}"
    else:
        text = f"{where}: {detail}"
        fix = next((h for pattern, h in _HINTS if pattern.search(detail)), None)
        if fix:  # the line is cut in the server's words, never in the user's next step
            text = f"{one_line(text, _MAX_LINE - len(fix) - 3)} — {fix}"
    return one_line(text)


def error_from_body(status: int, body: bytes, *, key_env: str | None = None) -> StreamError:
    message, code, _ = parse_error_body(body)
    return make_error(status, message, code, key_env=key_env)


_SECRETISH = re.compile(
    r"(?i)(bearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?|x-goog-api-key[\"']?\s*[:=]\s*[\"']?|[?&]key=|api[_-]?key[\"']?\s*[:=]\s*[\"']?)"
    r"([A-Za-z0-9._\-]{6,})"
)
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,})")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with API keys removed: the given secrets, every known key variable, and key-shaped tokens."""
    values = {s for s in secrets if s}
    for env in set(DEFAULT_KEY_ENV.values()):
        value = os.environ.get(env)
        if value:
            values.add(value)
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, "[REDACTED]")
    text = _SECRETISH.sub(lambda m: m.group(1) + "[REDACTED]", text)
    return _KEY_SHAPES.sub("[REDACTED]", text)


def unreadable(exc: Exception, key: str | None = None) -> StreamError:
    """The one line for a stream that cannot be read: a chunk of the wrong shape, or a parser that failed."""
    if isinstance(exc, ChunkShapeError):
        text = f"the server sent a chunk tractui cannot read ({exc}){KEPT}"
    else:
        text = f"tractui could not read the stream ({type(exc).__name__}: {exc}){KEPT}"
    return StreamError(kind="protocol", message=redact(one_line(text), key))
