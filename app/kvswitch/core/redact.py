"""The one place that decides what of a request is a secret: headers, query strings and JSON bodies.

Every output, capture, usage record and log goes through these functions, so a credential that a
client sends in an unusual place (``?key=``, ``X-Auth-Token``, a body's ``api_key``) is masked
everywhere at once instead of in the one place someone remembered.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "••••••••"
#: the mask inside a URL, where the bullets would be percent-encoded beyond recognition
URL_MASK = "REDACTED"

#: header names whose value is a credential (lower case)
SECRET_HEADERS = frozenset(
    {
        "x-api-key",
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "api-key",
        "x-goog-api-key",
        "x-auth-token",
        "x-access-token",
        "x-kvswitch-token",
    }
)
#: a header, query parameter or JSON key whose name says it holds a credential (not ``max_tokens`` or
#: ``prompt_cache_key``: counts and cache keys are what a cache diagnosis needs to see)
_SECRET_NAME = re.compile(
    r"(?:^|[-_])(?:api[-_]?key|access[-_]?token|auth[-_]?token|refresh[-_]?token|id[-_]?token|"
    r"secret|client[-_]?secret|password|passwd|credentials?)$"
)
_SECRET_EXACT = frozenset({"key", "token", "apikey", "auth", "sig", "signature", "x-api-token"})


def is_secret_name(name: str) -> bool:
    """True for a header, query parameter or JSON key that names a credential."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or lowered in _SECRET_EXACT or bool(_SECRET_NAME.search(lowered))


def mask_headers(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` with every credential value replaced by the mask."""
    return {name: MASK if value and is_secret_name(name) else value for name, value in headers.items()}


def mask_query(target: str) -> str:
    """A path or URL with the values of credential-named query parameters masked."""
    parts = urlsplit(target)
    if not parts.query:
        return target
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(is_secret_name(name) for name, _ in pairs):
        return target
    masked = [(name, URL_MASK if is_secret_name(name) and value else value) for name, value in pairs]
    query = urlencode(masked)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def mask_json(value: Any, _depth: int = 0) -> Any:
    """A decoded JSON value with the values of credential-named keys masked (the prompt is kept)."""
    if _depth > 64:
        return value
    if isinstance(value, dict):
        return {
            key: MASK
            if isinstance(key, str) and is_secret_name(key) and isinstance(item, str) and item
            else mask_json(item, _depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [mask_json(item, _depth + 1) for item in value]
    return value
