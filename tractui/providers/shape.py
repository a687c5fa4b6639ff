"""Reading a server's chunk JSON, which may have any shape: each value checked for what its protocol allows.

The stream parsers read chunks only through these helpers. ``null`` and an
absent key read as nothing (an empty object, list or string, ``False`` or
``None``); a value of another type raises ``ChunkShapeError`` naming the
field, and the transport ends the stream there with what arrived before the
chunk kept. The common case (the expected type) returns at once: these run
for every chunk of every stream, so the field's path is only spelled out for
the error.
"""

from __future__ import annotations

import json
import math
from typing import Any

from tractui.core.surrogates import loads
from tractui.errors import ChunkShapeError

JSON = dict[str, Any]


def kind_of(value: Any) -> str:
    """What a JSON value is, in words (never the value itself: it may be huge or hostile)."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "true/false"
    if type(value) in (int, float):
        return "a number"
    if type(value) is str:
        return "a string"
    if type(value) is list:
        return "a list"
    if type(value) is dict:
        return "an object"
    return type(value).__name__


def wrong(where: str, value: Any, expected: str) -> ChunkShapeError:
    """The error for ``value`` found at ``where`` when the protocol allows only ``expected``."""
    return ChunkShapeError(f"{where} is {kind_of(value)}, expected {expected}")


def loads_object(data: str, what: str = "chunk") -> JSON:
    """An SSE data line as a JSON object (``null`` is an empty one); ``json.JSONDecodeError`` when
    it is not JSON at all (skipped and counted by the transport), ``ChunkShapeError`` when it is
    JSON of another kind. A lone surrogate escape (``"\\ud800"``) in any string reads as U+FFFD."""
    value = loads(data)
    if type(value) is dict:
        return value
    return as_object(value, what)


# -- values ---------------------------------------------------------------------
def as_object(value: Any, where: str) -> JSON:
    """``value`` as an object; ``null`` is an empty one."""
    if type(value) is dict:
        return value
    if value is None:
        return {}
    raise wrong(where, value, "an object")


def as_text(value: Any, where: str) -> str:
    """Text that servers send as a string or as a list of parts (``[{"type": "text", "text": "…"}]``,
    plain strings too); parts that carry no text (an image, a refusal marker) add nothing."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    if type(value) is not list:
        raise wrong(where, value, "a string or a list of text parts")
    pieces: list[str] = []
    for i, part in enumerate(value):
        if type(part) is str:
            pieces.append(part)
        elif type(part) is dict:
            pieces.append(string(part, "text", f"{where}[{i}]"))
        elif part is not None:
            raise wrong(f"{where}[{i}]", part, "a text part")
    return "".join(pieces)


# -- fields of an object --------------------------------------------------------
def obj(parent: JSON, key: str, where: str) -> JSON:
    """``parent[key]`` as an object; absent or ``null`` is an empty one."""
    value = parent.get(key)
    if type(value) is dict:
        return value
    if value is None:
        return {}
    raise wrong(f"{where}.{key}", value, "an object")


def items(parent: JSON, key: str, where: str) -> list[Any]:
    """``parent[key]`` as a list; absent or ``null`` is an empty one."""
    value = parent.get(key)
    if type(value) is list:
        return value
    if value is None:
        return []
    raise wrong(f"{where}.{key}", value, "a list")


def objects(parent: JSON, key: str, where: str) -> list[JSON]:
    """``parent[key]`` as a list of objects (``null`` entries skipped)."""
    out: list[JSON] = []
    for i, value in enumerate(items(parent, key, where)):
        if type(value) is dict:
            out.append(value)
        elif value is not None:
            raise wrong(f"{where}.{key}[{i}]", value, "an object")
    return out


def string(parent: JSON, key: str, where: str) -> str:
    """``parent[key]`` as a string; absent or ``null`` is ``""``."""
    value = parent.get(key)
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise wrong(f"{where}.{key}", value, "a string")


def text(parent: JSON, key: str, where: str) -> str:
    """``parent[key]`` as text (see ``as_text``); absent or ``null`` is ``""``."""
    value = parent.get(key)
    if type(value) is str:
        return value
    return as_text(value, f"{where}.{key}")


def flag(parent: JSON, key: str, where: str) -> bool:
    """``parent[key]`` as true/false; absent or ``null`` is false."""
    value = parent.get(key)
    if type(value) is bool:
        return value
    if value is None:
        return False
    raise wrong(f"{where}.{key}", value, "true or false")


def integer(parent: JSON, key: str, where: str) -> int | None:
    """``parent[key]`` as a whole number; absent or ``null`` is ``None``."""
    value = parent.get(key)
    if type(value) is int or value is None:
        return value
    raise wrong(f"{where}.{key}", value, "a whole number")


def count(parent: JSON, key: str, where: str) -> int:
    """A token count: a non-negative number (a float is truncated); absent or ``null`` is 0."""
    value = parent.get(key)
    if value is None:
        return 0
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise wrong(f"{where}.{key}", value, "a token count")
    return int(value)


def json_text(parent: JSON, key: str, where: str) -> str:
    """Tool-call arguments: a JSON string as sent, or an object some servers send instead, as JSON text."""
    value = parent.get(key)
    if type(value) is str:
        return value
    if value is None:
        return ""
    if type(value) is dict:
        return json.dumps(value, ensure_ascii=False) if value else ""
    raise wrong(f"{where}.{key}", value, "a string of JSON or an object")
