"""Codex config.toml / auth.json: tomlkit round-trips, provider table, legacy profiles, key delivery."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from engine_helpers import KEY, local_profile, make_engine

from kvswitch.core.errors import ConfigParseError, KvSwitchError
from kvswitch.core.models import Profile
from kvswitch.targets.engine import Engine

USER_TOML = """\
# my Codex config
approval_policy = "never"   # keep asking? no
model_reasoning_effort = "high"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]  # pinned

[model_providers.mine]
name = "Mine"
base_url = "https://gw.example/v1"
"""


@pytest.fixture
def engine(fake_home: Path) -> Engine:
    return make_engine()


def config_path(home: Path) -> Path:
    return home / ".codex" / "config.toml"


def write_config(home: Path, text: str) -> Path:
    path = config_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_provider_table_and_comments(engine: Engine, fake_home: Path) -> None:
    path = write_config(fake_home, USER_TOML)
    engine.apply(local_profile(targets=["codex"]))
    text = path.read_text()
    for line in USER_TOML.splitlines():
        assert line in text
    data = tomllib.loads(text)
    assert data["model"] == "qwen"
    assert data["model_provider"] == "kvswitch"
    assert data["model_providers"]["kvswitch"] == {
        "name": "KV Switch: local",
        "base_url": "http://127.0.0.1:8080/v1",
        "wire_api": "responses",
        "env_key": "KVSWITCH_API_KEY",
    }
    assert "profile" not in data
    assert "profiles" not in data
    assert KEY not in text
    engine.undo()
    assert path.read_text() == USER_TOML


def test_context_window_is_a_toml_integer_and_undone(engine: Engine, fake_home: Path) -> None:
    """Codex knows no local model; the server's context window goes in as ``model_context_window``
    (an integer, as Codex 0.169 parses it), and leaves again with the rest of the profile."""
    path = write_config(fake_home, USER_TOML)
    engine.apply(local_profile(targets=["codex"], context_window=32768))
    text = path.read_text()
    assert tomllib.loads(text)["model_context_window"] == 32768
    assert "model_context_window = 32768\n" in text
    engine.apply(local_profile(targets=["codex"], context_window=8192))
    assert tomllib.loads(path.read_text())["model_context_window"] == 8192
    engine.apply(local_profile(targets=["codex"]))
    assert "model_context_window" not in tomllib.loads(path.read_text())
    engine.apply(local_profile(targets=["codex"], context_window=4096))
    engine.undo()
    engine.undo()
    engine.undo()
    engine.undo()
    assert path.read_text() == USER_TOML


@pytest.mark.parametrize(
    ("kind", "url", "expected"),
    [
        ("ollama", "http://127.0.0.1:11434", "http://127.0.0.1:11434/v1"),
        ("vllm", "http://10.0.0.2:8000/v1", "http://10.0.0.2:8000/v1"),
        ("openai-compatible", "https://gw.example/openai/v1", "https://gw.example/openai/v1"),
    ],
)
def test_base_url_gets_v1_where_needed(
    engine: Engine, fake_home: Path, kind: str, url: str, expected: str
) -> None:
    engine.apply(Profile(name="p", kind=kind, base_url=url, targets=["codex"]))
    data = tomllib.loads(config_path(fake_home).read_text())
    assert data["model_providers"]["kvswitch"]["base_url"] == expected
    assert "env_key" not in data["model_providers"]["kvswitch"]


def test_a_claude_only_profile_leaves_codex_and_undo_removes_table_and_keys(
    engine: Engine, fake_home: Path
) -> None:
    path = write_config(fake_home, USER_TOML)
    engine.apply(local_profile(targets=["codex"]))
    written = path.read_text()
    engine.apply(local_profile(name="claude-only", targets=["claude"]))
    assert path.read_text() == written, "each client keeps its own profile"
    engine.undo()
    engine.undo()
    assert tomllib.loads(path.read_text()) == tomllib.loads(USER_TOML)


def test_legacy_profiles_are_reported_not_written(engine: Engine, fake_home: Path) -> None:
    write_config(fake_home, 'profile = "dev"\n\n[profiles.dev]\nmodel = "o3"\n')
    plans = engine.plan(local_profile(targets=["codex"]))
    warnings = " ".join(plans[0].warnings)
    assert "legacy top-level 'profile" in warnings
    assert "[profiles.*]" in warnings


def test_invalid_toml_names_file_and_line(engine: Engine, fake_home: Path) -> None:
    path = write_config(fake_home, 'model = "a"\nthis is not toml\n')
    with pytest.raises(ConfigParseError) as info:
        engine.apply(local_profile(targets=["claude", "codex"]))
    assert str(path) in str(info.value)
    assert ":2:" in str(info.value)
    assert not (fake_home / ".claude" / "settings.json").exists()


def test_codex_home_is_honoured(fake_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    make_engine().apply(local_profile(targets=["codex"]))
    assert (tmp_path / "ch" / "config.toml").exists()


def test_openai_key_goes_to_auth_json_merged_and_private(engine: Engine, fake_home: Path) -> None:
    auth = fake_home / ".codex" / "auth.json"
    auth.parent.mkdir(parents=True)
    auth.write_text(json.dumps({"tokens": {"access_token": "chatgpt"}, "last_refresh": "x"}, indent=2))
    auth.chmod(0o644)
    profile = Profile(
        name="openai",
        kind="openai-compatible",
        base_url="https://api.openai.com/v1",
        api_key="sk-openai-abcdefghijkl",
        model="gpt-5",
        targets=["codex"],
    )
    engine.apply(profile)
    data = json.loads(auth.read_text())
    assert data["OPENAI_API_KEY"] == "sk-openai-abcdefghijkl"
    assert data["tokens"] == {"access_token": "chatgpt"}
    assert auth.stat().st_mode & 0o777 == 0o600
    assert tomllib.loads(config_path(fake_home).read_text())["model_provider"] == "openai"
    engine.apply(local_profile(targets=["codex"]))
    assert "OPENAI_API_KEY" not in json.loads(auth.read_text())


def test_anthropic_profile_cannot_target_codex(engine: Engine) -> None:
    profile = Profile(name="a", kind="anthropic", base_url="https://api.anthropic.com", targets=["codex"])
    with pytest.raises(KvSwitchError, match="Codex cannot use"):
        engine.plan(profile)


def test_key_delivery_warning_without_shell_target(engine: Engine) -> None:
    plans = engine.plan(local_profile(targets=["codex"]))
    assert any("KVSWITCH_API_KEY" in w for w in plans[0].warnings)
    plans = engine.plan(local_profile(targets=["codex", "bash"]))
    assert not any("KVSWITCH_API_KEY" in w for p in plans if p.target_id == "codex" for w in p.warnings)


def test_non_table_in_the_way_is_reported(engine: Engine, fake_home: Path) -> None:
    path = write_config(fake_home, 'model_providers = "oops"\n')
    with pytest.raises(ConfigParseError) as info:
        engine.apply(local_profile(targets=["codex"]))
    assert f"{path}: 'model_providers' must be a table" in str(info.value)
    assert path.read_text() == 'model_providers = "oops"\n'
