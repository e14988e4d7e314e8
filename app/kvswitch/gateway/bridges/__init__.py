"""Protocol bridges: a client's wire protocol in, a backend's out, without moving the prompt prefix.

A bridge is pure: it turns one client request body into one upstream request body, and feeds the
upstream's answer (JSON or SSE bytes, chunk by chunk) back out in the client's shape. The gateway owns
the sockets; a bridge never does I/O. The one rule that makes a bridge safe for a prompt cache: the
converted request of turn N+1 starts with exactly the bytes of turn N's converted request up to its
last message (fixed key order, no ids, dates or counters, earlier messages never re-shaped).
"""

from __future__ import annotations

from kvswitch.core.models import MESSAGES_PROTOCOL, WireProtocol
from kvswitch.gateway.bridges.base import (
    ROUTES,
    Bridge,
    BridgeRequestError,
    BridgeUsage,
    ResponseConverter,
    dump_body,
)
from kvswitch.gateway.bridges.messages_chat import MessagesToChat
from kvswitch.gateway.bridges.responses_chat import ResponsesToChat
from kvswitch.gateway.bridges.responses_store import ResponseStore

__all__ = [
    "ROUTES",
    "Bridge",
    "BridgeRequestError",
    "BridgeUsage",
    "ResponseConverter",
    "ResponseStore",
    "dump_body",
    "pick_bridge",
]

#: the gateway's own store of Responses conversations, for ``previous_response_id`` (one per process)
DEFAULT_STORE = ResponseStore()


def pick_bridge(
    client: WireProtocol, upstream: WireProtocol, *, store: ResponseStore | None = None
) -> Bridge | None:
    """The bridge from ``client`` to ``upstream``; ``None`` when they are the same (pass-through).

    ``store`` keeps Responses conversations for ``previous_response_id`` (the process's own by
    default). Raises ``LookupError`` for a pair no bridge serves.
    """
    if client == upstream:
        return None
    if (client, upstream) == (MESSAGES_PROTOCOL, "openai_chat"):
        return MessagesToChat()
    if (client, upstream) == ("openai_responses", "openai_chat"):
        return ResponsesToChat(store if store is not None else DEFAULT_STORE)
    raise LookupError(f"no bridge from {client} to {upstream}")
