"""Whether a tool may run: the user's choice, asked before a call and remembered as they chose.

Nothing runs without consent unless the configuration or a flag says so. A
choice is tied to the tool's definition (its fingerprint): a tool whose
description, schema or annotations changed since it was approved asks again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from tractui.errors import UserError

Choice = Literal["once", "session", "always", "deny"]


@dataclass(frozen=True, slots=True)
class Decision:
    choice: Choice
    reason: str = ""  # with "deny": passed to the model

    @property
    def allowed(self) -> bool:
        return self.choice != "deny"


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A call the model asked for, as the user sees it before choosing."""

    call_id: str
    name: str  # as the provider knows it
    server: str
    tool: str
    arguments: str  # exactly as the model wrote them
    description: str = ""
    fingerprint: str = ""
    read_only: bool = False  # the server's hint, shown but never trusted to skip consent


def fingerprint(definition: dict[str, Any]) -> str:
    """A short hash of what the user approved: name, description, input schema and annotations."""
    keep = {k: definition.get(k) for k in ("name", "description", "inputSchema", "annotations")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass
class ConsentPolicy:
    """The choices in force: flags, the saved "always" ones, and this session's."""

    saved: dict[str, dict[str, str]] = field(default_factory=dict)  # server -> tool -> fingerprint
    allow: Collection[str] = ()  # --allow-tool: "server.tool", "server__tool" or the bare tool name
    allow_all: bool = False
    remember: Callable[[str, str, str], None] | None = None  # saves an "always" choice
    _session: dict[tuple[str, str], str] = field(default_factory=dict)

    def preapproved(self, request: ToolRequest) -> bool:
        if self.allow_all:
            return True
        names = {f"{request.server}.{request.tool}", request.name, request.tool}
        if names & set(self.allow):
            return True
        if self.saved.get(request.server, {}).get(request.tool) == request.fingerprint:
            return True
        return self._session.get((request.server, request.tool)) == request.fingerprint

    def record(self, request: ToolRequest, decision: Decision) -> str | None:
        """Keep the choice; what went wrong saving an "always" (it holds for this session all the same)."""
        if decision.choice in ("session", "always"):
            self._session[(request.server, request.tool)] = request.fingerprint
        if decision.choice == "always":
            self.saved.setdefault(request.server, {})[request.tool] = request.fingerprint
            if self.remember is not None:
                try:
                    self.remember(request.server, request.tool, request.fingerprint)
                except UserError as err:
                    return f"{request.server}.{request.tool} is allowed for this session only: {err}"
        return None
