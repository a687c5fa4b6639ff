"""Profiles: a provider, a model and the settings that go with them, as TOML files.

User profiles live in ``config_dir()/profiles``; the shipped ones in the
package. A user profile of the same name wins. A profile names the
environment variable holding the API key, never the key: anything that looks
like a key is refused on save and warned about on load. Files are written
atomically (temp file + rename) and readable by the owner only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tractui.config.files import parse_toml, validated, write_private
from tractui.config.paths import config_dir as default_config_dir
from tractui.config.paths import shipped_dir
from tractui.config.profile_file import flatten, profile_text, profile_to_toml
from tractui.core.settings import Settings, closest, parse_value, spec_for
from tractui.core.urls import url_credentials
from tractui.errors import ProfileError, SettingError
from tractui.providers.config import PROVIDERS, ProviderConfig

FIELDS = ("provider", "model", "base_url", "api_key_env", "description", "settings")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ENV_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Prefixes of real API keys (OpenAI, Anthropic, OpenRouter, Google, xAI, Groq,
# Hugging Face, GitHub, AWS, Replicate, Perplexity): at the start of a value,
# or anywhere when followed by a key-length run of key characters.
_KEY_PREFIXES = ("sk-", "sk_", "AIza", "xai-", "gsk_", "hf_", "ghp_", "github_pat_", "AKIA", "r8_", "pplx-")
_KEY_INSIDE = re.compile(
    r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(p) for p in _KEY_PREFIXES) + r")[A-Za-z0-9_\-]{16,}"
)


def looks_like_key(value: str) -> bool:
    """True when ``value`` starts with, or contains, something shaped like an API key."""
    text = value.strip()
    if text.lower().startswith("bearer "):
        return True
    return text.startswith(_KEY_PREFIXES) or _KEY_INSIDE.search(text) is not None


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ProfileError(f"bad profile name '{name}': use letters, digits, '.', '_' or '-' (at most 64)")
    return name


class Profile(BaseModel):
    """One profile as loaded: provider config plus settings values in canonical form.

    ``settings`` keeps every key the file names (defaults included), so a
    profile says what it means even if a default changes later.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    description: str | None = None
    mcp_servers: tuple[str, ...] | None = None  # the MCP servers this profile uses; all enabled ones when absent
    settings: dict[str, Any] = Field(default_factory=dict)
    other_keys: dict[str, Any] = Field(default_factory=dict)  # top-level keys tractui does not read, kept on save
    warnings: tuple[str, ...] = Field(default=(), exclude=True)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        if value not in PROVIDERS:
            raise ValueError(f"unknown provider '{value}': expected {', '.join(PROVIDERS)}")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_var_name(cls, value: str | None) -> str | None:
        if value and not _ENV_VAR.match(value):
            raise ValueError(
                "api_key_env must be the name of an environment variable, e.g. OPENAI_API_KEY ('' = no key)"
            )
        return value

    @field_validator("settings")
    @classmethod
    def _canonical_settings(cls, values: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, raw in values.items():
            try:
                spec = spec_for(key)
                out[spec.key] = parse_value(spec, raw)
            except SettingError as err:  # pydantic reports ValueErrors as validation errors
                raise ValueError(str(err)) from None
        return out

    def provider_config(self) -> ProviderConfig:
        return ProviderConfig(
            provider=self.provider, model=self.model, base_url=self.base_url, api_key_env=self.api_key_env
        )

    def make_settings(self) -> Settings:
        return Settings(self.settings)

    @classmethod
    def from_session(
        cls,
        name: str,
        config: ProviderConfig,
        settings: Settings,
        mcp_servers: tuple[str, ...] | None = None,
        over: Profile | None = None,
    ) -> Profile:
        """The profile that reproduces a running session: its provider, changed settings and MCP
        servers; saved ``over`` a profile, with what that one's file says besides (its description,
        keys tractui does not read), which the session cannot know."""
        return cls(
            name=check_name(name),
            provider=config.provider,
            model=config.model,
            base_url=config.base_url,
            api_key_env=config.api_key_env,
            description=over.description if over is not None else None,
            mcp_servers=mcp_servers,
            settings=settings.changed(),
            other_keys=over.other_keys if over is not None else {},
        )


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    """A row of ``/profile list``: ``problem`` says why a file would not load."""

    name: str
    source: Literal["user", "shipped"]
    path: Path
    provider: str | None
    model: str | None
    shadowed: bool = False  # a shipped profile hidden by a user one of the same name
    problem: str | None = None


class ProfileStore:
    """Reads user and shipped profiles, writes and deletes user ones."""

    def __init__(self, config_dir: Path | None = None, shipped: Path | None = None) -> None:
        self.user_dir = (config_dir or default_config_dir()) / "profiles"
        self.shipped_dir = shipped or shipped_dir("profiles")

    def path_for(self, name: str) -> Path | None:
        """Where ``name`` would load from: the user file if any, else the shipped one."""
        check_name(name)
        for folder in (self.user_dir, self.shipped_dir):
            path = folder / f"{name}.toml"
            if path.is_file():
                return path
        return None

    def load(self, name: str) -> Profile:
        path = self.path_for(name)
        if path is None:
            there = self.user_dir / f"{name}.toml"
            if there.is_dir() or there.is_symlink():  # not "no profile named": it is listed, and it is there
                what = "a folder" if there.is_dir() else "a link to nothing"
                raise ProfileError(f"cannot load profile '{name}': {there} is {what}")
            available = ", ".join(
                entry.name for entry in self.entries() if entry.problem is None and not entry.shadowed
            )
            raise ProfileError(f"no profile named '{name}' (available: {available or 'none'})")
        return read_profile(path, name)

    def save(
        self,
        name: str,
        config: ProviderConfig,
        settings: Settings,
        mcp_servers: tuple[str, ...] | None = None,
        over: Profile | None = None,
    ) -> Path:
        """Save a session as profile ``name`` (``Profile.from_session``)."""
        profile = validated(
            lambda: Profile.from_session(name, config, settings, mcp_servers, over), f"profile '{name}'"
        )
        return self.write(profile)

    def write(self, profile: Profile) -> Path:
        """Write ``profile`` as a user profile, refusing anything that looks like a key."""
        check_name(profile.name)
        data = profile_to_toml(profile)
        if profile.base_url and (found := url_credentials(profile.base_url)):
            raise ProfileError(
                f"refusing to save profile '{profile.name}': base_url carries a credential ({', '.join(found)}); "
                "remove it from the URL, put the key in an environment variable and name it with api_key_env"
            )
        for field, value in _strings(data):
            if looks_like_key(value):
                raise ProfileError(
                    f"refusing to save profile '{profile.name}': {field} looks like an API key; "
                    "put the key in an environment variable and name it with api_key_env"
                )
        path = self.user_dir / f"{profile.name}.toml"
        write_private(path, profile_text(profile, path, _existing(path)))
        return path

    def entries(self) -> list[ProfileEntry]:
        """User and shipped profiles by name, user first; broken files are listed with their problem."""
        entries: list[ProfileEntry] = []
        user_names = {p.stem for p in _toml_files(self.user_dir)}
        sources: tuple[tuple[Literal["user", "shipped"], Path], ...] = (
            ("user", self.user_dir),
            ("shipped", self.shipped_dir),
        )
        for source, folder in sources:
            for path in _toml_files(folder):
                shadowed = source == "shipped" and path.stem in user_names
                try:
                    profile = read_profile(path, path.stem)
                except ProfileError as err:
                    entries.append(ProfileEntry(path.stem, source, path, None, None, shadowed, str(err)))
                else:
                    entries.append(ProfileEntry(path.stem, source, path, profile.provider, profile.model, shadowed))
        return sorted(entries, key=lambda e: (e.name, e.source != "user"))

    def names(self) -> list[str]:
        return sorted({e.name for e in self.entries()})

    def delete(self, name: str) -> Path:
        path = self.user_dir / f"{check_name(name)}.toml"
        if path.is_file():
            path.unlink()
            return path
        if (self.shipped_dir / f"{name}.toml").is_file():
            raise ProfileError(f"'{name}' is a shipped profile; only user profiles can be deleted")
        raise ProfileError(f"no user profile named '{name}'")


def read_profile(path: Path, name: str) -> Profile:
    """Parse and validate one profile file; every error names the file and the line or key."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ProfileError(f"{path}: cannot read ({err})") from None
    data = parse_toml(text, path)
    warnings: list[str] = []
    for key in data:
        if key not in FIELDS and key not in ("name", "mcp_servers"):
            warnings.append(f"{path}: unknown key '{key}' ignored{_field_hint(key)}")
    for field in ("provider", "model"):
        if field not in data:
            raise ProfileError(f"{path}: missing '{field}'")
    for field in FIELDS[:-1]:
        if field in data and not isinstance(data[field], str):
            raise ProfileError(f"{path}{_line_of(text, field)}: '{field}' must be a string")
    raw_settings = data.get("settings", {})
    if not isinstance(raw_settings, dict):
        raise ProfileError(f"{path}: 'settings' must be a table ([settings])")
    settings: dict[str, Any] = {}
    for key, value in flatten(raw_settings).items():
        try:
            spec = spec_for(key)
        except SettingError as err:
            warnings.append(f"{path}: ignored: {err}")
            continue
        try:
            settings[spec.key] = parse_value(spec, value)
        except SettingError as err:
            raise ProfileError(f"{path}{_line_of(text, key.rsplit('.', 1)[-1])}: {err}") from None
    base_url = data.get("base_url")
    if isinstance(base_url, str) and (found := url_credentials(base_url)):
        warnings.append(
            f"{path}: base_url carries a credential ({', '.join(found)}); it is never stored in history, but belongs "
            "in the environment variable named by api_key_env"
        )
    for field, value in _strings(data):
        if looks_like_key(value):
            warnings.append(
                f"{path}: {field} looks like an API key; keys belong in the environment variable named by api_key_env"
            )
    fields: dict[str, Any] = {k: data[k] for k in FIELDS[:-1] if k in data}
    fields["other_keys"] = {k: v for k, v in data.items() if k not in FIELDS and k != "mcp_servers"}
    if "mcp_servers" in data:
        servers = data["mcp_servers"]
        if not isinstance(servers, list) or not all(isinstance(s, str) for s in servers):
            raise ProfileError(f"{path}{_line_of(text, 'mcp_servers')}: 'mcp_servers' must be a list of server names")
        fields["mcp_servers"] = tuple(servers)
    return validated(lambda: Profile(name=name, settings=settings, warnings=tuple(warnings), **fields), str(path))


def _strings(data: Any, where: str = "") -> list[tuple[str, str]]:
    """Every string in a TOML document with its dotted location."""
    if isinstance(data, str):
        return [(where, data)]
    if isinstance(data, dict):
        return [hit for k, v in data.items() for hit in _strings(v, f"{where}.{k}" if where else str(k))]
    if isinstance(data, list):
        return [hit for item in data for hit in _strings(item, where)]
    return []


def _line_of(text: str, key: str) -> str:
    """`` (line N)`` for the first line assigning ``key``, so errors point at the spot."""
    pattern = re.compile(rf'^\s*(?:"{re.escape(key)}"|{re.escape(key)}|[\w."-]*\.{re.escape(key)})\s*=')
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return f" (line {number})"
    return ""


def _field_hint(key: str) -> str:
    try:
        spec = spec_for(key)
    except SettingError:
        near = closest(key, list(FIELDS))
        return f"; did you mean {near[0]}?" if near else ""
    return f"; settings go under [settings] ({spec.key})"


def _existing(path: Path) -> str | None:
    """The file a save edits, or ``None`` when there is none yet."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a file in the folder's place fails the write)
        return None
    except OSError as err:
        raise ProfileError(f"cannot write {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"cannot write {path}: the file there is not UTF-8 text; it is left as it is") from None


def _toml_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []
