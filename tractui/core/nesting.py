"""How deeply a parsed document (JSON, TOML) nests, measured without recursion.

Untrusted files can nest lists and tables thousands of levels deep; code that
walks them recursively would die with ``RecursionError``. Loaders measure
first and refuse a document deeper than any real one.
"""

from __future__ import annotations

from typing import Any


def nesting_depth(value: Any, limit: int) -> int:
    """How many levels of lists and dicts nest in ``value``; stops counting once past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest
