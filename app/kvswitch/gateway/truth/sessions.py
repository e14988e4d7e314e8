"""Which client sent a request, and which conversation (session, subagent) it belongs to.

The live cache record compares a request with the session's earlier ones, so sessions must be told
apart the way the clients themselves tell them apart:
- Claude Code sends ``x-claude-code-session-id`` on every request and ``x-claude-code-agent-id`` on a
  subagent's (its body's ``metadata.user_id`` also names the session, for older builds);
- Codex puts its session id in ``prompt_cache_key`` and ``client_metadata`` (with the agent's name in
  ``x-codex-turn-metadata``), and in a ``session_id`` header;
- a client that sends no id gets a conversation fingerprint: a hash of the start of its system text and
  its first user message, which stay put while a conversation grows.
Everything here reads headers and a few small fields of the parsed body; nothing is kept.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvswitch.core.strictparse import loads as strict_json

SESSION_HEADER = "x-claude-code-session-id"
AGENT_HEADER = "x-claude-code-agent-id"
#: session headers other clients (and gateways in front of them) send, in the order they are trusted
OTHER_SESSION_HEADERS = ("session_id", "session-id", "x-session-id", "conversation_id", "x-opencode-session",
                         "x-session-affinity")
#: product tokens of the User-Agent → the client's name in the record
_PRODUCTS = {"claude-cli": "claude-code", "claude-code": "claude-code", "codex_exec": "codex",
             "codex_cli_rs": "codex", "codex-tui": "codex", "codex_tui": "codex", "codex": "codex",
             "opencode": "opencode"}
_PRODUCT_RE = re.compile(r"^\s*([A-Za-z][\w.-]*)/(\d[\w.+-]*)")
#: the longest id kept (a client's own ids are uuids; anything longer is cut)
_ID_MAX = 80
#: how much of the system text enters a fingerprint (enough to tell clients and projects apart)
_FINGERPRINT_SYSTEM = 2048


@dataclass(frozen=True, slots=True)
class Identity:
    client_name: str | None
    client_version: str | None
    session: str | None
    agent: str | None
    #: ``header`` (the client's own id in a header), ``body`` (in the request body) or ``fingerprint``
    session_source: str | None


def identify(headers: Mapping[str, str], body: Any, route_client: str | None = None) -> Identity:
    """The client, its version and the session of one request (``headers`` case-insensitive, as aiohttp's)."""
    name, version = client_of(headers.get("user-agent", ""), headers.get("originator"))
    if name is None and route_client:
        name = route_client
    session = _clean(headers.get(SESSION_HEADER))
    agent = _clean(headers.get(AGENT_HEADER))
    if session:
        return Identity(name, version, session, agent, "header")
    for header in OTHER_SESSION_HEADERS:
        session = _clean(headers.get(header))
        if session:
            return Identity(name, version, session, agent, "header")
    found = _session_in_body(body)
    if found is not None:
        return Identity(name, version, found[0], agent or found[1], "body")
    fingerprint = conversation_fingerprint(body)
    return Identity(name, version, fingerprint, agent, "fingerprint" if fingerprint else None)


def client_of(user_agent: str, originator: str | None = None) -> tuple[str | None, str | None]:
    """(client name, version) from a User-Agent such as ``claude-cli/2.1.332 (external, cli)``."""
    match = _PRODUCT_RE.match(user_agent or "")
    if match is None:
        return (_PRODUCTS.get(originator, originator) if originator else None), None
    product, version = match.group(1), match.group(2)
    name = _PRODUCTS.get(product.lower()) or (_PRODUCTS.get(originator) if originator else None) or product
    return name[:40], version[:40]


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value[:_ID_MAX] if value else None


def _session_in_body(body: Any) -> tuple[str, str | None] | None:
    """Codex's ``prompt_cache_key`` / ``client_metadata``, Claude Code's ``metadata.user_id``."""
    if not isinstance(body, dict):
        return None
    metadata = body.get("client_metadata")
    agent = None
    if isinstance(metadata, dict):
        agent = _codex_agent(metadata.get("x-codex-turn-metadata"))
        session = metadata.get("session_id") or metadata.get("thread_id")
        if isinstance(session, str) and session.strip():
            return session.strip()[:_ID_MAX], agent
    key = body.get("prompt_cache_key")
    if isinstance(key, str) and key.strip():
        return key.strip()[:_ID_MAX], agent
    user_id = body.get("metadata", {}).get("user_id") if isinstance(body.get("metadata"), dict) else None
    if isinstance(user_id, str) and '"session_id"' in user_id:
        try:
            session = strict_json(user_id).get("session_id")
        except (ValueError, AttributeError):
            return None
        if isinstance(session, str) and session.strip():
            return session.strip()[:_ID_MAX], None
    return None


def _codex_agent(turn_metadata: Any) -> str | None:
    """The agent's name in Codex's turn metadata, unless it is the main one (``/root``)."""
    if not isinstance(turn_metadata, str) or "agent_name" not in turn_metadata:
        return None
    try:
        name = strict_json(turn_metadata).get("agent_name")
    except (ValueError, AttributeError):
        return None
    return name[:_ID_MAX] if isinstance(name, str) and name not in ("", "/root") else None


def conversation_fingerprint(body: Any) -> str | None:
    """A stable id for a conversation whose client sends none: the start of its system text and its first
    user message (both stay put while the conversation grows), hashed; ``None`` for a body without them."""
    if not isinstance(body, dict):
        return None
    digest = hashlib.blake2b(digest_size=8)
    system = body.get("system", body.get("instructions"))
    if system is not None:
        digest.update(text_of(system)[:_FINGERPRINT_SYSTEM].encode("utf-8", "replace"))
    messages = body.get("messages", body.get("input"))
    first_user = None
    if isinstance(messages, list):
        for message in messages:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role in ("system", "developer") and system is None:
                head = text_of(message.get("content"))[:_FINGERPRINT_SYSTEM]
                digest.update(head.encode("utf-8", "replace"))
            elif role == "user":
                first_user = message.get("content")
                break
    elif isinstance(messages, str):
        first_user = messages
    if first_user is None and system is None:
        return None
    digest.update(b"\x00" + text_of(first_user).encode("utf-8", "replace"))
    return "fp-" + digest.hexdigest()


def text_of(value: Any) -> str:
    """The text of a string, a content block or a list of them, joined by newlines (other fields left out)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(item) for item in value)
    if isinstance(value, dict):
        text = value.get("text")
        return text if isinstance(text, str) else text_of(value.get("content")) if "content" in value else ""
    return ""
