"""The one place that decides what of a request is a secret: headers, query strings and JSON bodies.

Every output, capture, usage record and log goes through these functions, so a credential that a
client sends in an unusual place (``?key=``, ``X-Auth-Token``, a body's ``api_key``) is masked
everywhere at once instead of in the one place someone remembered.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

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
#: transport names (headers, query parameters) are named by gateways and clouds freely: any name that
#: ends in a credential word (``X-Custom-Token``, ``X-Amz-Signature``, ``X-Amz-Security-Token``,
#: ``X-Amz-Credential``, ``X-Goog-Api-Key``, ``X-Session-Key``) or speaks of auth is one. JSON keys keep
#: the narrower rule above: ``max_tokens`` and ``prompt_cache_key`` are numbers a diagnosis needs.
_SECRET_TRANSPORT = re.compile(
    r"(?:^|[-_.])(?:token|signature|sig|key|secret|password|passwd|credentials?|session)$|(?:^|[-_.])auth"
)


def is_secret_name(name: str) -> bool:
    """True for a header, query parameter or JSON key that names a credential."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or lowered in _SECRET_EXACT or bool(_SECRET_NAME.search(lowered))


def is_secret_header(name: str) -> bool:
    """True for a header or query parameter whose value is a credential (``is_secret_name`` and the
    transport names of ``_SECRET_TRANSPORT``)."""
    return is_secret_name(name) or bool(_SECRET_TRANSPORT.search(name.lower()))


def mask_headers(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` with every credential value replaced by the mask."""
    return {name: MASK if value and is_secret_header(name) else value for name, value in headers.items()}


def mask_query(target: str) -> str:
    """A path or URL with the values of credential-named query parameters masked, every other byte
    of it kept (a re-encoded query would differ from what the client sent)."""
    head, mark, rest = target.partition("?")
    if not mark or not rest:
        return target
    query, hash_mark, fragment = rest.partition("#")
    pieces = query.split("&")
    changed = False
    for index, piece in enumerate(pieces):
        name, equals, value = piece.partition("=")
        if equals and value and is_secret_header(unquote_plus(name)):
            pieces[index] = f"{name}={URL_MASK}"
            changed = True
    if not changed:
        return target
    return head + mark + "&".join(pieces) + hash_mark + fragment


def mask_url(url: str) -> str:
    """A URL as it may be shown or stored anywhere (an error text, a usage row, a banner, a status):
    the password of its user-info and the values of credential-named query parameters masked.

    The one masking path for URLs: the gateway, the recorder and their stores call this, never a
    ``split("?")`` of their own (which kept the password in ``user:password@host``).
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL at all (an unbalanced ``[``): mask it as free text
        return mask_text(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    if at and colon and password:
        url = urlunsplit((parts.scheme, f"{user}:{URL_MASK}@{host}", parts.path, parts.query, parts.fragment))
    return mask_query(url)


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
#: a URL in free text (its query is masked by ``mask_url``; a name=value scan would read it as one value)
_URL = re.compile(r"[A-Za-z][\w+.-]*://[^\s\"'<>,;]+")
#: the password of a URL's user-info (``scheme://user:password@host``)
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][\w+.-]*://[^/\s:@]*:)(?P<password>[^/\s@]+)(?=@)")
#: key shapes that need no name: the vendors' ``sk-...`` and a bare ``Bearer <token>``
_KEY_SHAPES = (
    re.compile(r"\b(sk-[A-Za-z0-9_-]{4})[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]{4,}"),
)


def _secret_in_text(name: str) -> bool:
    """A name in free text: a header's (hyphenated, ``X-Custom-Token``) by the transport rule, any other
    (a JSON or Python key such as ``prompt_cache_key``) by the narrower one."""
    return is_secret_header(name) if "-" in name else is_secret_name(name)


def mask_text(text: str, mask: str = MASK) -> str:
    """Free text (an error message, a log line, a report) with every credential-shaped part masked:
    the values of credential-named headers, parameters and keys (by ``is_secret_name``, the rule the
    other functions here use, and ``is_secret_header`` for hyphenated header names), URL passwords
    and credential-named query values of URLs (``mask_url``), ``sk-`` keys and bearer tokens.

    Values KV Switch knows by value (profile keys) are hidden by ``knownsecrets.hide_known`` first;
    this catches what it does not know, whatever sent it.
    """
    text = _URL.sub(lambda m: mask_url(m.group(0)) if "?" in m.group(0) else m.group(0), text)
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + mask, text)
    text = _NAMED_VALUE.sub(
        lambda m: m.group("name") + m.group("sep") + mask if _secret_in_text(m.group("name")) else m.group(0),
        text,
    )
    for pattern in _KEY_SHAPES:
        text = pattern.sub(lambda m: m.group(1) + mask, text)
    return text
