"""Helpers shared by the desktop app tests."""

from __future__ import annotations

from typing import Any


def make_profile(name: str, kind: str = "llama.cpp", base_url: str = "http://127.0.0.1:8080",
                 **extra: Any) -> Any:
    from kvswitch.core.models import Profile

    return Profile.model_validate({"name": name, "kind": kind, "base_url": base_url, **extra})
