"""Where one request goes: which client sent it, which profiles may serve it, and the upstream URL,
headers and model for each of them.

Pure functions over the request's path and the profiles (no I/O), so every routing rule is tested
without a socket: ``/claude/...`` and ``/codex/v1/...`` follow the routing state that ``kvswitch use``
writes, ``/p/NAME/...`` pins a profile. Only the ``model`` value of a body is ever rewritten, in place,
so every other byte (and with it the prompt prefix a cache matches on) reaches the upstream unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kvswitch.core.gateway_config import CLIENT_PATHS, PIN_PREFIX, GatewayClient
from kvswitch.core.models import MESSAGES_PROTOCOL, Profile, WireProtocol
from kvswitch.core.presets import codex_base_url
from kvswitch.gateway.bridges import ROUTES
from kvswitch.servers.protocols import upstream_protocol as _upstream_protocol

CLIENT_PROTOCOLS: dict[GatewayClient, WireProtocol] = {"claude": MESSAGES_PROTOCOL,
                                                        "codex": "openai_responses"}
#: the routes that carry a conversation (the ones a bridge converts); everything else passes through
_CONVERSATION_ROUTES: tuple[tuple[str, WireProtocol], ...] = (
    ("/messages", MESSAGES_PROTOCOL),
    ("/chat/completions", "openai_chat"),
    ("/responses", "openai_responses"),
)
TIERS = ("opus", "sonnet", "haiku", "small_fast", "subagent")


@dataclass(frozen=True)
class Route:
    """The client side of a request: who sent it and the path below its gateway prefix."""

    client: GatewayClient | None  # None: pinned by URL
    pinned: str | None
    rest: str  # e.g. "/v1/messages" (Claude Code), "/responses" (Codex), query not included

    @property
    def protocol(self) -> WireProtocol:
        """The protocol the client speaks on this route."""
        if self.client is not None:
            return CLIENT_PROTOCOLS[self.client]
        return conversation_protocol(self.rest) or MESSAGES_PROTOCOL

    @property
    def is_conversation(self) -> bool:
        return conversation_protocol(self.rest) is not None


def conversation_protocol(rest: str) -> WireProtocol | None:
    for suffix, protocol in _CONVERSATION_ROUTES:
        if rest.endswith(suffix):
            return protocol
    return None


def parse_route(path: str) -> Route | None:
    """``/claude/v1/messages`` → claude, ``/v1/messages``; ``/p/NAME/v1/...`` → pinned; else ``None``."""
    for client, prefix in CLIENT_PATHS.items():
        if path == prefix or path.startswith(prefix + "/"):
            return Route(client, None, path[len(prefix):] or "/")
    if path.startswith(PIN_PREFIX):
        name, _, rest = path[len(PIN_PREFIX):].partition("/")
        if name:
            return Route(None, name, "/" + rest)
    return None


def upstream_protocol(profile: Profile, client: WireProtocol) -> WireProtocol:
    """What ``profile``'s backend is spoken to in for a client speaking ``client`` (the profile's
    override, else what the backend serves: ``kvswitch.servers.protocols``)."""
    return _upstream_protocol(profile, client)


def upstream_url(profile: Profile, route: Route, query: str, protocol: WireProtocol, bridged: bool) -> str:
    """The upstream URL for ``route`` on ``profile`` spoken in ``protocol``.

    Messages API routes hang below the profile's base URL as Claude Code would call it; OpenAI routes
    below the base Codex would use (``…/v1`` for local servers). A bridged request goes to the
    upstream protocol's own route, without the client's query (Claude Code's ``?beta=true`` means
    nothing to another protocol).
    """
    if bridged:  # the client's query (Claude Code's ``?beta=true``) means nothing to the other protocol
        root = profile.base_url.rstrip("/")
        if protocol != MESSAGES_PROTOCOL and root.endswith("/v1"):
            root = root[: -len("/v1")]
        return root + ROUTES[protocol]
    elif protocol == MESSAGES_PROTOCOL:
        root, path = profile.base_url.rstrip("/"), route.rest
    else:
        root = codex_base_url(profile).rstrip("/")
        doubled = route.rest.startswith("/v1/") and root.endswith("/v1")
        path = route.rest[len("/v1"):] if doubled else route.rest
    return root + path + (f"?{query}" if query else "")


def key_headers(profile: Profile, protocol: WireProtocol) -> dict[str, str]:
    """The profile's real key in the header its vendor reads (``x-api-key`` for ``ANTHROPIC_API_KEY``)."""
    if not profile.key:
        return {}
    if protocol == MESSAGES_PROTOCOL and profile.key_env == "ANTHROPIC_API_KEY":
        return {"x-api-key": profile.key}
    return {"Authorization": f"Bearer {profile.key}"}


