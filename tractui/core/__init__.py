"""UI-agnostic core: content model, stream events, extraction, tokens, gauge, settings.

Nothing in this package imports Textual or httpx.
"""
