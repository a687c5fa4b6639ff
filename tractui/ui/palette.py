"""The slash commands in Textual's command palette (Ctrl+P).

The palette only says what was chosen, by message to the screen it was opened
over: the conversation's screen runs the command or puts it in the prompt.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message

from tractui.conversation.commands import COMMANDS, CommandSpec


class RunSlashCommand(Message):
    """Run ``line`` as if typed and sent."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class PrefillPrompt(Message):
    """Put ``text`` in the prompt for the user to finish."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class SlashCommands(Provider):
    """A command that cannot run without its argument is put in the prompt to finish; the rest run at once."""

    def _choose(self, spec: CommandSpec) -> None:
        line = f"/{spec.name}"
        self.screen.post_message(PrefillPrompt(f"{line} ") if spec.needs_argument else RunSlashCommand(line))

    async def discover(self) -> Hits:
        for spec in COMMANDS:
            yield DiscoveryHit(f"/{spec.name}", partial(self._choose, spec), help=spec.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for spec in COMMANDS:
            name = f"/{spec.name}"
            score = matcher.match(f"{name} {spec.help}")
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self._choose, spec), help=spec.help)
