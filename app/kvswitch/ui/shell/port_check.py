"""Whether a local profile's server answers on its port: "Use" on a profile whose server is not running
switches, and says that the next request would find nothing there."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

#: a loopback connect either succeeds or is refused at once; this only bounds a firewalled address
CONNECT_TIMEOUT_S = 0.5
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "0.0.0.0")


def local_endpoint(summary: object) -> tuple[str, int] | None:
    """Host and port of a local-kind profile on this machine; None for a cloud one (or no port)."""
    kind = getattr(summary, "kind", None)
    if kind is None or not getattr(kind, "is_local", False):
        return None
    parts = urlsplit(str(getattr(summary, "base_url", "")))
    if parts.hostname not in _LOOPBACK:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return parts.hostname or "127.0.0.1", port


def port_open(host: str, port: int) -> bool:
    """On a worker: whether something accepts a TCP connection there."""
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False
