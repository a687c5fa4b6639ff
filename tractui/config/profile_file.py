"""A profile as a TOML file: a new file written whole, a file that is there edited in place.

Saving over a profile file changes what the session defines (provider, model,
``base_url``, ``api_key_env``, ``mcp_servers`` and the settings) and nothing
else: comments, blank lines, key order, how a setting is spelled
(``reasoning.effort`` under ``[settings]``, a ``[settings.reasoning]`` table, a
quoted key, any case), the description and keys tractui does not read stay as
the file has them (``toml_edit``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tractui.config import toml_edit
from tractui.core.settings import parse_value, spec_for
from tractui.errors import ProfileError, SettingError

if TYPE_CHECKING:
    from tractui.config.profiles import Profile

HEADER = "# tractui profile. api_key_env names the environment variable holding the key; never put a key here.\n"
SESSION_FIELDS = ("provider", "model", "base_url", "api_key_env", "mcp_servers")  # set, or removed when unset

_Place = tuple[MutableMapping[str, Any], str]  # a table of the document and a key in it


def profile_text(profile: Profile, path: Path, old: str | None) -> str:
    """The file for ``profile``: ``old`` (the file at ``path``) edited, or a new file when ``old`` is ``None``."""
    data = profile_to_toml(profile)
    if old is None:
        return HEADER + toml_edit.dumps(data)
    wanted = {key: value for key, value in profile.settings.items() if value is not None}
    text = toml_edit.edited(old, path, lambda document: _edit(document, data, wanted))
    if not _reads_back(tomllib.loads(text), data, wanted):  # the edit must say what the session has, or the file stays
        raise ProfileError(
            f"cannot write {path}: the edit would not read back as the profile; the file is left as it is"
        )
    return text


def profile_to_toml(profile: Profile) -> dict[str, Any]:
    """The TOML document for ``profile``: fields, then ``[settings]`` nested by dotted key."""
    data: dict[str, Any] = {"provider": profile.provider, "model": profile.model}
    for field in ("base_url", "api_key_env", "description"):
        value = getattr(profile, field)
        if value is not None:
            data[field] = value
    if profile.mcp_servers is not None:
        data["mcp_servers"] = list(profile.mcp_servers)
    data.update(profile.other_keys)
    settings: dict[str, Any] = {}
    for key, value in profile.settings.items():
        if value is None:  # None is the default of every optional key and TOML has no null
            continue
        *parents, leaf = key.split(".")
        table = settings
        for part in parents:
            table = table.setdefault(part, {})
        table[leaf] = list(value) if isinstance(value, tuple) else value
    if settings:
        data["settings"] = settings
    return data


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"reasoning": {"effort": "high"}}`` → ``{"reasoning.effort": "high"}``."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{full}."))
        else:
            out[full] = value
    return out


def _reads_back(read: dict[str, Any], data: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """The file as ``read_profile`` reads it has the session's setup: its fields and every setting."""
    if any(read.get(field) != data.get(field) for field in SESSION_FIELDS):
        return False
    table = read.get("settings", {})
    found: dict[str, Any] = {}
    for name, raw in flatten(table if isinstance(table, dict) else {}).items():
        try:
            key = spec_for(name).key
        except SettingError:
            continue
        found[key] = _canonical(key, raw)
    return all(
        found.get(key, spec_for(key).default) == wanted.get(key, spec_for(key).default) for key in found.keys() | wanted
    )


def _edit(document: MutableMapping[str, Any], data: dict[str, Any], wanted: dict[str, Any]) -> None:
    for field in SESSION_FIELDS:
        if field not in data:
            toml_edit.remove(document, field)
        elif _plain(document.get(field)) != data[field]:
            toml_edit.put(document, field, data[field])
    for field, value in data.items():  # what only the file knows (a description, unknown keys): added, never removed
        if field not in (*SESSION_FIELDS, "settings") and _plain(document.get(field)) != value:
            toml_edit.put(document, field, value)
    _edit_settings(document, wanted)


def _edit_settings(document: MutableMapping[str, Any], wanted: dict[str, Any]) -> None:
    """Each setting the file names is kept while it holds the session's value (a default the file
    states included), set where it is written when it holds another, removed when the session has
    the default; a setting the file does not name is added under ``[settings]``."""
    table = document.get("settings")
    if not isinstance(table, MutableMapping):  # none, or not a table (a file that did not load)
        toml_edit.remove(document, "settings")
        if wanted:
            toml_edit.put(document, "settings", _nested(wanted))
        return
    found = _settings_in(table)
    for key, places in found.items():
        spec = spec_for(key)
        value = wanted.get(key, spec.default)
        for container, leaf in places:
            if _canonical(key, container[leaf]) == value:
                continue
            if key in wanted:
                toml_edit.put(container, leaf, value)
            else:
                toml_edit.remove(container, leaf)
    for key, value in wanted.items():
        if key not in found:
            _add(table, key.split("."), value)


def _settings_in(table: MutableMapping[str, Any], prefix: str = "") -> dict[str, list[_Place]]:
    """Where each setting is written in ``table``, by its key, as ``read_profile`` reads them; keys
    that name no setting are left out (they stay as they are)."""
    out: dict[str, list[_Place]] = {}
    for name, value in table.items():
        full = f"{prefix}{name}"
        if isinstance(value, MutableMapping):
            for key, places in _settings_in(value, f"{full}.").items():
                out.setdefault(key, []).extend(places)
            continue
        try:
            key = spec_for(full).key
        except SettingError:
            continue
        out.setdefault(key, []).append((table, name))
    return out


def _canonical(key: str, raw: Any) -> Any:
    try:
        return parse_value(spec_for(key), _plain(raw))
    except SettingError:
        return _INVALID


def _add(table: MutableMapping[str, Any], parts: list[str], value: Any) -> None:
    """``value`` at the dotted path ``parts``, inside the tables already there (``[settings.reasoning]``)."""
    head, *rest = parts
    inner = table.get(head)
    if rest and isinstance(inner, MutableMapping):
        _add(inner, rest, value)
    elif rest and head in table:  # the name is taken by something else: the whole key, quoted
        toml_edit.put(table, ".".join(parts), value)
    else:
        toml_edit.put(table, head, _nested({".".join(rest): value}) if rest else value)


def _nested(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        table = out
        for part in parents:
            table = table.setdefault(part, {})
        table[leaf] = value
    return out


def _plain(item: Any) -> Any:
    """A tomlkit item as the plain value tomllib would give."""
    unwrap = getattr(item, "unwrap", None)
    return unwrap() if callable(unwrap) else item


_INVALID = object()  # a value the file holds that does not parse: unlike any value
