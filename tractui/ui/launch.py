"""``tractui`` with no ``-p``: resolve the start-up, open the history, run the app."""

from __future__ import annotations

import sys
from typing import Any


def run_app(args: Any) -> int:
    """Run the interactive app; a bad flag or profile is one line on stderr and exit 2."""
    from tractui.startup import resolve_startup
    from tractui.store.db import StoreError
    from tractui.store.history import HistoryStore

    try:
        startup = resolve_startup(args)
        store = HistoryStore()
    except (ValueError, StoreError) as err:  # ProfileError, SettingError, StartupError, StoreError: one line each
        print(f"tractui: {err}", file=sys.stderr)
        return 2
    from tractui.session import Conversation
    from tractui.ui.app import TractApp

    conversation = Conversation(store, startup.settings, startup.config, profile_name=startup.profile_name)
    resume = getattr(args, "resume", None)
    if getattr(args, "continue_", False) or resume is not None:
        try:
            conversation.open_session(resume or None)
        except StoreError as err:
            store.close()
            print(f"tractui: {err}", file=sys.stderr)
            return 2
    app = TractApp(conversation, notices=startup.notices, theme=startup.theme)
    try:
        result = app.run()
    finally:
        store.close()
    return result or 0
