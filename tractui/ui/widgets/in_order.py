"""Text boxes whose own keys (Backspace, Delete, Home, the arrows, Enter, …) act in their place
among the characters typed around them.

Textual runs a widget's bindings once the key, not handled on its way, has bubbled up to the app,
a few turns of the message queues later; a text box inserts a character as soon as it gets it.
In a burst (``BSpace d`` arriving at once: a fast typist, ``tmux send-keys``) the character
after Backspace was inserted first and Backspace then deleted it. Textual's parser reads the
burst right; only the order of handling was wrong.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from textual import events
from textual.binding import BindingsMap
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Input


@cache
def own_actions(kind: type[Widget]) -> dict[str, list[str]]:
    """The actions of ``kind``'s own (not priority) bindings by key, merged over its bases as
    Textual merges them: a class's bindings for a key replace its bases' (keymaps: the app sets none)."""
    actions: dict[str, list[str]] = {}
    for base in reversed(kind.__mro__):
        if issubclass(base, DOMNode):
            for key, bindings in BindingsMap(base.__dict__.get("BINDINGS", [])).key_to_bindings.items():
                actions[key] = [binding.action for binding in bindings if not binding.priority]
    return actions


# a plain class at run time: Textual takes a widget's CSS type names and component classes from
# its first base that is a DOMNode, which must stay the Textual widget
if TYPE_CHECKING:
    _Mixin = Widget
else:
    _Mixin = object


class KeysInOrder(_Mixin):
    """Mixin (before the Textual widget): the widget's own bindings run when it gets the key,
    in order with the characters it inserts; a key none of them takes goes on as before."""

    async def _on_key(self, event: events.Key) -> None:
        for action in own_actions(type(self)).get(event.key, ()):
            if await self.app.run_action(action, self):
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)


class TextField(KeysInOrder, Input):
    """Textual's one-line text box, its keys in order: every one the app shows is one."""
