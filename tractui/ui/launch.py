"""``tractui`` with no ``-p``: resolve the start-up, open the history, run the app.

Flags, profile and history file are checked before the app starts (a bad one
exits 2 with one line); the conversation itself is built after the first frame.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tractui.session import Conversation
    from tractui.startup import Startup
    from tractui.store.history import HistoryStore


def run_app(args: Any) -> int:
    """Run the interactive app; a bad flag, profile or session is one line on stderr and exit 2."""
    from tractui.startup import resolve_startup
    from tractui.store.db import StoreError
    from tractui.store.history import HistoryStore

    try:
        startup = resolve_startup(args)
        store = HistoryStore()
    except (ValueError, StoreError) as err:  # ProfileError, SettingError, StartupError, StoreError: one line each
        print(f"tractui: {err}", file=sys.stderr)
        return 2
    session_id: str | None = None
    resume = getattr(args, "resume", None)
    if getattr(args, "continue_", False) or resume is not None:
        try:
            session_id = store.resolve_session(resume or None)
        except StoreError as err:
            store.close()
            print(f"tractui: {err}", file=sys.stderr)
            return 2
    from tractui.ui.app import TractApp
    from tractui.ui.pending import PendingConversation

    pending = PendingConversation(
        startup.config, startup.settings, startup.profile_name, lambda: _conversation(store, startup, session_id)
    )
    app = TractApp(pending, notices=startup.notices, theme=startup.theme)
    try:
        result = app.run()
    finally:
        store.close()
    return result or 0


def _conversation(store: HistoryStore, startup: Startup, session_id: str | None) -> Conversation:
    # imported here: session pulls in providers, httpx and compaction, which the first frame does not need
    from tractui.session import Conversation

    return Conversation(store, startup.settings, startup.config, session_id=session_id, profile_name=startup.profile_name)
