"""``config.toml``: the default profile and the theme, kept with any keys a newer tractui wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tractui.config import toml_edit
from tractui.config.files import parse_toml, validated, write_private
from tractui.config.mcp import McpConfig
from tractui.config.paths import config_dir as default_config_dir
from tractui.errors import ProfileError


class AppConfig(BaseModel):
    """``config.toml``: the default profile and theme. Unknown keys are kept, and reported."""

    model_config = ConfigDict(extra="allow")

    default_profile: str | None = None
    theme: str | None = None
    mcp: McpConfig = Field(default_factory=McpConfig)

    @property
    def unknown_keys(self) -> list[str]:
        return sorted(self.model_extra or {})

    def chosen(self) -> dict[str, Any]:
        """Only what someone chose: what the file would say."""
        return self.model_dump(exclude_none=True, exclude_defaults=True)


def app_config_path(config_dir: Path | None = None) -> Path:
    return (config_dir or default_config_dir()) / "config.toml"


def load_app_config(config_dir: Path | None = None) -> AppConfig:
    """Read ``config.toml``; a missing file is the empty config, a broken one a ``ProfileError``."""
    path = app_config_path(config_dir)
    text = _read(path)
    return AppConfig() if text is None else _parsed(text, path)


def save_app_config(config: AppConfig, config_dir: Path | None = None) -> Path:
    """Write ``config`` to ``config.toml`` as the edits that turn the file there into it: what the
    file says besides (comments, blank lines, key order, keys at their defaults) stays."""
    path = app_config_path(config_dir)
    text = _read(path)
    if text is None:
        write_private(path, toml_edit.dumps(config.chosen()))
        return path
    before, after = _parsed(text, path).chosen(), config.chosen()
    edited = toml_edit.edited(text, path, lambda doc: toml_edit.merge(doc, before, after))
    if _parsed(edited, path).chosen() != after:  # the edit must say what was asked, or the file stays
        raise ProfileError(f"cannot write {path}: the edit would not read back as asked; the file is left as it is")
    write_private(path, edited)
    return path


def update_app_config(config_dir: Path | None = None, **changes: Any) -> AppConfig:
    """Change some keys of ``config.toml`` and keep the rest (e.g. the UI saving a theme)."""
    config = load_app_config(config_dir).model_copy(update=changes)
    save_app_config(config, config_dir)
    return config


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise ProfileError(f"{path}: cannot read ({err})") from None


def _parsed(text: str, path: Path) -> AppConfig:
    data = parse_toml(text, path)
    return validated(lambda: AppConfig(**data), str(path))
