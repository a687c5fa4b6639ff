"""Which provider, model and key variable: what profiles and start-up need.

Kept apart from ``base`` so that reading a profile or drawing the app's first
frame does not import httpx and the provider machinery.
"""

from __future__ import annotations

from dataclasses import dataclass

PROVIDERS: dict[str, str] = {
    "openai": "tractui.providers.openai_chat:OpenAIChatProvider",
    "anthropic": "tractui.providers.anthropic:AnthropicProvider",
    "gemini": "tractui.providers.gemini:GeminiProvider",
    "openai-responses": "tractui.providers.openai_responses:OpenAIResponsesProvider",
    "demo": "tractui.providers.demo:DemoProvider",
}

DEFAULT_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


@dataclass(frozen=True)
class ProviderConfig:
    """Which endpoint and model; ``api_key_env`` names the variable holding the key.

    ``api_key_env=None`` means the provider's default variable; ``""`` means
    the server needs no key (a local Ollama, llama.cpp or vLLM).
    """

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None


def key_env_name(config: ProviderConfig) -> str | None:
    """The variable to read the key from, or ``None`` when no key is needed."""
    if config.api_key_env is not None:
        return config.api_key_env or None
    return DEFAULT_KEY_ENV.get(config.provider)
