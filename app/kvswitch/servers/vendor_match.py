"""Which catalog vendor a base URL belongs to, and which of its APIs that URL serves.

An imported ``~/.claude/settings.json`` or CC Switch provider carries only a URL; so does a profile
typed by hand. The catalog (``core/data/vendors.json``) knows each vendor's endpoints, so the URL alone
names the vendor, its profile kind and the protocol spoken there. Several plans can share one host
(Volcengine Ark serves ``/api/coding``, ``/api/plan`` and ``/api/compatible``), so the longest of the
vendors' paths that starts the URL's path decides; a URL on a vendor's host under none of its paths
still names the first vendor on that host.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from kvswitch.core.catalog import Vendor, vendors_for_host
from kvswitch.core.models import WireProtocol

#: how the window names each wire protocol after a vendor's name ("DeepSeek · Anthropic API")
PROTOCOL_LABELS: dict[WireProtocol, str] = {
    "anthropic": "Anthropic API",
    "openai_chat": "OpenAI Chat API",
    "openai_responses": "OpenAI Responses API",
}


@dataclass(frozen=True)
class VendorMatch:
    """The vendor a URL belongs to, and the protocol its endpoint at that URL speaks."""

    vendor: Vendor
    protocol: WireProtocol

    @property
    def protocol_label(self) -> str:
        return PROTOCOL_LABELS[self.protocol]


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def _under(path: str, prefix: str) -> bool:
    """``path`` is ``prefix`` or below it, segment by segment (``/api/coding`` is not under ``/api/cod``)."""
    return path == prefix or path.startswith(prefix + "/") or not prefix


def vendor_for_url(url: str) -> VendorMatch | None:
    """The catalog vendor serving ``url`` (``None`` for a host no vendor uses, or an unreadable URL)."""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return None
    candidates = vendors_for_host(host) if host else []
    if not candidates:
        return None
    path = _path(url.strip())
    best: tuple[int, VendorMatch] | None = None
    for entry in candidates:
        endpoints: list[tuple[str, WireProtocol]] = [(entry.path, entry.claude_protocol)]
        if entry.codex_base_url and entry.codex_protocol and urlsplit(entry.codex_base_url).hostname == host:
            endpoints.append((_path(entry.codex_base_url), entry.codex_protocol))
        for prefix, protocol in endpoints:
            if _under(path, prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), VendorMatch(entry, protocol))
    if best is not None:
        return best[1]
    first = candidates[0]
    return VendorMatch(first, first.claude_protocol)
