"""A conversation still being built: what the first frame shows, and how to build the rest.

The app draws its first frame from the start-up's config, settings and profile
name alone, then a resumed session's newest messages from ``opened``; ``build``
(provider, tools, compaction: the slow imports) runs after those are painted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tractui.conversation.conversation import Conversation
    from tractui.core.settings import Settings
    from tractui.providers.transport import ProviderConfig
    from tractui.store.history import Commit


@dataclass
class PendingConversation:
    config: ProviderConfig
    settings: Settings
    profile_name: str | None
    build: Callable[[], Conversation]
    # the session opened (-c, --resume) as the conversation will hold it: ``chain(last)``
    opened: Callable[[int | None], list[Commit]] | None = None

    @property
    def resuming(self) -> bool:
        """A session is opened: the first frame says it is being drawn."""
        return self.opened is not None
