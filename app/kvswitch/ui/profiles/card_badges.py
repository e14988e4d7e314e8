"""What a card says beside its name and under it: the clients running it now, its verdict, its hit rate.

Kept apart from the painter so tests (and the filter) read the same words the user reads. A badge per
client that runs the profile now, from the clients' own files (``LiveClient``): *live* is the loud
state; a client whose file no longer matches the profile is marked *differs* (hand-edited, or saved
without writing through) and the card keeps its one-click Use to apply it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtWidgets import QApplication

from kvswitch.ui.control.clients import client_name, client_of_target
from kvswitch.ui.control.shown_names import verdict_word as verdict_word  # the cards' import


@dataclass(frozen=True)
class Badge:
    """One pill on a card: its text, whether a live client's file differs, and the tooltip's detail.

    ``quiet``: not a running client but what the profile is for (a client it writes that does not run it
    now, or the gateway it goes through): outlined and muted, so *live* stays the loud state.
    """

    text: str
    differs: bool
    detail: str
    quiet: bool = False


def client_badge_text(client: Any) -> str:
    """``Claude Code``, ``Claude Code (project)``, ``Codex``, ``OpenCode``, ``bash``."""
    if client.client == "shell":
        return str(client.key.partition(":")[2] or client_name("shell"))
    name = client_name(client.client)
    if client.key.startswith("claude:project"):
        return QApplication.translate("ProfileCard", "%1 (project)").replace("%1", name)
    return name


def badges(live: Sequence[Any]) -> list[Badge]:
    """The card's pills, one per client running it (Claude Code scopes, Codex, OpenCode, shells)."""
    return [Badge(client_badge_text(c), bool(c.differs), str(c.detail)) for c in live]


def target_names(targets: Sequence[str]) -> list[str]:
    """The clients a profile is written for, as the window names them (``bash`` for a shell target)."""
    names: list[str] = []
    for target in targets:
        client = client_of_target(target)
        name = target.partition(":")[0] if client == "shell" else client_name(client)
        if name not in names:
            names.append(name)
    return names


def marks(targets: Sequence[str], via_gateway: bool, live: Sequence[Any]) -> list[Badge]:
    """A card's quiet pills: each client it is for that does not run it now (three cards of one
    server kind for three clients read apart), then the gateway when it goes through it."""
    running = {client_badge_text(c) for c in live} | {client_name(c.client) for c in live}
    translate = QApplication.translate
    found = [Badge(name, False, translate("ProfileCard", "Written for %1; not running it now").replace(
        "%1", name), quiet=True) for name in target_names(targets) if name not in running]
    if via_gateway:
        detail = translate("ProfileCard", "Its clients go through the KV Switch gateway")
        found.append(Badge(translate("ProfileCard", "Gateway"), False, detail, quiet=True))
    return found


def badge_label(badge: Badge) -> str:
    """What a pill reads: ``Codex`` for a live client, ``Codex ≠`` when its file differs."""
    return f"{badge.text} ≠" if badge.differs else badge.text


def usage_line(usage: dict[str, float] | None) -> str:
    """``93 % hit · 120 requests`` through the gateway in the last days; empty without requests."""
    if not usage or not usage.get("requests"):
        return ""
    text = QApplication.translate("ProfileCard", "%1 hit · %2 requests")
    return text.replace("%1", f"{usage.get('hit_rate', 0.0):.0%}").replace("%2", str(int(usage["requests"])))


def endpoint_text(base_url: str) -> str:
    """The URL a card shows: host and path, without the scheme (``api.deepseek.com/v1``)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return (host + parts.path.rstrip("/")) or base_url
