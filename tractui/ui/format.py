"""Short human forms for numbers the UI shows: token counts and durations."""

from __future__ import annotations


def tokens(n: int) -> str:
    """``950``, ``1.3k``, ``52.1k``, ``200k``, ``1.2M`` (k = 1000, as providers quote windows)."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        value = n / 1000
        return f"{value:.1f}k".replace(".0k", "k") if value < 100 else f"{value:.0f}k"
    value = n / 1_000_000
    return f"{value:.1f}M".replace(".0M", "M")


def duration(seconds: float) -> str:
    """``4s``, ``1m 05s``."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    return f"{whole // 60}m {whole % 60:02d}s"
