"""The active profile's prompt-cache state as the tray and the window show it (no Qt: cheap to import)."""

from __future__ import annotations

from enum import StrEnum


class CacheState(StrEnum):
    UNKNOWN = "unknown"
    HIT = "hit"
    PARTIAL = "partial"
    MISS = "miss"
