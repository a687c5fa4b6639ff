"""The prompt: a TextArea where Enter sends and Shift+Enter / Ctrl+J add a line.

Up/Down walk the input history when the cursor is on the first/last line,
and drive the completion list while it is open; Up on an empty prompt takes
back the messages queued while a reply streams, if any (``take_back``). The list's state is the
prompt's own (``Offer``), read at each key for the text as it is then: keys
typed fast come before the screen has heard of the text they follow.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.segment import Segment
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea

from tractui.ui.internals import paint_now
from tractui.ui.sanitize import unseen_controls
from tractui.ui.widgets.completion import Offer
from tractui.ui.widgets.in_order import KeysInOrder


class InputBox(KeysInOrder, TextArea):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class OfferChanged(Message):
        """Up/Down moved in the completion list or Esc closed it: the popup draws it again."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id="input", soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.clock = clock
        self.keyed_at: float | None = None  # when the prompt last handled a key (``clock``)
        self.placeholder = "Ask anything · / for commands · Enter sends · Shift+Enter newline"
        self.sent: list[str] = []
        self._walk: int | None = None
        self._draft = ""
        self.offer = Offer()
        self.take_back: Callable[[], str | None] = lambda: None  # the queued messages, unqueued; None if none

    def on_idle(self, event: events.Idle) -> None:
        """Show a typed key at once: the screen's next update may wait behind the layout of a
        streaming reply (the key's whole way to the screen: docs/ui.md, "Speed")."""
        paint_now(self)

    def render_line(self, y: int) -> Strip:
        """A line of the prompt, without the controls and BiDi overrides in its text.

        They are kept in the text (a paste arrives and is sent as it was), but written
        to the terminal they would act on it (an ESC starts a sequence). Each takes no
        cell, so the rest of the line and the cursor stay where Textual put them."""
        strip = super().render_line(y)
        if unseen_controls(text := strip.text) == text:
            return strip
        return Strip(
            [Segment(unseen_controls(segment.text), segment.style, segment.control) for segment in strip],
            strip.cell_length,
        )

    def remember(self, text: str) -> None:
        if text.strip() and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._walk = None

    def set_text(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        self.keyed_at = self.clock()  # any key, the text changed or not: the consent question's guard
        key = event.key
        if key in ("up", "down", "tab", "escape", "enter") and self._completion_key(key):
            event.stop()
            event.prevent_default()
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            self.set_text("")  # now: a key typed before the app handles this line belongs to the next one
            self.post_message(self.Submitted(text))
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "up" and not self.text and (held := self.take_back()) is not None:
            event.stop()
            event.prevent_default()
            self.set_text(held)
            return
        if key == "up" and self.cursor_location[0] == 0 and self._history_step(-1):
            event.stop()
            event.prevent_default()
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1 and self._history_step(1):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)  # the text area's own keys in order with the characters (KeysInOrder)

    def _completion_key(self, key: str) -> bool:
        """Act on the completion list for the text as it is now; False if the key is not for it."""
        text = self.text
        if key in ("tab", "enter"):
            choice = self.offer.chosen(text, first=key == "tab")
            if choice is not None and (key == "tab" or choice.text.rstrip() != text.rstrip()):
                self.set_text(choice.text)  # Enter on a row that is the text already sends it
                return True
            return key == "tab"  # with nothing to complete the prompt keeps Tab (it would move focus)
        moved = self.offer.close(text) if key == "escape" else self.offer.move(text, -1 if key == "up" else 1)
        if moved:
            self.post_message(self.OfferChanged())
        return moved

    def _history_step(self, step: int) -> bool:
        if not self.sent:
            return False
        if self._walk is None:
            if step > 0:
                return False
            self._draft = self.text
            index = len(self.sent) - 1
        else:
            index = self._walk + step
        if index >= len(self.sent):
            self._walk = None
            self.set_text(self._draft)
            return True
        if index < 0:
            return True
        self._walk = index
        self.set_text(self.sent[index])
        return True
