"""A conversation still being built: what the first frame shows, and how to build the rest.

The app draws its first frame from the start-up's config, settings and profile
name alone; ``build`` (store, provider, tokenizer: the slow imports) runs after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tractui.conversation.conversation import Conversation
    from tractui.core.settings import Settings
    from tractui.providers.transport import ProviderConfig


@dataclass
class PendingConversation:
    config: ProviderConfig
    settings: Settings
    profile_name: str | None
    build: Callable[[], Conversation]
    follow_session_profile: bool = False  # resumed with no --profile or --provider: take the session's own
    resuming: bool = False  # a session is opened (-c, --resume): the first frame says it is being drawn
