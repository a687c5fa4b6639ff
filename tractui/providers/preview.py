"""What a request will carry besides the conversation: the parameters a setting turns into.

Derived from the provider's own ``build_request`` (no second table to drift):
``/set`` says whether a change reaches the server and as what, and ``/set``
alone lists the reasoning parameters the next request sends.
"""

from __future__ import annotations

import json
from typing import Any

from tractui.core.content import Content
from tractui.core.settings import Settings
from tractui.errors import UserError
from tractui.providers import make_provider
from tractui.providers.config import ProviderConfig

_CONVERSATION = {"model", "messages", "contents", "input", "stream", "stream_options", "system", "instructions"}
_CONVERSATION |= {"systemInstruction", "tools", "include", "store"}


def sent_parameters(config: ProviderConfig, settings: Settings) -> dict[str, Any]:
    """The request body's parameters for ``settings``, the conversation itself left out.

    A setting the provider would refuse (``RequestError``) comes back as ``{"refused": line}``.
    """
    provider = make_provider(config)
    try:
        body = provider.build_request([Content.human("·")], settings)
    except UserError as err:
        return {"refused": str(err)}
    return {k: v for k, v in body.items() if k not in _CONVERSATION}


def describe_parameters(parameters: dict[str, Any]) -> str:
    if not parameters:
        return "no parameters besides the conversation"
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}" for k, v in parameters.items())


def setting_effect(config: ProviderConfig, before: Settings, after: Settings) -> str:
    """How a change shows in the next request: what it now sends, or that it is not sent at all."""
    old, new = sent_parameters(config, before), sent_parameters(config, after)
    if "refused" in new:
        return f"the next request would be refused: {new['refused']}"
    if old == new:
        return f"not sent to this {config.provider} server as things are; the request sends {describe_parameters(new)}"
    changed = {k: v for k, v in new.items() if old.get(k) != v}
    gone = [k for k in old if k not in new]
    parts = [describe_parameters(changed)] if changed else []
    parts += [f"no {k}" for k in gone]
    return f"the next request sends {', '.join(parts)}"
