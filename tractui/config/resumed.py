"""Where a resumed session goes on: the profile its last reply came from, or the endpoint
stamped on that reply when it came from none (``--provider``/``--base-url``/``--model``, ``/model``).

Decided before the first frame (``resolve_startup``), so that the footer names the
session's own model from the start; ``/sessions`` asks the same when it opens one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tractui.config.profiles import Profile, ProfileStore
from tractui.errors import ProfileError
from tractui.providers.config import PROVIDERS, ProviderConfig

if TYPE_CHECKING:
    from tractui.store.history import Commit


@dataclass(frozen=True)
class Followed:
    """The last reply's setup: a profile that loads, an endpoint, or why its profile did not load."""

    profile: Profile | None = None
    endpoint: ProviderConfig | None = None
    failed: str | None = None  # the name of a profile that no longer loads, and why


def follow(reply: Commit, store: ProfileStore) -> Followed:
    """What ``reply`` (a session's last) came from, as the session should go on with it."""
    if reply.profile:
        try:
            return Followed(profile=store.load(reply.profile))
        except ProfileError as err:
            return Followed(
                failed=f"this session's replies came from profile '{reply.profile}', which does not load ({err})"
            )
    return Followed(endpoint=endpoint_of(reply.content.metadata))


def endpoint_of(stamps: Mapping[str, object]) -> ProviderConfig | None:
    """The provider, model and endpoint stamped on a reply (the key's variable name, never a key)."""
    provider, model = stamps.get("provider"), stamps.get("model")
    base_url, key_env = stamps.get("base_url"), stamps.get("api_key_env")
    if not isinstance(provider, str) or not isinstance(model, str) or provider not in PROVIDERS:
        return None
    return ProviderConfig(
        provider,
        model,
        base_url=base_url if isinstance(base_url, str) else None,
        api_key_env=key_env if isinstance(key_env, str) else None,
    )


def describe(config: ProviderConfig) -> str:
    """``provider · model at URL`` for the line that says where a session goes on."""
    where = f" at {config.base_url}" if config.base_url else ""
    return f"{config.provider} · {config.model}{where}"
