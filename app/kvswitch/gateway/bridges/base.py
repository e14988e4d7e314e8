"""The bridge interface (kept apart from ``__init__`` so that bridges import it without a circle)."""

from __future__ import annotations

import json
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
    #: why the answer failed, once the converter ended it with an error (an error event in a stream
    #: that went out as 200, or an error object for a non-streaming one): the usage row's error
    failure: str | None = None

    @abstractmethod
    def feed(self, chunk: bytes) -> bytes:
        """Convert the next piece of the upstream's body; returns what can be sent to the client now."""

    @abstractmethod
    def close(self) -> bytes:
        """The upstream's body ended: whatever the client still needs (final events)."""

    def fail(self, message: str) -> bytes:
        """The gateway ends the answer now (the upstream went idle past the read-idle bound): the
        client's error event for a stream, a whole error answer otherwise; sets ``failure``."""
        self.failure = message
        return b""


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


def without_lone_surrogates(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (``"\\ud800"`` in JSON, which Python decodes into a
    string UTF-8 cannot encode) replaced by U+FFFD; a pair split over two pieces is joined again."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def json_bytes(value: Any, *, compact: bool = False) -> bytes:
    """The one way a bridge turns JSON into bytes: UTF-8, insertion order, no NaN.

    A lone surrogate (an upstream's answer or a client's request may hold ``"\\udc00"``, valid JSON)
    becomes U+FFFD instead of a ``UnicodeEncodeError`` that emptied the answer or failed the request
    on every profile: always the same replacement, so the converted bytes stay the same on every turn.
    """
    separators = (",", ":") if compact else None
    text = json.dumps(value, ensure_ascii=False, separators=separators, allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return without_lone_surrogates(text).encode("utf-8")


def dump_body(body: dict[str, Any]) -> bytes:
    """The one serialisation of a converted request: insertion order, compact, UTF-8 (byte-stable)."""
    return json_bytes(body, compact=True)