def _tier_of(model: str, others: Iterable[Profile]) -> str | None:
    for other in others:
        for tier in TIERS:
            if getattr(other.models, tier) == model:
                return tier
        if other.model == model:
            return "main"
    lowered = model.lower()
    for family in ("opus", "sonnet", "haiku"):
        if family in lowered:
            return family
    return None


def mapped_model(model: str, profile: Profile, others: Iterable[Profile] | Callable[[], Iterable[Profile]]
                 ) -> str:
    """What ``profile`` serves for the tier ``model`` names (a Claude family name, or an id another
    profile uses for a tier); ``model`` unchanged when the profile names no model of its own.
    ``others`` may be a function: it is only called when the model is not the profile's own."""
    own = {profile.model, *(getattr(profile.models, tier) for tier in TIERS)} - {None}
    if model in own or not own:
        return model
    tier = _tier_of(model, others() if callable(others) else others)
    choice: str | None = None
    if tier in TIERS:
        choice = getattr(profile.models, tier)
        if choice is None and tier == "small_fast":
            choice = profile.models.haiku
    return choice or profile.model or model


#: the common case, in one match: ``model`` is the object's first member (Claude Code, Codex)
_FIRST_MEMBER = re.compile(rb'\A\s*\{\s*"model"\s*:\s*("(?:[^"\\]|\\.)*")')
_SPACE = re.compile(r"[ \t\n\r]*")
#: the standard library's C scanner: one call reads one whole member value and says where it ends
_SCAN_VALUE = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def top_level_model_spans(raw: bytes) -> list[tuple[int, int]]:
    """Byte spans of the values of the body's own ``model`` members (string values only), never a
    ``"model"`` nested in the conversation, a tool's input or a quoted JSON text.

    One ``"model"`` in the whole body, written first, is found by one match (Claude Code's and
    Codex's bodies); anything else by walking the top-level members, each value read whole by the C
    scanner (so brackets and quotes inside it never count). ``raw`` is a body ``parse_json_body``
    accepted; anything unexpected gives no span (the body then goes on unchanged)."""
    first = _FIRST_MEMBER.match(raw)
    if first is not None and raw.count(b'"model"') == 1:
        return [first.span(1)]
    try:
        text = raw.decode("utf-8")
        spans = _member_spans(text)
    except (UnicodeDecodeError, ValueError, StopIteration, IndexError, RecursionError):
        return []
    if text.isascii():
        return spans
    return [(len(text[:start].encode()), len(text[:end].encode())) for start, end in spans]


def _member_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the string values of ``model`` members of the object ``text`` holds."""
    at = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text[at] != "{":
        return []
    at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    spans: list[tuple[int, int]] = []
    while text[at] == '"':
        key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if text[at] != ":":
            return []
        start = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        value, at = _SCAN_VALUE(text, start)
        if key == "model" and isinstance(value, str):
            spans.append((start, at))
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if text[at] != ",":
            break
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    return spans


def rewrite_model(raw: bytes, body: Any, new_model: str) -> bytes:
    """``raw`` with only the top-level ``model`` value replaced (every other byte kept); a body with
    the member twice (the last one counts for a JSON parser) has both replaced."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or body["model"] == new_model:
        return raw
    spans = top_level_model_spans(raw)
    if not spans:
        return raw
    encoded = json.dumps(new_model, ensure_ascii=False).encode("utf-8")
    out = bytearray()
    last = 0
    for start, end in spans:
        out += raw[last:start] + encoded
        last = end
    return bytes(out + raw[last:])
