"""Credentials a base URL may carry: ``user:password@`` and query parameters named like a key or token.

A URL is kept in history (which server answered), in exports and in profiles;
none of them may hold a secret. ``public_url`` is the URL with those parts
removed, ``url_credentials`` names what it found (never the values), so a
refusal can say what to move into the key variable.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

# query parameter names that carry a credential: key, api_key, apiKey, access_token, token, secret, password, sig…
_SECRET_PARAM = re.compile(
    r"(?i)^(?:.*[_-])?(?:api[_-]?key|key|token|access[_-]?token|auth|authorization|secret|password|passwd|pwd|sig"
    r"|signature|credentials?)$|^(?:apikey|accesstoken|authtoken|clientsecret)$"
)


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return parts if parts.scheme and parts.netloc else None


def _secret_params(query: str) -> list[str]:
    return [name for name, _ in parse_qsl(query, keep_blank_values=True) if _SECRET_PARAM.match(name)]


def url_credentials(url: str) -> list[str]:
    """What in ``url`` carries a credential: ``user:password`` and the names of secret-looking query parameters."""
    parts = _split(url)
    if parts is None:
        return []
    found = ["user:password"] if "@" in parts.netloc else []
    return found + _secret_params(parts.query)


def public_url(url: str) -> str:
    """``url`` without user info and without secret-looking query parameters; anything else as it was."""
    parts = _split(url)
    if parts is None or not url_credentials(url):
        return url
    host = parts.netloc.rpartition("@")[2]
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _SECRET_PARAM.match(k)]
    return urlunsplit(parts._replace(netloc=host, query=urlencode(kept)))
