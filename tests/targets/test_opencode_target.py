"""The OpenCode target on real files in a temporary HOME: a provider merged into the user's JSONC
``opencode.json`` with its comments kept, undone byte for byte, and the key only as an ``{env:}``
reference that the shell targets export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import KEY, local_profile, make_engine

from kvswitch.core.errors import ConfigParseError, KvSwitchError
from kvswitch.targets.engine import Engine
from kvswitch.targets.jsonc import blank_jsonc, parse_jsonc_object

USER_JSONC = """\
{
  "$schema": "https://opencode.ai/config.json",
  // my theme, do not touch
  "theme": "tokyonight",
  "provider": {
    /* a gateway I use at work */
    "work": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "https://gw.example/v1"}},
  },
  "autoupdate": false, // trailing comma below is fine for OpenCode
}
"""


@pytest.fixture
def engine(fake_home: Path) -> Engine:
    return make_engine()


def config_path(home: Path) -> Path:
    return home / ".config" / "opencode" / "opencode.json"


def write_config(home: Path, text: str) -> Path:
    path = config_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_provider_merged_with_comments_kept_and_undone(engine: Engine, fake_home: Path) -> None:
    path = write_config(fake_home, USER_JSONC)
    engine.apply(local_profile(targets=["opencode", "bash"], model="qwen2.5-coder", context_window=32768))
    text = path.read_text()
    for comment in ("// my theme, do not touch", "/* a gateway I use at work */", "// trailing comma below"):
        assert comment in text
    assert '"autoupdate": false, // trailing comma below' in text  # a line's comment stays on its line
    data = parse_jsonc_object(path, text)
    assert data["theme"] == "tokyonight"
    assert data["provider"]["work"]["options"]["baseURL"] == "https://gw.example/v1"
    assert data["provider"]["kvswitch"] == {
        "npm": "@ai-sdk/openai-compatible",
        "name": "KV Switch: local",
        "options": {"baseURL": "http://127.0.0.1:8080/v1", "apiKey": "{env:KVSWITCH_API_KEY}"},
        "models": {"qwen2.5-coder": {"name": "qwen2.5-coder", "limit": {"context": 32768, "output": 8192}}},
    }
    assert data["model"] == "kvswitch/qwen2.5-coder"
    assert KEY not in text
    # the key reaches OpenCode through the variable the reference names, exported by the shell target
    bashrc = (fake_home / ".bashrc").read_text()
    assert "KVSWITCH_API_KEY" in bashrc
    engine.undo()
    assert path.read_text() == USER_JSONC


def test_new_file_is_plain_json_and_removed_on_undo(engine: Engine, fake_home: Path) -> None:
    engine.apply(local_profile(targets=["opencode"]))
    path = config_path(fake_home)
    data = json.loads(path.read_text())
    assert data["model"] == "kvswitch/qwen"
    assert "limit" not in data["provider"]["kvswitch"]["models"]["qwen"]  # no context window known
    engine.undo()
    assert not path.exists()


def test_switching_profiles_replaces_the_model_and_limits(engine: Engine, fake_home: Path) -> None:
    path = write_config(fake_home, USER_JSONC)
    engine.apply(local_profile(targets=["opencode"], context_window=8192))
    engine.apply(local_profile(name="other", targets=["opencode"], model="llama3", context_window=4096))
    data = parse_jsonc_object(path, path.read_text())
    assert set(data["provider"]["kvswitch"]["models"]) == {"llama3"}
    assert data["provider"]["kvswitch"]["models"]["llama3"]["limit"] == {"context": 4096, "output": 1024}
    assert data["model"] == "kvswitch/llama3"
    switched = path.read_text()
    engine.apply(local_profile(name="claude-only", targets=["claude"]))
    assert path.read_text() == switched, "a Claude-only profile leaves OpenCode's file alone"
    for _ in range(3):
        engine.undo()
    assert parse_jsonc_object(path, path.read_text()) == parse_jsonc_object(path, USER_JSONC)
    assert "// my theme, do not touch" in path.read_text()


def test_key_delivery_warning_without_shell_target(engine: Engine) -> None:
    plans = engine.plan(local_profile(targets=["opencode"]))
    assert any("KVSWITCH_API_KEY" in w for p in plans for w in p.warnings)


def test_anthropic_profile_cannot_target_opencode(engine: Engine) -> None:
    profile = local_profile(kind="anthropic", base_url="https://api.anthropic.com", targets=["opencode"])
    with pytest.raises(KvSwitchError, match="OpenCode"):
        engine.plan(profile)


def test_invalid_jsonc_names_file_and_line(engine: Engine, fake_home: Path) -> None:
    write_config(fake_home, '{\n  // fine\n  "theme": "x"\n  "model": "y"\n}\n')
    with pytest.raises(ConfigParseError) as info:
        engine.plan(local_profile(targets=["opencode"]))
    assert "opencode.json" in str(info.value)
    assert ":4" in str(info.value)


def test_blanking_keeps_strings_and_positions() -> None:
    text = '{"url": "http://x//y", /* c */ "a": [1, 2,], // end\n "b": "/* no */",}'
    plain = blank_jsonc(text)
    assert len(plain) == len(text)
    assert json.loads(plain) == {"url": "http://x//y", "a": [1, 2], "b": "/* no */"}


def test_project_scope_writes_the_projects_own_file(engine: Engine, fake_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    (project / "opencode.jsonc").write_text('{\n  // the project\'s agents\n  "agent": {}\n}\n')
    engine.apply(local_profile(targets=[f"opencode-project:{project}"]))
    path = project / "opencode.jsonc"
    text = path.read_text()
    assert "// the project's agents" in text
    assert parse_jsonc_object(path, text)["model"] == "kvswitch/qwen"
    assert not (project / "opencode.json").exists()
    assert not config_path(fake_home).exists()
    engine.undo()
    assert path.read_text() == '{\n  // the project\'s agents\n  "agent": {}\n}\n'
