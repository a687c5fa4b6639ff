"""An overlay that takes no text (``/context``, ``/help``, ``/tools``): a character typed while it is open
closes it and goes on into the prompt, so no key press goes nowhere."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen


class ReadingOverlay(ModalScreen[None]):
    """Its bindings (Esc, ``q``, …) close it; any other character closes it and is typed (``keep``).

    Keys come in bursts (fast typing, a key held, an IME's committed text), and those already
    sent to it when it closes would be dropped with it: it closes at once but leaves the screen
    only once it has nothing left to handle, handing each of them to the prompt in order (its own
    closing keys aside, which did their work, until a key has gone on: an Enter after ``hi`` sends it)."""

    def __init__(self, keep: Callable[[events.Key], None] | None = None) -> None:
        super().__init__(classes="overlay")
        self._keep = keep
        self._shut = False
        self._left = False
        self._closers = frozenset(  # the keys of its "dismiss" bindings
            key.strip()
            for binding in self.BINDINGS
            if isinstance(binding, Binding) and binding.action == "dismiss"
            for key in binding.key.split(",")
        )
        self._typed = False  # a key went on to the prompt: a closing key after it is the prompt's (Enter sends)

    def on_key(self, event: events.Key) -> None:
        closing = event.key in self._closers
        if self._shut:
            event.stop()
            event.prevent_default()
            if self._keep is not None and (event.is_printable or not closing or self._typed):
                self._keep(event)
                self._typed = True
        elif closing:  # here, not as a binding: that would be handled after the keys behind it
            event.stop()
            event.prevent_default()
            self._shut = True
        elif self._keep is not None and event.is_printable and event.key not in self.active_bindings:
            event.stop()
            event.prevent_default()
            self._shut = True
            self._typed = True
            self._keep(event)

    async def action_dismiss(self, result: None = None) -> None:
        if not self._shut:
            self._shut = True
            self.call_later(lambda: None)  # something to handle, then idle: it leaves then

    def on_idle(self) -> None:
        """Nothing left sent to it: it leaves the screen (once)."""
        if self._shut and not self._left:
            self._left = True
            self.dismiss()
