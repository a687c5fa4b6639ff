"""Wire protocols: neutral history in, stream events out. No Textual here.

``make_provider(config)`` picks the module by ``config.provider``; modules are
imported lazily so one provider's import problem never breaks the others, and
so that naming a provider (profiles, start-up) does not load httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tractui.errors import UnknownProvider
from tractui.providers.config import PROVIDERS, ProviderConfig

if TYPE_CHECKING:
    import httpx

    from tractui.providers.transport import Provider


def make_provider(config: ProviderConfig, *, client: httpx.AsyncClient | None = None) -> Provider:
    """The provider for ``config``; ``client`` is shared and left open by ``aclose``."""
    target = PROVIDERS.get(config.provider)
    if target is None:
        raise UnknownProvider(f"unknown provider '{config.provider}': expected one of {', '.join(PROVIDERS)}")
    module_name, class_name = target.split(":")
    cls: type[Provider] = getattr(importlib.import_module(module_name), class_name)
    return cls(config, client=client)


__all__ = ["PROVIDERS", "ProviderConfig", "UnknownProvider", "make_provider"]
