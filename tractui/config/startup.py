"""What a run starts with: provider, model and settings, from config, profile and flags.

Layers, each over the one before: ``config.toml``'s default profile (or
``--profile NAME``, or a resumed session's own setup: ``config.resumed``), then ``--provider/--model/--base-url/--api-key-env``, then
``--set KEY=VALUE``. With nothing configured the offline demo runs, with a
notice saying how to connect a real model. Used by print mode and the app.

Errors are ``UserError``s (``ProfileError``, ``SettingError``, ``StartupError``):
one line each, which the caller prints before exiting 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tractui.config.app_config import load_app_config
from tractui.config.files import validated
from tractui.config.mcp import McpConfig
from tractui.config.options import CliOptions
from tractui.config.profiles import Profile, ProfileStore
from tractui.config.resumed import Followed, describe, follow
from tractui.core.settings import Settings
from tractui.errors import ProfileError, SettingError, StartupError
from tractui.providers.config import PROVIDERS, ProviderConfig, key_env_name

if TYPE_CHECKING:
    from tractui.store.history import Commit

DEMO = ProviderConfig(provider="demo", model="demo")
DEMO_PROFILE = "demo"  # what runs when nothing is configured
DEMO_NOTICE = (
    "Demo mode: no profile configured — try `/profile load claude` or `tractui --profile kimi`; "
    "keys come from env vars (ANTHROPIC_API_KEY, MOONSHOT_API_KEY, …)"
)


@dataclass
class Startup:
    config: ProviderConfig
    settings: Settings
    profile_name: str | None
    theme: str | None
    notices: list[str] = field(default_factory=list)  # everything to tell the user at start (the app shows all)
    warnings: list[str] = field(default_factory=list)  # of those, problems in the user's files (print mode shows these)
    mcp: McpConfig = field(default_factory=McpConfig)  # config.toml's MCP servers
    mcp_servers: tuple[str, ...] | None = None  # the profile's choice among them; all when None


def resolve_startup(
    options: CliOptions,
    *,
    config_dir: Path | None = None,
    store: ProfileStore | None = None,
    last_reply: Commit | None = None,
) -> Startup:
    """Resolve what the command line chose into what the run starts with; a resumed session
    whose ``last_reply`` is given goes on with that reply's setup unless the command line chose one."""
    store = store or ProfileStore(config_dir)
    app = load_app_config(config_dir)
    warnings = [f"config.toml: unknown key '{key}' ignored" for key in app.unknown_keys]
    name, provider = options.profile, options.provider
    followed = follow(last_reply, store) if last_reply is not None and not options.chose_setup else Followed()
    default: Profile | None = None
    if not name and not provider and app.default_profile and followed.profile is None:
        try:
            default = store.load(app.default_profile)
        except ProfileError as err:
            warnings.append(f"default profile not loaded, using the demo: {err}")
    profile = store.load(name) if name else followed.profile or default
    endpoint = followed.endpoint
    if endpoint is not None and default is not None and _same_endpoint(default.provider_config(), endpoint):
        endpoint = None  # the default profile is where the last reply came from: its settings too
    if endpoint is not None:
        profile = None
    flags = (options.model, options.base_url, options.api_key_env)
    implicit = profile is None and endpoint is None and provider is None and flags == (None, None, None)
    if implicit:  # the shipped demo profile, as `/profile load demo` gives (its small window moves the gauge)
        try:
            profile = store.load(DEMO_PROFILE)
        except ProfileError as err:
            warnings.append(f"profile {DEMO_PROFILE} not loaded, using the bare demo: {err}")
    if profile is not None:
        warnings.extend(profile.warnings)
    notices = list(warnings)

    config = endpoint or _config(profile, provider, options)
    if followed.failed is not None:
        warnings.append(f"{followed.failed}; staying on {_where(profile, config)}")
        notices.append(warnings[-1])
    elif (followed.profile is not None and followed.profile.name != app.default_profile) or (
        endpoint is not None and (not _same_endpoint(endpoint, DEMO) or app.default_profile)
    ):
        notices.append(f"continuing with {_where(profile, config)}, where this session's last reply came from")
    settings = profile.make_settings() if profile is not None else Settings()
    for item in options.sets:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SettingError(f"--set needs KEY=VALUE, got '{item}'")
        settings.set(key.strip(), value.strip())

    if implicit and not (options.resumes and not options.chose_setup):
        notices.append(DEMO_NOTICE)  # a resumed session goes on with its own setup: not demo mode
    if (missing := missing_key_notice(config)) is not None:
        notices.append(missing)
    servers = profile.mcp_servers if profile is not None else None
    for name in servers or ():
        if name not in app.mcp.servers:
            warning = f"profile {profile.name if profile else ''}: no MCP server '{name}' in config.toml"
            warnings.append(warning)
            notices.append(warning)
    return Startup(config, settings, profile.name if profile else None, app.theme, notices, warnings, app.mcp, servers)


def _same_endpoint(a: ProviderConfig, b: ProviderConfig) -> bool:
    return (a.provider, a.model, a.base_url) == (b.provider, b.model, b.base_url)


def _where(profile: Profile | None, config: ProviderConfig) -> str:
    return f"profile '{profile.name}'" if profile is not None else describe(config)


def missing_key_notice(config: ProviderConfig) -> str | None:
    """Say at once when the key variable is empty, rather than at the first request."""
    env = key_env_name(config)
    if env and not os.environ.get(env, "").strip():
        return f"{env} is not set: requests to {config.model} will fail until it is (export {env}=…)"
    return None


def _config(profile: Profile | None, provider: str | None, options: CliOptions) -> ProviderConfig:
    """The profile's provider config with the command-line overrides applied, validated."""
    fields: dict[str, Any] = {}
    if profile is not None:
        fields = {
            "provider": profile.provider,
            "model": profile.model,
            "base_url": profile.base_url,
            "api_key_env": profile.api_key_env,
        }
    if provider and provider != fields.get("provider"):
        fields = {"provider": provider}  # another provider: the profile's model, URL and key variable do not apply
    for flag, value in (("model", options.model), ("base_url", options.base_url), ("api_key_env", options.api_key_env)):
        if value is not None:
            fields[flag] = value
    if "provider" not in fields:
        if len(fields) > 0:
            raise StartupError("--model, --base-url and --api-key-env need --provider or --profile")
        return DEMO
    if fields["provider"] not in PROVIDERS:
        raise StartupError(f"unknown provider '{fields['provider']}': expected one of {', '.join(PROVIDERS)}")
    if "model" not in fields:
        if fields["provider"] != "demo":
            raise StartupError(f"--provider {fields['provider']} needs --model NAME")
        fields["model"] = "demo"
    checked = validated(lambda: Profile(name="command-line", **fields), "command line")
    return checked.provider_config()
