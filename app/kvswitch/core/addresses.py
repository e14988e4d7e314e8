"""Is this host or URL on this machine, and can its port be reached at all: the checks that decide
whether a proxy may intercept a request, whether a listener may face the network, and whether a URL
typed by the user is worth a connection attempt. A name is never resolved here: DNS must not be able
to make a remote host count as local."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP (v4 or v6); a name is never resolved, so DNS can't make it local."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    return is_loopback_host(urlsplit(url).hostname or "")


def check_url_port(url: str) -> str:
    """``url`` if its port (when given) is 1-65535; ``ValueError`` otherwise (port 0 reaches nothing)."""
    try:
        port = urlsplit(url).port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"invalid URL {url!r}: the port must be a number from 1 to 65535")
    return url
