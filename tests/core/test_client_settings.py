"""The cache-safe env and the lint follow the measured catalog of Claude Code settings."""

from __future__ import annotations

import re
from pathlib import Path

from kvswitch.core.client_settings import PRIVACY_SETTINGS, claude_settings
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.targets.lint import lint_profile

REPO = Path(__file__).resolve().parents[2]


def test_measured_on_the_pinned_client() -> None:
    script = (REPO / "scripts" / "install_claude_code.sh").read_text()
    pinned = re.search(r"CLAUDE_CODE_VERSION:-([0-9.]+)", script)
    assert pinned is not None
    assert claude_settings().client_version == pinned.group(1)


def test_every_setting_that_keeps_reuse_is_in_the_cache_safe_env() -> None:
    for name, value in claude_settings().savers().items():
        assert CACHE_SAFE_ENV.get(name) == value, name


def test_every_cache_safe_member_is_measured_to_help_or_has_another_reason() -> None:
    catalog = claude_settings()
    for name, value in CACHE_SAFE_ENV.items():
        measured = catalog.get(name)
        assert measured is not None, f"{name} was never measured"
        assert measured.value == value
        assert measured.saves or name in PRIVACY_SETTINGS, name


def test_the_attribution_header_costs_what_was_measured() -> None:
    header = claude_settings().get("CLAUDE_CODE_ATTRIBUTION_HEADER")
    assert header is not None
    assert header.saved_per_new_conversation > 1000  # a new conversation re-processes the whole prompt
    assert header.saved_per_turn == 0  # inside one conversation the header no longer changes anything
    profile = Profile(name="l", kind=ProfileKind.LLAMA_CPP, base_url="http://127.0.0.1:8080")
    finding = next(w for w in lint_profile(profile) if w.code == "attribution-header")
    assert f"{header.saved_per_new_conversation:,}" in finding.message
    assert claude_settings().client_version in finding.message
