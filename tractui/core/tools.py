"""What a model is offered as tools, in the neutral form every provider serialises.

``name`` is already provider-safe (``^[a-zA-Z0-9_-]{1,64}$``); the tool layer
maps it back to the server and tool it stands for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
