"""Presets pre-fill the cache-safe env; lint explains what a profile costs and offers the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvswitch.core.models import LOCAL_KINDS, Profile, ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV, codex_base_url
from kvswitch.servers import PRESETS, preset
from kvswitch.targets.lint import lint_profile


def test_every_kind_has_a_preset() -> None:
    assert set(PRESETS) == set(ProfileKind)
    for kind in LOCAL_KINDS:
        assert preset(kind).env == CACHE_SAFE_ENV
    assert preset(ProfileKind.ANTHROPIC).env == {}


def test_lm_studio_log_directory(fake_home: Path) -> None:
    log = preset("lm-studio").log
    assert log is not None
    assert log.kind == "directory"
    assert log.path == str(fake_home / ".lmstudio" / "server-logs")
    assert PRESETS[ProfileKind.LM_STUDIO].log == log, "PRESETS follows the current HOME"


def test_preset_profile_passes_lint() -> None:
    chosen = preset(ProfileKind.LLAMA_CPP)
    profile = Profile(name="p", kind=chosen.kind, base_url=chosen.base_url, env=chosen.env,
                      context_window=32768)
    assert lint_profile(profile) == []


def test_a_local_claude_profile_without_a_context_window_is_named() -> None:
    """Claude Code then assumes 1m tokens (issue 38): the lint, and with it ``doctor``, says so."""
    chosen = preset(ProfileKind.LLAMA_CPP)
    profile = Profile(name="p", kind=chosen.kind, base_url=chosen.base_url, env=chosen.env)
    assert [w.code for w in lint_profile(profile)] == ["no-context-window"]
    assert "--context-window auto" in lint_profile(profile)[0].message
    by_hand = profile.model_copy(update={"env": {**chosen.env, "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "65536"}})
    assert lint_profile(by_hand) == []
    codex_only = profile.model_copy(update={"targets": ["codex"]})
    assert "no-context-window" not in [w.code for w in lint_profile(codex_only)]


def test_missing_attribution_header_is_explained_with_fix() -> None:
    profile = Profile(name="p", kind="llama.cpp", base_url="http://127.0.0.1:8080")
    found = {w.code: w for w in lint_profile(profile)}
    warning = found["attribution-header"]
    assert "full prompt re-processing every new conversation" in warning.message
    assert warning.fix_env == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    fixed = profile.model_copy(update={"env": {**CACHE_SAFE_ENV}})
    assert "attribution-header" not in {w.code for w in lint_profile(fixed)}


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        (
            {"kind": "anthropic", "base_url": "https://api.anthropic.com", "targets": ["codex"]},
            "codex-anthropic",
        ),
        ({"kind": "custom", "base_url": "http://gw.example", "api_key": "sk-123456789"}, "plain-http-key"),
        (
            {
                "kind": "custom",
                "base_url": "https://gw.example",
                "api_key": "k",
                "env": {"ANTHROPIC_API_KEY": "x"},
            },
            "auth-conflict",
        ),
        (
            {"kind": "custom", "base_url": "https://gw.example", "env": {"DISABLE_PROMPT_CACHING": "1"}},
            "prompt-caching-disabled",
        ),
    ],
)
def test_other_findings(fields: dict[str, object], code: str) -> None:
    profile = Profile.model_validate({"name": "p", **fields})
    assert code in {w.code for w in lint_profile(profile)}


@pytest.mark.parametrize(
    ("kind", "url", "expected"),
    [
        ("llama.cpp", "http://h:8080", "http://h:8080/v1"),
        ("ollama", "http://h:11434/v1", "http://h:11434/v1"),
        ("openai-compatible", "https://gw/x", "https://gw/x"),
    ],
)
def test_codex_base_url(kind: str, url: str, expected: str) -> None:
    assert codex_base_url(Profile(name="p", kind=kind, base_url=url)) == expected
