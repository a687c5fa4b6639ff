"""The unsent draft in the prompt, kept across a quit or a kill.

Written (atomically, privately) a moment after the last change, so a killed
app loses at most that moment's typing; put back into the prompt on the next
start. A draft is a convenience: a folder it cannot be written to costs the
draft, never an error.
"""

from __future__ import annotations

from pathlib import Path

from tractui.config.files import write_private
from tractui.config.paths import data_dir
from tractui.errors import ProfileError

SAVE_AFTER = 0.5  # seconds of no typing before the draft is written


def draft_path() -> Path:
    return data_dir() / "draft.txt"


def load_draft() -> str:
    try:
        return draft_path().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def save_draft(text: str) -> None:
    """Keep ``text``; an empty prompt leaves no draft behind."""
    path = draft_path()
    try:
        if text.strip():
            write_private(path, text)
        else:
            path.unlink(missing_ok=True)
    except (OSError, ProfileError):  # a draft is a convenience: never an error of its own
        return
