"""The gateway's status as one line for the tray's tooltip and menu: is it running, where, and which
backend serves each client (the profile that answered its last request, else the one it is routed to).

Plain text from the status dict of ``kvswitch.gateway.control.probe_status`` (the controller keeps the
latest one), so the tray needs no gateway import of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QCoreApplication

CLIENT_LABELS = {"claude": "Claude Code", "codex": "Codex"}


def serving_text(status: Mapping[str, Any]) -> str:
    """``Claude Code → A, Codex → B``; a client whose last request went elsewhere than its route (a
    failover) shows the profile that actually served it."""
    routes: Mapping[str, Any] = status.get("routes") or {}
    serving: Mapping[str, Any] = status.get("serving") or {}
    if not isinstance(routes, Mapping) or not isinstance(serving, Mapping):
        return ""
    parts = []
    for client in sorted(set(routes) | set(serving)):
        name = str(serving.get(client) or routes.get(client))
        routed = routes.get(client)
        if routed and serving.get(client) and serving[client] != routed:
            name = QCoreApplication.translate("GatewayStatus", "%1 (fallback for %2)").replace(
                "%1", str(serving[client])).replace("%2", str(routed))
        parts.append(f"{CLIENT_LABELS.get(client, client)} → {name}")
    return ", ".join(parts)


def status_line(status: Mapping[str, Any] | None) -> str:
    """One line: ``Gateway: running at URL — Claude Code → A`` or why it is not running; empty before
    the first check, or when it is not running and no profile uses it."""
    translate = QCoreApplication.translate
    if not status:
        return ""
    if status.get("running"):
        text = translate("GatewayStatus", "Gateway: running at %1").replace("%1", str(status.get("url", "")))
        serving = serving_text(status)
        return f"{text} — {serving}" if serving else text
    if not status.get("wanted"):
        return ""  # no profile uses it: nothing to say
    if status.get("error"):
        return translate("GatewayStatus", "Gateway: not running (%1)").replace("%1", str(status["error"]))
    return translate("GatewayStatus", "Gateway: not running")
