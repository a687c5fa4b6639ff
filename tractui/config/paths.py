"""Where tractui keeps its files: platformdirs, overridable for tests and power users."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def config_dir() -> Path:
    """User config: ``config.toml`` and ``profiles/``. ``TRACTUI_CONFIG_DIR`` overrides."""
    override = os.environ.get("TRACTUI_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir("tractui"))


def data_dir() -> Path:
    """User data: the history database. ``TRACTUI_DATA_DIR`` overrides."""
    override = os.environ.get("TRACTUI_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("tractui"))


def history_path() -> Path:
    """The history database inside the data folder."""
    return data_dir() / "history.db"


def shipped_dir(name: str) -> Path:
    """A shipped folder (``profiles`` or ``themes``): inside the wheel, or the repo's top level."""
    packaged = PACKAGE_DIR / "_shipped" / name
    return packaged if packaged.is_dir() else PACKAGE_DIR.parent / name
