"""Name the server behind a port from how it answers: the one routine both detection and verify use.

Each server has a route only it serves, in a shape only it uses (see each module's ``port_answer``);
a port is named only when one of those answers. The transport is the caller's (``get``), so the
desktop's short-timeout probe and verify's bounded reads share the same knowledge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kvswitch.servers.base import Get, PortFacts, Server


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
