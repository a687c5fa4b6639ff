"""Tool names as providers accept them, and back.

MCP allows any name up to 128 characters (dots included) and two servers may
offer tools of the same name; the providers take ``^[a-zA-Z0-9_-]{1,64}$``.
A tool is offered as ``server__tool`` with anything else replaced by ``_``;
a name that would be too long or taken gets a short hash of the original.
"""

from __future__ import annotations

import hashlib
import re

_ALLOWED = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_OTHER = re.compile(r"[^a-zA-Z0-9_-]")
SEPARATOR = "__"


class ToolNames:
    """One session's mapping between provider names and (server, tool)."""

    def __init__(self) -> None:
        self._to_pair: dict[str, tuple[str, str]] = {}
        self._to_name: dict[tuple[str, str], str] = {}

    def name_for(self, server: str, tool: str) -> str:
        """The provider-safe name of ``tool`` on ``server``; the same every time it is asked."""
        pair = (server, tool)
        if pair in self._to_name:
            return self._to_name[pair]
        name = _OTHER.sub("_", f"{server}{SEPARATOR}{tool}")
        if len(name) > 64 or name in self._to_pair:
            digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
            name = f"{name[: 64 - 9]}_{digest}"
        assert _ALLOWED.match(name), name
        self._to_pair[name] = pair
        self._to_name[pair] = name
        return name

    def pair_for(self, name: str) -> tuple[str, str] | None:
        """The (server, tool) behind a provider name; ``None`` for a name tractui never offered."""
        return self._to_pair.get(name)
