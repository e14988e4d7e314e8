"""The ``kvswitch`` profile and switching commands, run as a real subprocess (``python -m kvswitch``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"
KEY = "sk-cli-secret-0123456789"


def kvswitch(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run(
        [sys.executable, "-m", "kvswitch", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_dry_run_shows_masked_diff_and_writes_nothing(fake_home: Path) -> None:
    added = kvswitch(
        "profile",
        "add",
        "local",
        "--kind",
        "llama.cpp",
        "--base-url",
        "http://127.0.0.1:8080",
        "--api-key-stdin",
        "--model",
        "qwen",
        "--target",
        "claude",
        "--target",
        "codex",
        stdin=KEY + "\n",
    )
    assert added.returncode == 0, added.stderr
    result = kvswitch("use", "local", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"+++ {fake_home / '.claude' / 'settings.json'}" in result.stdout
    assert '+    "ANTHROPIC_AUTH_TOKEN": "sk-…6789"' in result.stdout
    assert '+    "CLAUDE_CODE_ATTRIBUTION_HEADER": "0"' in result.stdout
    assert KEY not in result.stdout + result.stderr
    assert not (fake_home / ".claude").exists()
    assert not (fake_home / ".codex").exists()
    shown = kvswitch("--show-secrets", "use", "local", "--dry-run")
    assert KEY in shown.stdout


def test_profile_lifecycle(fake_home: Path) -> None:
    assert (
        kvswitch(
            "profile",
            "add",
            "gw",
            "--kind",
            "openai-compatible",
            "--base-url",
            "https://gw.example/v1",
            "--api-key",
            KEY,
            "--env",
            "API_TIMEOUT_MS=600000",
        ).returncode
        == 0
    )
    listing = json.loads(kvswitch("profile", "list", "--json").stdout)
    assert listing[0]["name"] == "gw"
    assert listing[0]["api_key"] != KEY
    assert listing[0]["active"] is False
    assert (
        kvswitch("profile", "edit", "gw", "--rename", "gateway", "--unset-env", "API_TIMEOUT_MS").returncode
        == 0
    )
    shown = kvswitch("profile", "show", "gateway")
    assert "API_TIMEOUT_MS" not in shown.stdout
    assert KEY not in shown.stdout
    assert "sk-…6789" in shown.stdout
    assert kvswitch("use", "gateway").returncode == 0
    assert kvswitch("current", "--client", "claude").stdout.strip() == "gateway"
    settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY
    assert kvswitch("undo").returncode == 0
    assert kvswitch("current").returncode == 1
    assert kvswitch("profile", "remove", "gateway").returncode == 0
    assert json.loads(kvswitch("profile", "list", "--json").stdout) == []
    profiles_file = fake_home / ".config" / "kvswitch" / "profiles.json"
    assert profiles_file.stat().st_mode & 0o777 == 0o600


def test_local_kind_gets_cache_safe_env(fake_home: Path) -> None:
    kvswitch("profile", "add", "lm", "--kind", "lm-studio")
    view = json.loads(kvswitch("profile", "list", "--json").stdout)[0]
    assert view["env"]["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"
    assert view["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert view["base_url"] == "http://127.0.0.1:1234"
    assert view["log"]["path"].endswith(os.path.join(".lmstudio", "server-logs"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["profile", "add", "x", "--kind", "custom", "--base-url", "not a url"], "invalid base URL"),
        (["profile", "add", "x", "--kind", "custom", "--env", "9LIVES=1"], "invalid variable name '9LIVES'"),
        (["profile", "add", "x", "--kind", "custom", "--target", "vim"], "unknown target 'vim'"),
        (["use", "nope"], "no profile named 'nope'"),
        (["undo"], "nothing to undo"),
    ],
)
def test_bad_input_is_one_clear_line(fake_home: Path, args: list[str], message: str) -> None:
    result = kvswitch(*args)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("kvswitch: ")


def test_duplicate_name_is_refused(fake_home: Path) -> None:
    assert kvswitch("profile", "add", "a", "--kind", "ollama").returncode == 0
    result = kvswitch("profile", "add", "A", "--kind", "ollama")
    assert result.returncode == 2
    assert "already exists; choose another name" in result.stderr


def test_broken_settings_error_names_file_and_line(fake_home: Path) -> None:
    kvswitch("profile", "add", "a", "--kind", "ollama", "--target", "claude", "--target", "codex")
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "a": 1,\n  // no\n}\n')
    result = kvswitch("use", "a")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"{settings}:3:3" in result.stderr
    assert "comments" in result.stderr
    assert not (fake_home / ".codex").exists()


def test_import_claude_and_doctor(fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps(
            {"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "ANTHROPIC_AUTH_TOKEN": KEY, "FOO": "1"}}
        )
    )
    result = kvswitch("import", "claude", "--name", "mine")
    assert result.returncode == 0
    assert KEY not in result.stdout
    assert "llama.cpp" in result.stdout
    doctor = kvswitch("doctor")
    assert doctor.returncode == 1
    assert "[attribution-header]" in doctor.stdout


def test_import_claude_names_a_vendor_setup_after_the_vendor(fake_home: Path) -> None:
    fixture = Path(__file__).parent / "fixtures" / "cc-switch-3.20" / "claude-settings-deepseek.json"
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(fixture.read_text())
    first, second = kvswitch("import", "claude"), kvswitch("import", "claude")
    assert (first.returncode, second.returncode) == (0, 0)
    assert first.stdout.startswith("imported 'deepseek': openai-compatible")
    assert second.stdout.startswith("imported 'deepseek-2': openai-compatible")
    assert "sk-ds-fixture-0123456789" not in first.stdout + second.stdout
    names = [p["name"] for p in json.loads(kvswitch("profile", "list", "--json").stdout)]
    assert names == ["deepseek", "deepseek-2"]


def test_doctor_reports_hand_edits_modes_broken_files_and_stale_shell_vars(fake_home: Path) -> None:
    kvswitch(
        "profile",
        "add",
        "loc",
        "--kind",
        "llama.cpp",
        "--api-key",
        KEY,
        "--target",
        "claude",
        "--target",
        "codex",
        "--target",
        "bash",
        "--context-window",
        "32768",
    )
    assert kvswitch("use", "loc").returncode == 0
    clean = kvswitch("doctor")
    assert clean.returncode == 0, clean.stdout
    settings = fake_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["env"]["ANTHROPIC_BASE_URL"] = "http://by-hand.example"
    settings.write_text(json.dumps(data))
    (fake_home / ".codex" / "config.toml").write_text("not = [toml\n")
    profiles_file = fake_home / ".config" / "kvswitch" / "profiles.json"
    profiles_file.chmod(0o644)
    env = {**os.environ, "PYTHONPATH": str(APP), "ANTHROPIC_BASE_URL": "http://old.example"}
    result = subprocess.run(
        [sys.executable, "-m", "kvswitch", "doctor"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "ANTHROPIC_BASE_URL was changed by hand" in result.stdout
    assert "config.toml:1:" in result.stdout
    assert f"{profiles_file}: mode 644" in result.stdout
    assert "this shell still exports ANTHROPIC_BASE_URL=http://old.example" in result.stdout
    assert KEY not in result.stdout
    (fake_home / ".bashrc").unlink()
    assert "/.bashrc: deleted since KV Switch wrote it" in kvswitch("doctor").stdout


def test_project_target_directory_is_made_absolute(fake_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {**os.environ, "PYTHONPATH": str(APP)}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kvswitch",
            "profile",
            "add",
            "p",
            "--kind",
            "vllm",
            "--target",
            "claude-project:.",
        ],
        env=env,
        cwd=project,
        check=True,
        capture_output=True,
    )
    view = json.loads(kvswitch("profile", "list", "--json").stdout)[0]
    assert view["targets"] == [f"claude-project:{project.resolve()}"]
    assert kvswitch("use", "p").returncode == 0
    assert (project / ".claude" / "settings.json").exists()


def test_project_target_must_exist(fake_home: Path, tmp_path: Path) -> None:
    result = kvswitch(
        "profile", "add", "p", "--kind", "vllm", "--target", f"claude-project:{tmp_path / 'nope'}"
    )
    assert result.returncode == 2
    assert "is not a directory" in result.stderr


def test_doctor_names_a_local_claude_profile_without_a_context_window(fake_home: Path) -> None:
    """Made while its server was down (or in an older window): Claude Code would assume 1m tokens."""
    assert kvswitch("profile", "add", "loc", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                    "--target", "claude").returncode == 0
    found = kvswitch("doctor")
    assert found.returncode == 1
    assert "profile 'loc' [no-context-window]" in found.stdout
    assert "kvswitch profile edit 'loc' --context-window auto" in found.stdout
    assert kvswitch("profile", "edit", "loc", "--context-window", "32768").returncode == 0
    assert "no-context-window" not in kvswitch("doctor").stdout
