"""The slash commands in Textual's command palette (Ctrl+P)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tractui.conversation.commands import COMMANDS, CommandSpec

if TYPE_CHECKING:
    from tractui.ui.app import TractApp


class SlashCommands(Provider):
    """Commands that take arguments are put in the prompt to finish; the rest run at once."""

    def _choose(self, spec: CommandSpec) -> None:
        app = cast("TractApp", self.app)
        if spec.args_hint and spec.name not in ("theme", "model", "compact", "export"):
            app.prefill(f"/{spec.name} ")
        else:
            app.run_worker(app.run_command(f"/{spec.name}"), group="command")

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
