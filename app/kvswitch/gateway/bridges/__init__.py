"""Protocol bridges: a client's wire protocol in, a backend's out, without moving the prompt prefix.

A bridge is pure: it turns one client request body into one upstream request body, and feeds the
upstream's answer (JSON or SSE bytes, chunk by chunk) back out in the client's shape. The gateway owns
the sockets; a bridge never does I/O. The one rule that makes a bridge safe for a prompt cache: the
converted request of turn N+1 starts with exactly the bytes of turn N's converted request up to its
last message (fixed key order, no ids, dates or counters, earlier messages never re-shaped).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from kvswitch.core.models import WireProtocol

#: the route each protocol is served on, relative to a base URL that ends before ``/v1``
ROUTES: dict[WireProtocol, str] = {
    "anthropic": "/v1/messages",
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
}


@dataclass
class BridgeUsage:
    """Token counts of one answer, as the client's protocol states them (filled while converting)."""

    input_tokens: int | None = None  # without the cached part (Anthropic's meaning)
    cached_tokens: int | None = None
    output_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ResponseConverter(ABC):
    """Upstream answer bytes in, client answer bytes out; one instance per request."""

    usage: BridgeUsage

    @abstractmethod
    def feed(self, chunk: bytes) -> bytes:
        """Convert the next piece of the upstream's body; returns what can be sent to the client now."""

    @abstractmethod
    def close(self) -> bytes:
        """The upstream's body ended: whatever the client still needs (final events)."""


class Bridge(ABC):
    """Speaks ``client`` to the client and ``upstream`` to the backend."""

    client: WireProtocol
    upstream: WireProtocol

    @abstractmethod
    def convert_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """The upstream request for the client's ``body`` (deterministic: same input, same bytes)."""

    @abstractmethod
    def response_converter(self, request: dict[str, Any], *, streaming: bool) -> ResponseConverter:
        """A converter for the answer to ``request`` (the client's original body)."""

    @abstractmethod
    def convert_error(self, status: int, body: bytes) -> bytes:
        """An upstream error body in the client's error shape."""


def dump_body(body: dict[str, Any]) -> bytes:
    """The one serialisation of a converted request: insertion order, compact, UTF-8 (byte-stable)."""
    import json

    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def pick_bridge(client: WireProtocol, upstream: WireProtocol) -> Bridge | None:
    """The bridge from ``client`` to ``upstream``; ``None`` when they are the same (pass-through).

    Raises ``LookupError`` for a pair no bridge serves.
    """
    if client == upstream:
        return None
    raise LookupError(f"no bridge from {client} to {upstream}")
