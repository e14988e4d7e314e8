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
SECRET_HEADERS = frozenset({
    "x-api-key", "authorization", "proxy-authorization", "cookie", "set-cookie", "api-key",
    "x-goog-api-key", "x-auth-token", "x-access-token", "x-kvswitch-token",
})
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
        return {key: MASK if isinstance(key, str) and is_secret_name(key) and isinstance(item, str) and item
                else mask_json(item, _depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [mask_json(item, _depth + 1) for item in value]
    return value


#: a credential-named header, query parameter or JSON/Python key followed by its value, in free text
_NAMED_VALUE = re.compile(
    r"""(?P<name>[A-Za-z][\w-]{0,40})(?P<sep>["']?\s*[:=]\s*["']?(?>(?:(?:bearer|basic|token)\s+)?))"""
    r"""(?![•…])(?P<value>[^\s"',;&}\]]{4,})""",  # (not a value masked already)
    re.IGNORECASE,
)
#: the password of a URL's user-info (``scheme://user:password@host``)
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][\w+.-]*://[^/\s:@]*:)(?P<password>[^/\s@]+)(?=@)")
#: key shapes that need no name: the vendors' ``sk-...`` and a bare ``Bearer <token>``
_KEY_SHAPES = (
    re.compile(r"\b(sk-[A-Za-z0-9_-]{4})[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]{4,}"),
)


def mask_text(text: str, mask: str = MASK) -> str:
    """Free text (an error message, a log line, a report) with every credential-shaped part masked:
    the values of credential-named headers, parameters and keys (by ``is_secret_name``, the rule the
    other functions here use), URL passwords, ``sk-`` keys and bearer tokens.

    Values KV Switch knows by value (profile keys) are hidden by ``knownsecrets.hide_known`` first;
    this catches what it does not know, whatever sent it.
    """
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + mask, text)
    text = _NAMED_VALUE.sub(
        lambda m: m.group("name") + m.group("sep") + mask if is_secret_name(m.group("name")) else m.group(0),
        text,
    )
    for pattern in _KEY_SHAPES:
        text = pattern.sub(lambda m: m.group(1) + mask, text)
    return text
