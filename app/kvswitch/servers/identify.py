"""Name the server behind a port from how it answers: the one routine both detection and verify use.

Each server has a route only it serves, in a shape only it uses (see each module's ``port_answer``);
a port is named only when one of those answers. The transport is the caller's (``get``), so the
desktop's short-timeout probe and verify's bounded reads share the same knowledge.

Where nothing can be asked (a URL in an imported settings file), :func:`server_for_url_among` guesses
from the address alone, by the same servers' preset hosts and default ports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from kvswitch.servers.base import Get, PortFacts, Server

#: host names that mean "this machine"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


@dataclass(frozen=True)
class Identified:
    server: Server
    facts: PortFacts


def identify_among(get: Get, servers: Iterable[Server]) -> Identified | None:
    """The first server whose route answers in its shape, with what it said; ``None`` otherwise.

    Exceptions from ``get`` (a hung port) propagate, so the caller can stop asking that port.
    """
    for server in servers:
        signature = server.port_answer
        if signature is None:
            continue
        status, payload = get(signature.route)
        if signature.shape(status, payload):
            return Identified(server, signature.facts(get, payload))
        if signature.fallback is not None:
            facts = signature.fallback(get, status)
            if facts is not None:
                return Identified(server, facts)
    return None


def server_for_url_among(url: str, servers: Iterable[Server]) -> Server | None:
    """The server ``url`` most likely points at, from the address alone; ``None`` when nothing says.

    A hosted API is named by its preset's host (a preset on loopback names no host), a local server
    by its default port on a loopback host.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:  # not a number: no default port
        port = None
    on_loopback = host in LOOPBACK_HOSTS
    for server in servers:
        if server.local:
            if on_loopback and port is not None and server.port == port:
                return server
        elif not on_loopback and host and urlsplit(server.base_url).hostname == host:
            return server
    return None
