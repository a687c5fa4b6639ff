"""Make model output inert before it reaches a widget: the shared rules live in ``tractui.core.inert``."""

from __future__ import annotations

from tractui.core.inert import StreamSanitizer, sanitize, unseen_controls

__all__ = ["StreamSanitizer", "sanitize", "unseen_controls"]
