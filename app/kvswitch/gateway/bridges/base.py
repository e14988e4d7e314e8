"""The bridge interface (kept apart from ``__init__`` so that bridges import it without a circle)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from kvswitch.core.models import MESSAGES_PROTOCOL, WireProtocol

#: the route each protocol is served on, relative to a base URL that ends before ``/v1``
ROUTES: dict[WireProtocol, str] = {
    MESSAGES_PROTOCOL: "/v1/messages",
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
}


class BridgeRequestError(ValueError):
    """A client request the bridge cannot convert: answer ``status`` / ``body`` (the client's error
    shape) without forwarding anything."""

    def __init__(self, status: int, body: bytes, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass
class BridgeUsage:
    """Token counts of one answer, as the client's protocol states them (filled while converting)."""

    input_tokens: int | None = None  # without the cached part (the Messages API's meaning)
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
