"""Lone UTF-16 surrogates: text Python can hold but UTF-8 (the history, the terminal) cannot.

A JSON string may spell a surrogate code point as an escape (``"\\ud800"``)
with no partner, which is valid JSON: ``json.loads`` gives a ``str`` holding
U+D800, and the first UTF-8 encode of it (the history's JSON, a terminal)
raises ``UnicodeEncodeError``. Python's ``surrogateescape`` puts bytes that
are not UTF-8 (in ``sys.argv``, file names) in the same range, U+DC80–U+DCFF.

Valid UTF-8 bytes can never carry a surrogate, so JSON decoded from UTF-8 can
only hold one where its raw text has a ``\\ud``/``\\uD`` escape: ``loads`` looks
for surrogates only then, which keeps the common case a pair of substring
searches. A surrogate found is replaced by U+FFFD (�): what arrived is kept and
shown, inertly. A pair of escapes that makes one character (``"\\ud83d\\ude00"``,
an emoji) is joined by the JSON parser and is not a lone surrogate.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (one that cannot be written as UTF-8)."""
    return not text.isascii() and _LONE.search(text) is not None


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD."""
    return text if text.isascii() else _LONE.sub(REPLACEMENT, text)


def without_surrogates(value: Any) -> Any:
    """A decoded JSON value with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if type(value) is str:
        return replace_surrogates(value)
    if type(value) is list:
        return [without_surrogates(item) for item in value]
    if type(value) is dict:
        return {replace_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


def loads(raw: str) -> Any:
    """``json.loads`` for untrusted JSON: lone surrogates replaced by U+FFFD (looked for only when
    ``raw`` has an escape that may spell one). Raises what ``json.loads`` raises."""
    value = json.loads(raw)
    # a one-character search is a memchr (most chunks have no backslash at all), then the escapes
    if "\\" in raw and "\\u" in raw and ("\\ud" in raw or "\\uD" in raw):
        return without_surrogates(value)
    return value


def surrogate_path(value: Any, path: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """Where the first lone surrogate in a decoded JSON value is (keys and list indices), or ``None``.
    A key that holds one is named with it replaced by U+FFFD."""
    if type(value) is str:
        return path if has_surrogate(value) else None
    if type(value) is list:
        for i, item in enumerate(value):
            found = surrogate_path(item, (*path, str(i)))
            if found is not None:
                return found
    elif type(value) is dict:
        for key, item in value.items():
            name = replace_surrogates(key) if type(key) is str else str(key)
            if type(key) is str and has_surrogate(key):
                return (*path, name)
            found = surrogate_path(item, (*path, name))
            if found is not None:
                return found
    return None
