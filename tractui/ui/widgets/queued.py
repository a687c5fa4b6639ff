"""The messages held while a reply streams, drawn above the prompt until they are sent or given back."""

from __future__ import annotations

from textual.widgets import Static

from tractui.ui.sanitize import sanitize

SHOWN_LINES = 3  # of each held message; the rest is counted
SHOWN_IN_ALL = 7  # lines under the heading, all messages together (the prompt stays in view)


class QueuedView(Static):
    """Inert: the user's own text, sanitised as every message drawn is."""

    def __init__(self) -> None:
        super().__init__("", markup=False, id="queued")
        self.display = False

    def show(self, messages: list[str], *, after: str) -> None:
        """``messages`` as they will be sent; ``after``: what they wait for ("the reply")."""
        self.display = bool(messages)
        if not messages:
            self.update("")
            return
        if len(messages) == 1:
            heading = f"⏸ queued · sent when {after} ends · ↑ takes it back to edit"
        else:
            heading = f"⏸ {len(messages)} queued · sent as one message when {after} ends · ↑ takes them back to edit"
        shown = [line for message in messages for line in _shown(sanitize(message))]
        if len(shown) > SHOWN_IN_ALL:
            shown = [*shown[: SHOWN_IN_ALL - 1], f"  … {len(shown) - SHOWN_IN_ALL + 1} more lines"]
        self.update("\n".join([heading, *shown]))


def _shown(message: str) -> list[str]:
    lines = message.removesuffix("\n").split("\n")
    if len(lines) <= SHOWN_LINES:
        return [f"› {line}" if i == 0 else f"  {line}" for i, line in enumerate(lines)]
    more = len(lines) - SHOWN_LINES + 1
    kept = lines[: SHOWN_LINES - 1]
    return [f"› {kept[0]}", *(f"  {line}" for line in kept[1:]), f"  … {more} more lines"]
