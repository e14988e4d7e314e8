"""The profiles file's history and leftovers, kept out of ``store`` (which is about reading and
changing the profiles): the migration of older layouts forward, and the clean-up of temp files a
killed write left beside the file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kvswitch.core import quickread
from kvswitch.core.fsutil import TEMP_SUFFIX

SCHEMA_VERSION = quickread.PROFILES_SCHEMA
#: an atomic write lives for milliseconds; a temp file this old was left by a killed writer
STALE_TEMP_SECONDS = 600


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a loaded profiles document to ``SCHEMA_VERSION``.

    v1 kept profiles in an object keyed by name with the key under ``key``; v2 keeps a list (the user's
    order) of full profile objects with ``api_key``.
    """
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"unknown schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise ValueError(f"written by a newer KV Switch (schema {version}); upgrade KV Switch")
    if version == 1:
        old = data.get("profiles") or {}
        if not isinstance(old, dict):
            raise ValueError("schema 1 expects 'profiles' to be an object keyed by name")
        profiles = []
        for name, fields in old.items():
            if not isinstance(fields, dict):
                kind = type(fields).__name__
                raise ValueError(f"schema 1 expects profile {name!r} to be an object, not {kind}")
            fields = dict(fields)
            if "key" in fields:
                fields["api_key"] = fields.pop("key")
            profiles.append({"name": name, **fields})
        data = {**data, "schema_version": 2, "profiles": profiles}
    return data


def remove_stale_temps(path: Path, max_age: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Delete ``.<name>.*.kvswitch-tmp`` files a killed write left beside ``path``; returns them.

    Only KV Switch's own temp pattern, and only files older than ``max_age``: a younger one may
    belong to another process writing right now (its pid is not in the name, so age decides).
    """
    removed = []
    now = time.time()
    try:
        for leftover in path.parent.glob(f".{path.name}.*{TEMP_SUFFIX}"):
            if leftover.is_file() and not leftover.is_symlink() and now - leftover.stat().st_mtime > max_age:
                leftover.unlink(missing_ok=True)
                removed.append(leftover)
    except OSError:
        pass  # cleaning up is a courtesy; reading the profiles must not fail for it
    return removed
