"""Shared helpers for the switching-engine tests (real files in the temporary HOME the root conftest sets)."""

from __future__ import annotations

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine

KEY = "sk-test-0123456789abcdef"


def make_engine(lock_timeout: float = 2.0) -> Engine:
    """An engine on the current (temporary) HOME and KVSWITCH_CONFIG_DIR."""
    return Engine(AppPaths.default(), lock_timeout=lock_timeout)


def local_profile(name: str = "local", **extra: object) -> Profile:
    fields: dict[str, object] = {
        "name": name,
        "kind": "llama.cpp",
        "base_url": "http://127.0.0.1:8080",
        "api_key": KEY,
        "model": "qwen",
        "env": {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
    }
    fields.update(extra)
    return Profile.model_validate(fields)


def remote_profile(name: str = "remote", **extra: object) -> Profile:
    fields: dict[str, object] = {
        "name": name,
        "kind": "anthropic",
        "base_url": "https://api.anthropic.com",
        "api_key": "sk-ant-remote-9876543210",
    }
    fields.update(extra)
    return Profile.model_validate(fields)
