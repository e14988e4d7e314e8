"""Claude Code settings.json: merge-only writes and every kind of bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import KEY, local_profile, make_engine, remote_profile

from kvswitch.core.errors import ConfigParseError, FileAccessError, KvSwitchError
from kvswitch.targets.claude import ClaudeSettingsTarget
from kvswitch.targets.engine import Engine

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(ls)"], "deny": []},
    "env": {"MY_TOOL_HOME": "/opt/tool", "API_TIMEOUT_MS": 600000},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]},
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


@pytest.fixture
def engine(fake_home: Path) -> Engine:
    return make_engine()


def settings_path(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def write_settings(home: Path, data: object | str) -> Path:
    path = settings_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def test_apply_keeps_every_user_key_and_order(engine: Engine, fake_home: Path) -> None:
    path = write_settings(fake_home, USER_SETTINGS)
    engine.apply(local_profile())
    data = json.loads(path.read_text())
    assert list(data) == [*USER_SETTINGS, "model"]
    for key in ("permissions", "hooks", "statusLine"):
        assert data[key] == USER_SETTINGS[key]
    assert data["env"]["MY_TOOL_HOME"] == "/opt/tool"
    assert data["env"]["API_TIMEOUT_MS"] == 600000
    assert data["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"
    assert data["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY
    assert data["model"] == "qwen"
    assert all(isinstance(v, str) for k, v in data["env"].items() if k != "API_TIMEOUT_MS")
    text = path.read_text()
    assert text.endswith("}\n")
    assert '\n  "permissions"' in text


def test_untouched_members_keep_their_bytes(engine: Engine, fake_home: Path) -> None:
    original = (
        "{\n"
        '  "permissions": {"allow": ["Bash(ls)", "Read"]},\n'
        '  "env": {\n'
        '    "MY_VAR": "1"\n'
        "  },\n"
        '  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n'
        "}\n"
    )
    path = write_settings(fake_home, original)
    engine.apply(local_profile())
    text = path.read_text()
    assert '  "permissions": {"allow": ["Bash(ls)", "Read"]},\n' in text
    assert '  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},\n' in text
    assert '    "MY_VAR": "1",\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080",\n' in text
    engine.apply(remote_profile())
    engine.apply(local_profile(name="other", model=None, targets=["codex"]))
    assert "api.anthropic.com" in path.read_text(), "a Codex-only profile leaves Claude Code's file alone"
    (fake_home / "proj").mkdir()
    engine.apply(local_profile(name="scoped", model=None, targets=[f"claude-project:{fake_home / 'proj'}"]))
    assert path.read_text() == original, "switching Claude Code away gives back the exact original text"


def test_switch_removes_stale_owned_keys_and_gives_back_user_values(engine: Engine, fake_home: Path) -> None:
    settings = {
        **USER_SETTINGS,
        "env": {**USER_SETTINGS["env"], "ANTHROPIC_BASE_URL": "https://mine.example"},
    }
    path = write_settings(fake_home, settings)
    engine.apply(local_profile(models={"haiku": "small"}))
    engine.apply(remote_profile())
    env = json.loads(path.read_text())["env"]
    assert "ANTHROPIC_DEFAULT_HAIKU_MODEL" not in env
    assert "ANTHROPIC_MODEL" not in env
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER" not in env
    assert env["ANTHROPIC_BASE_URL"] == "https://api.anthropic.com"
    engine.undo()
    engine.undo()
    assert json.loads(path.read_text()) == settings


def test_owned_key_switched_to_profile_without_it_gives_back_prior_value(
    engine: Engine, fake_home: Path
) -> None:
    path = write_settings(fake_home, {"env": {"ANTHROPIC_MODEL": "mine"}})
    engine.apply(local_profile())
    engine.apply(remote_profile())
    assert json.loads(path.read_text())["env"]["ANTHROPIC_MODEL"] == "mine"


def test_hand_edit_of_owned_key_is_reported_and_kept_when_released(engine: Engine, fake_home: Path) -> None:
    path = write_settings(fake_home, {})
    engine.apply(local_profile())
    data = json.loads(path.read_text())
    data["env"]["ANTHROPIC_MODEL"] = "edited-by-hand"
    path.write_text(json.dumps(data, indent=2) + "\n")
    plans = engine.plan(remote_profile())
    claude = next(p for p in plans if p.target_id == "claude")
    assert any("ANTHROPIC_MODEL was changed by hand" in w for w in claude.warnings)
    engine.apply(remote_profile())
    assert json.loads(path.read_text())["env"]["ANTHROPIC_MODEL"] == "edited-by-hand"


def test_created_file_is_removed_again_by_undo(engine: Engine, fake_home: Path) -> None:
    engine.apply(local_profile())
    assert settings_path(fake_home).exists()
    engine.undo()
    assert not settings_path(fake_home).exists()


def test_crlf_and_bom_are_kept(engine: Engine, fake_home: Path) -> None:
    path = settings_path(fake_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'\xef\xbb\xbf{\r\n  "theme": "dark"\r\n}\r\n')
    engine.apply(local_profile())
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf{\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert json.loads(raw.decode("utf-8-sig"))["theme"] == "dark"


def test_empty_file_is_treated_as_empty_object(engine: Engine, fake_home: Path) -> None:
    path = write_settings(fake_home, "")
    engine.apply(local_profile())
    assert json.loads(path.read_text())["env"]["ANTHROPIC_MODEL"] == "qwen"


def test_four_space_indent_is_kept(engine: Engine, fake_home: Path) -> None:
    path = write_settings(fake_home, '{\n    "theme": "dark"\n}\n')
    engine.apply(local_profile())
    assert '\n    "theme": "dark"' in path.read_text()


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        ('{\n  // my comment\n  "a": 1\n}\n', "2:3: not valid JSON: JSON does not allow comments"),
        ('{\n  "a": 1,\n}\n', "trailing comma"),
        ("[1, 2]\n", "expected a JSON object"),
        ('{"a": 1, "a": 2}\n', "appears twice"),
        ('{"env": ["x"]}\n', "'env' must be an object"),
    ],
)
def test_unparseable_settings_stop_everything(
    engine: Engine, fake_home: Path, content: str, expect: str
) -> None:
    path = write_settings(fake_home, content)
    profile = local_profile(targets=["codex", "claude"])
    with pytest.raises(ConfigParseError) as info:
        engine.apply(profile)
    assert str(path) in str(info.value)
    assert expect in str(info.value)
    assert path.read_text() == content
    assert not (fake_home / ".codex" / "config.toml").exists()
    assert engine.current() is None


def test_non_utf8_settings_are_refused(engine: Engine, fake_home: Path) -> None:
    path = settings_path(fake_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigParseError, match="not UTF-8"):
        engine.apply(local_profile())


def test_directory_in_place_of_settings_is_refused(engine: Engine, fake_home: Path) -> None:
    settings_path(fake_home).mkdir(parents=True)
    with pytest.raises(FileAccessError, match="is a directory"):
        engine.apply(local_profile())


def test_symlink_loop_is_refused(engine: Engine, fake_home: Path) -> None:
    path = settings_path(fake_home)
    path.parent.mkdir(parents=True)
    os.symlink(path.parent / "b.json", path)
    os.symlink(path, path.parent / "b.json")
    with pytest.raises(FileAccessError, match="symlink loop"):
        engine.apply(local_profile())


def test_unreadable_settings_are_refused(
    engine: Engine, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_settings(fake_home, {"a": 1})
    path.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the read fail as it would for a user
        real = os.open

        def denied(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if Path(file) == path:
                raise PermissionError(13, "Permission denied", str(file))
            return real(file, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", denied)
    try:
        with pytest.raises(FileAccessError, match="permission denied"):
            engine.apply(local_profile())
    finally:
        path.chmod(0o644)


def test_symlinked_dotfile_stays_a_symlink(engine: Engine, fake_home: Path) -> None:
    repo = fake_home / "dotfiles" / "claude-settings.json"
    repo.parent.mkdir()
    repo.write_text(json.dumps({"theme": "dark"}, indent=2) + "\n")
    link = settings_path(fake_home)
    link.parent.mkdir()
    link.symlink_to(repo)
    engine.apply(local_profile())
    assert link.is_symlink()
    assert link.resolve() == repo.resolve()
    assert json.loads(repo.read_text())["env"]["ANTHROPIC_MODEL"] == "qwen"
    engine.undo()
    assert link.is_symlink()
    assert json.loads(repo.read_text()) == {"theme": "dark"}


def test_read_only_settings_fail_cleanly_and_roll_back_other_targets(engine: Engine, fake_home: Path) -> None:
    path = write_settings(fake_home, {"theme": "dark"})
    path.chmod(0o444)
    profile = local_profile(targets=["codex", "claude"])
    with pytest.raises(KvSwitchError) as info:
        engine.apply(profile)
    assert "read-only" in str(info.value)
    assert str(path) in str(info.value)
    assert not (fake_home / ".codex" / "config.toml").exists(), (
        "codex was written first and must be rolled back"
    )
    assert json.loads(path.read_text()) == {"theme": "dark"}
    assert engine.current() is None


def test_file_mode_is_kept(engine: Engine, fake_home: Path) -> None:
    """A file that gets no key keeps its mode (one that does is tightened: see test_file_modes)."""
    path = write_settings(fake_home, {"theme": "dark"})
    path.chmod(0o640)
    engine.apply(local_profile(api_key=None))
    assert path.stat().st_mode & 0o777 == 0o640


def test_project_and_local_scopes(engine: Engine, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    profile = local_profile(targets=[f"claude-project:{project}", f"claude-local:{project}"])
    engine.apply(profile)
    for name in ("settings.json", "settings.local.json"):
        data = json.loads((project / ".claude" / name).read_text())
        assert data["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"


def test_claude_config_dir_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    custom = tmp_path / "cc"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(custom))
    from kvswitch.core.paths import AppPaths

    Engine(AppPaths.default()).apply(local_profile())
    assert (custom / "settings.json").exists()


def test_plan_is_pure(fake_home: Path) -> None:
    target = ClaudeSettingsTarget(settings_path(fake_home), "claude")
    plan = target.plan(local_profile(), {})
    assert plan.changed
    assert not settings_path(fake_home).exists()
