"""Themes from ``themes/*.toml``, loaded as Textual ``Theme``s.

The shipped folder and the user's ``<config>/themes`` are read; a user theme
with a shipped name wins. Our own variables (thinking colours, gauge colours)
get defaults derived from any theme, so Textual's built-in themes work too.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from textual.theme import Theme

from tractui.config.paths import config_dir, shipped_dir
from tractui.errors import ThemeError

DEFAULT_THEME = "tractui-dark"
OUR_VARIABLES = (
    "thinking-background",
    "thinking-foreground",
    "gauge-ok",
    "gauge-warning",
    "gauge-error",
    "gauge-empty",
    "user-accent",
)
_COLOUR_FIELDS = {f.name for f in fields(Theme)} - {"name", "variables", "dark", "ansi"}


@dataclass(frozen=True, slots=True)
class LoadedThemes:
    themes: list[Theme]
    problems: list[str]  # one line per theme file that could not be used


def theme_dirs() -> list[Path]:
    return [shipped_dir("themes"), config_dir() / "themes"]


def load_theme(path: Path) -> Theme:
    """One theme file; ``ThemeError`` with a one-line reason naming the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ThemeError(f"theme {path.name}: {exc}") from None
    name = data.pop("name", path.stem)
    variables = data.pop("variables", {})
    dark = data.pop("dark", True)
    unknown = sorted(set(data) - _COLOUR_FIELDS)
    if unknown or "primary" not in data:
        why = f"unknown keys {', '.join(unknown)}" if unknown else "missing 'primary'"
        raise ThemeError(f"theme {path.name}: {why}")
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeError(f"theme {path.name}: [variables] must map names to colour strings")
    if wrong := sorted(key for key, value in data.items() if not isinstance(value, str)):
        raise ThemeError(f'theme {path.name}: {", ".join(wrong)} must be a colour string, like "#e0a030"')
    try:
        theme = Theme(name=str(name), dark=bool(dark), variables=dict(variables), **data)
        theme.to_color_system()  # validates every colour now, not at first paint
    except Exception as exc:  # Textual raises several colour parse errors
        raise ThemeError(f"theme {path.name}: {exc}") from None
    return theme


def load_themes(dirs: list[Path] | None = None) -> LoadedThemes:
    found: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in dirs if dirs is not None else theme_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme(path)
            except ThemeError as exc:
                problems.append(str(exc))
                continue
            found[theme.name] = theme
    return LoadedThemes(list(found.values()), problems)


def variable_defaults(generated: dict[str, str], dark: bool) -> dict[str, str]:
    """Our variables for a theme that does not set them, from its own palette."""
    return {
        "thinking-background": generated["surface-lighten-1" if dark else "surface-darken-1"],
        "thinking-foreground": generated.get("foreground-muted", generated["foreground"]),
        "gauge-ok": generated["success"],
        "gauge-warning": generated["warning"],
        "gauge-error": generated["error"],
        "gauge-empty": generated["panel"],
        "user-accent": generated["primary"],
    }
