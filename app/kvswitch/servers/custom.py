"""Anything else: nothing is pre-filled and nothing is assumed about the server."""

from __future__ import annotations

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import Server

SERVER = Server(
    kind=ProfileKind.CUSTOM,
    label="Custom",
    short_label="custom",
    badge="··",
    base_url="http://127.0.0.1:8080",
    specific=False,
    description="Anything else; nothing is pre-filled.",
)
