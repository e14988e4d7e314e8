"""Which wire protocol a profile's backend is spoken to in, per client: the data a bridge is picked by.

Claude Code speaks only Anthropic Messages and Codex only OpenAI Responses. A backend serves some of
the three protocols: a cloud vendor's entry in the catalog says what its Claude Code URL and its
Codex URL serve (checked against the vendor's page), a local server kind says what it serves on its
one URL. The profile's ``protocol`` overrides both. When the backend lacks the client's protocol, the
gateway speaks chat completions to it through a bridge (``kvswitch.gateway.bridges``).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from kvswitch.core.catalog import vendors_for_host
from kvswitch.core.models import Profile, ProfileKind, WireProtocol
from kvswitch.servers import get

Client = Literal["claude", "codex"]

#: the one protocol each client speaks
CLIENT_PROTOCOL: dict[Client, WireProtocol] = {"claude": "anthropic", "codex": "openai_responses"}
#: a client named by the protocol it speaks (the gateway knows a request by its route's protocol)
_CLIENT_OF: dict[str, Client] = {
    "claude": "claude",
    "codex": "codex",
    "anthropic": "claude",
    "openai_responses": "codex",
}


def client_of(client: Client | WireProtocol) -> Client:
    """``claude``/``codex``, also when named by its protocol; chat-completions callers count as Codex's
    kind of client (an OpenAI-shaped one)."""
    return _CLIENT_OF.get(client, "codex")


def catalog_protocol(profile: Profile) -> WireProtocol | None:
    """What the catalog says the profile's URL serves: a vendor's Claude Code URL serves its
    ``claude_protocol``, its Codex URL its ``codex_protocol``; ``None`` for a URL it does not list."""
    url = profile.base_url.rstrip("/")
    for entry in vendors_for_host(urlsplit(url).hostname or ""):
        if entry.base_url.rstrip("/") == url:
            return entry.claude_protocol
        if entry.codex_base_url is not None and entry.codex_base_url.rstrip("/") == url:
            return entry.codex_protocol
    return None


def served_protocols(profile: Profile) -> tuple[WireProtocol, ...]:
    """What the profile's backend serves at its URL: the catalog's word for a vendor URL, else the
    server kind's (a local server serves every protocol it has on its one URL)."""
    listed = catalog_protocol(profile)
    if listed is not None:
        return (listed,)
    return get(profile.kind).protocols


def upstream_protocol(profile: Profile, client: Client | WireProtocol) -> WireProtocol:
    """The protocol the gateway speaks upstream for ``client``: the profile's override, else the
    client's own if the backend serves it, else chat completions if it serves that (bridged), else
    the client's own (the backend may still answer; nothing better is known)."""
    if profile.protocol is not None:
        return profile.protocol
    if session_slots(profile) and client in ("claude", "anthropic"):
        return "openai_chat"  # only chat completions honours ``id_slot`` on llama-server b11434
    if client == "openai_chat":
        return "openai_chat"  # a chat client on a conversation route is passed through
    who = client_of(client)
    own = CLIENT_PROTOCOL[who]
    served = served_protocols(profile)
    if own in served or not served:
        return own
    if "openai_chat" in served:
        return "openai_chat"
    return own


def session_slots(profile: Profile) -> bool:
    """Whether the gateway pins this profile's sessions to llama-server slots (``slot_affinity``, which
    only llama.cpp serves: ``id_slot``)."""
    return profile.slot_affinity and profile.kind == ProfileKind.LLAMA_CPP


def bridged(profile: Profile, client: Client) -> bool:
    """Whether ``client``'s requests to this profile go through a protocol bridge."""
    return upstream_protocol(profile, client) != CLIENT_PROTOCOL[client]


def describe(profile: Profile, client: Client) -> str:
    """One line for ``profile show`` and the editor."""
    upstream = upstream_protocol(profile, client)
    own = CLIENT_PROTOCOL[client]
    name = "Claude Code" if client == "claude" else "Codex"
    if upstream == own:
        return f"{name}: {own} (no bridge)"
    why = ("set by --protocol" if profile.protocol is not None else "for --session-slots: id_slot"
           if session_slots(profile) else "the backend does not serve " + own)
    return f"{name}: bridged {own} -> {upstream} through the gateway ({why})"


#: the route each protocol is served on, below the API root (``…/v1``)
ROUTE_BELOW_V1: dict[WireProtocol, str] = {
    "anthropic": "/messages",
    "openai_chat": "/chat/completions",
    "openai_responses": "/responses",
}


def upstream_url(base_url: str, protocol: WireProtocol) -> str:
    """The URL a request in ``protocol`` goes to: Claude Code profiles name the root
    (``https://host/anthropic``), Codex profiles the API root (``https://host/v1``); both work."""
    base = base_url.rstrip("/")
    root = base if base.endswith("/v1") else base + "/v1"
    return root + ROUTE_BELOW_V1[protocol]
