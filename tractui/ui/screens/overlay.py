"""An overlay that takes no text (``/context``, ``/help``): a character typed while it is open
closes it and goes on into the prompt, so no key press goes nowhere."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.screen import ModalScreen


class ReadingOverlay(ModalScreen[None]):
    """Its bindings (Esc, ``q``, …) close it; any other character closes it and is typed (``keep``)."""

    def __init__(self, keep: Callable[[events.Key], None] | None = None) -> None:
        super().__init__(classes="overlay")
        self._keep = keep

    def on_key(self, event: events.Key) -> None:
        if self._keep is None or not event.is_printable or event.key in self.active_bindings:
            return
        event.stop()
        event.prevent_default()
        self.dismiss()
        self._keep(event)
