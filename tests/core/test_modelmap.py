"""The per-tier model map: parsing, the variables the installed Claude Code reads, and merge-only,
undoable writing of those variables into a real settings.json in the temporary HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvswitch.core.errors import UsageError
from kvswitch.core.modelmap import TIER_ENV, parse_tier_assignments, split_tiers, tier_name
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine
from support.claude import claude_binary

KEY = "sk-modelmap-0123456789abcdef"
ALL_TIERS = {"opus": "big", "sonnet": "mid", "haiku": "small", "subagent": "helper", "small_fast": "quick"}


def gateway(name: str = "gw", **extra: object) -> Profile:
    fields: dict[str, object] = {"name": name, "kind": "openai-compatible", "base_url": "https://gw.example",
                                 "api_key": KEY, "model": "main-model", "models": ALL_TIERS}
    fields.update(extra)
    return Profile.model_validate(fields)


def settings(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def test_tier_names_are_read_by_the_installed_claude_code() -> None:
    data = claude_binary().read_bytes()
    for env_name in TIER_ENV.values():
        assert env_name.encode() in data, env_name


def test_parse_tier_assignments() -> None:
    spaced = "KAT-Coder Pro V1"
    parsed = parse_tier_assignments(["main=m", "Opus=o", "small-fast=f", "haiku=", f"subagent={spaced}"])
    assert parsed == {"main": "m", "opus": "o", "small_fast": "f", "haiku": None, "subagent": spaced}
    main, given, rest = split_tiers(parsed)
    assert (main, given) == ("m", True)
    assert "main" not in rest
    assert tier_name("default") == "main"
    with pytest.raises(UsageError, match="unknown model tier 'turbo'"):
        parse_tier_assignments(["turbo=x"])
    with pytest.raises(UsageError, match="expected TIER=MODEL"):
        parse_tier_assignments(["opus"])
    with pytest.raises(UsageError, match="control characters"):
        parse_tier_assignments(["opus=a\x1bb"])


def test_every_tier_is_written_merged_and_undone(fake_home: Path) -> None:
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    original = json.dumps({"env": {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "mine", "OTHER": "1"},
                           "permissions": {"allow": []}}, indent=2) + "\n"
    path.write_text(original)
    engine = Engine(AppPaths.default())
    engine.apply(gateway())
    env = json.loads(path.read_text())["env"]
    assert env["ANTHROPIC_MODEL"] == "main-model"
    assert env["ANTHROPIC_DEFAULT_OPUS_MODEL"] == "big"
    assert env["ANTHROPIC_DEFAULT_SONNET_MODEL"] == "mid"
    assert env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == "small"
    assert env["CLAUDE_CODE_SUBAGENT_MODEL"] == "helper"
    assert env["ANTHROPIC_SMALL_FAST_MODEL"] == "quick"
    assert env["OTHER"] == "1"
    assert env["ANTHROPIC_AUTH_TOKEN"] == KEY

    engine.apply(gateway("fewer", models={"opus": "big2"}))
    env = json.loads(path.read_text())["env"]
    assert env["ANTHROPIC_DEFAULT_OPUS_MODEL"] == "big2"
    assert env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == "mine", "the user's own value comes back"
    gone_now = ("ANTHROPIC_DEFAULT_SONNET_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL", "ANTHROPIC_SMALL_FAST_MODEL")
    for gone in gone_now:
        assert gone not in env
    engine.undo()
    engine.undo()
    assert path.read_text() == original


def test_key_goes_in_the_variable_the_vendor_reads(fake_home: Path) -> None:
    engine = Engine(AppPaths.default())
    engine.apply(gateway(key_env="ANTHROPIC_API_KEY"))
    env = json.loads(settings(fake_home).read_text())["env"]
    assert env["ANTHROPIC_API_KEY"] == KEY
    assert "ANTHROPIC_AUTH_TOKEN" not in env
    engine.apply(gateway("bearer"))
    env = json.loads(settings(fake_home).read_text())["env"]
    assert env["ANTHROPIC_AUTH_TOKEN"] == KEY
    assert "ANTHROPIC_API_KEY" not in env
