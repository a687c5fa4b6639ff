"""Messages typed while a reply streams: held in order, then sent together as the next message
once the reply ends well, or given back to the prompt when it does not (docs/ui.md, "Queued
messages").

They are sent as one turn, not one each: the model answers what was typed meanwhile once,
and nothing it says in between can be taken for an answer to only part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

JOIN = "\n\n"  # between held messages, and in front of what the prompt holds when they go back to it

Ended = Literal["ended", "cancelled", "failed"]  # how the reply (or /compact) the messages wait for ended


def as_message(typed: str) -> str:
    """What a typed line sends: ``//`` starts a message that begins with a slash."""
    return typed[1:] if typed.startswith("//") else typed


@dataclass
class Outbox:
    """The held messages, as typed."""

    typed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.typed)

    def hold(self, text: str) -> None:
        self.typed.append(text)

    @property
    def messages(self) -> list[str]:
        """Each as it will be sent."""
        return [as_message(text) for text in self.typed]

    def in_front_of(self, prompt: str) -> str:
        """The held messages as one text, then the prompt's text: sent as it stands (``as_message``),
        it is the held messages' one message with the prompt's text after it. A ``//`` that starts
        the first is kept, the others' are not: only the start of a message is read for one."""
        if not self.typed:
            return prompt
        held = [self.typed[0], *self.messages[1:]]
        return JOIN.join([*held, prompt] if prompt else held)

    def take(self, prompt: str = "") -> str:
        """``in_front_of(prompt)``, and the outbox empty."""
        text = self.in_front_of(prompt)
        self.typed = []
        return text
