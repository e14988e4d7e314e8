"""The error event that ends a pass-through event stream the gateway has to cut short (the upstream
went idle past the read-idle bound after the answer began): in the client's own protocol, shaped as
the bridges end their streams with an error, so the client reports the reason and its own retry logic
runs, instead of a broken connection or a stream that simply stops.

- Messages API (Claude Code): ``event: error`` with ``{"type": "error", "error": {"type": "api_error",
  ...}}``, the event the Messages SDK raises an ``APIError`` for;
- Chat Completions: a ``data:`` line holding ``{"error": {...}}``, which the OpenAI SDKs raise on;
- Responses (Codex): ``response.failed`` with the response's ``error`` (``server_error``), the event
  Codex turns into a retryable stream error. The response id is the one the stream announced, if any.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kvswitch.core.models import MESSAGES_PROTOCOL
from kvswitch.gateway.bridges.messages_answer import error_payload
from kvswitch.gateway.bridges.sse import encode_event

_RESPONSE_ID = re.compile(rb'"id"\s*:\s*"(resp_[A-Za-z0-9_\-]{1,200})"')


def error_event(protocol: str, message: str, head: bytes = b"") -> bytes:
    """The event that ends a stream of ``protocol`` with ``message``; ``head``: the stream's start."""
    if protocol == MESSAGES_PROTOCOL:
        return encode_event("error", error_payload(502, message))
    if protocol == "openai_responses":
        found = _RESPONSE_ID.search(head)
        response = {"id": found.group(1).decode() if found else "resp_kvswitch_cut", "object": "response",
                    "status": "failed", "error": {"code": "server_error", "message": message}}
        return encode_event("response.failed", {"type": "response.failed", "response": response})
    return encode_event(None, {"error": {"type": "server_error", "code": None, "message": message}})


def ending_for(protocol: str, head: Callable[[], bytes]) -> Callable[[str], bytes]:
    """``error_event`` for ``protocol`` as ``relay``'s ``ending`` (``head`` read when it is needed)."""
    return lambda message: error_event(protocol, message, head())
