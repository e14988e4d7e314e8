"""Env names that change how shells, the loader or Node behave need the user's explicit yes.

Through the real CLI (``kvswitch.cli.main``) and real bash, zsh and fish: without the confirmation no
shell ever runs a dangerous value; ``import-profiles`` shows every profile's targets and dangerous
names and saves nothing risky without ``--yes``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.dangerous_env import dangerous_reason
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from support.require import require_tool

SENTINEL = "kvswitch-dangerous-ran"
BASE = ["--kind", "openai-compatible", "--base-url", "https://a.b/v1", "--api-key", "sk-SECRET"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("name", [
    "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "HOME", "ZDOTDIR",
    "SHELLOPTS", "BASHOPTS", "PS1", "PS4", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "PYTHONPATH",
    "fish_function_path", "BASH_FUNC_ls",
])
def test_add_and_edit_refuse_dangerous_names_without_confirmation(
    fake_home: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, output = _run(capsys, "profile", "add", "p", *BASE, "--env", f"{name}=touch /tmp/x")
    assert code == 2, output
    assert name in output
    assert "--allow-dangerous-env" in output
    assert ProfileStore(AppPaths.default()).names() == []
    assert main(["profile", "add", "p", *BASE]) == 0
    code, output = _run(capsys, "profile", "edit", "p", "--env", f"{name}=x")
    assert code == 2, output
    assert ProfileStore(AppPaths.default()).get("p").env.get(name) is None


def test_ordinary_names_stay_accepted() -> None:
    ordinary = ("API_TIMEOUT_MS", "ANTHROPIC_MODEL", "CLAUDE_CODE_ATTRIBUTION_HEADER", "PATHS", "PROXY_MODE")
    for name in ordinary:
        assert dangerous_reason(name) is None


def _evil_ls(home: Path) -> Path:
    """A directory whose ``ls`` leaves a sentinel: a PATH pointing there runs foreign code."""
    evil = home / "evil"
    evil.mkdir()
    script = evil / "ls"
    script.write_text(f"#!/bin/sh\n{shutil.which('touch')} '{home / SENTINEL}'\n")
    script.chmod(0o755)
    return evil


def _shell_runs_ls(shell: str, home: Path) -> None:
    argv = {"bash": ["bash", "-i", "-c", "ls"], "zsh": ["zsh", "-i", "-c", "ls"],
            "fish": ["fish", "-c", "ls"]}
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV", "ZDOTDIR")}
    env["HOME"] = str(home)
    subprocess.run(argv[shell], env=env, cwd=home, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_real_shell_never_runs_an_unconfirmed_dangerous_value(
    fake_home: Path, capsys: pytest.CaptureFixture[str], shell: str
) -> None:
    require_tool(shell, "scripts/dev.sh test installs it")
    evil = _evil_ls(fake_home)
    assert main(["profile", "add", "p", *BASE, "--target", shell]) == 0
    # a profiles.json saved by an older version, before dangerous names needed a confirmation
    paths = AppPaths.default()
    document = json.loads(paths.profiles_file.read_text())
    del document["profiles"][0]["allow_dangerous_env"]
    document["profiles"][0]["env"] = {"PATH": str(evil), "PROMPT_COMMAND": f"touch {SENTINEL}"}
    paths.profiles_file.write_text(json.dumps(document))

    code, output = _run(capsys, "use", "p")
    assert code == 2, output
    assert "PATH" in output
    assert "--allow-dangerous-env" in output
    _shell_runs_ls(shell, fake_home)
    assert not (fake_home / SENTINEL).exists()
    code, output = _run(capsys, "doctor")
    assert code == 1, output
    assert "[dangerous-env-unconfirmed]" in output

    # once the user confirms, the value is theirs: the same shell now picks it up (the check is real)
    assert main(["profile", "edit", "p", "--allow-dangerous-env"]) == 0
    assert main(["use", "p"]) == 0
    _shell_runs_ls(shell, fake_home)
    assert (fake_home / SENTINEL).exists()


def _export_file(tmp_path: Path, profiles: list[dict[str, object]]) -> Path:
    path = tmp_path / "shared.json"
    path.write_text(json.dumps({"format": "kvswitch-profiles", "format_version": 1, "profiles": profiles}))
    return path


def test_import_profiles_reviews_and_needs_yes(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "someone-elses-project"
    project.mkdir()
    file = _export_file(tmp_path, [
        {"name": "plain", "base_url": "https://gw.example/v1", "targets": ["claude"]},
        {"name": "sneaky", "base_url": "https://gw.example/v1", "targets": [f"claude-project:{project}"],
         "env": {"NODE_OPTIONS": "--require /tmp/x.js"}, "allow_dangerous_env": True},
    ])
    code, output = _run(capsys, "import-profiles", str(file))
    assert code == 2, output
    assert "'plain': targets claude" in output
    assert f"'sneaky': targets claude-project:{project} (writes into a project folder)" in output
    assert "NODE_OPTIONS" in output
    assert "--yes" in output
    assert ProfileStore(AppPaths.default()).names() == []  # the file's own "allowed" counts for nothing

    code, output = _run(capsys, "import-profiles", str(file), "--yes")
    assert code == 0, output
    store = ProfileStore(AppPaths.default())
    assert store.names() == ["plain", "sneaky"]
    assert store.get("sneaky").allow_dangerous_env
    assert not store.get("plain").allow_dangerous_env


def test_import_profiles_without_risk_needs_no_yes(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _export_file(tmp_path, [{"name": "plain", "base_url": "https://gw.example/v1",
                                    "allow_dangerous_env": True}])
    code, output = _run(capsys, "import-profiles", str(file))
    assert code == 0, output
    assert "'plain': targets claude" in output
    assert not ProfileStore(AppPaths.default()).get("plain").allow_dangerous_env


def test_import_claude_settings_refuses_dangerous_env(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    env = {"ANTHROPIC_BASE_URL": "https://gw.example", "LD_PRELOAD": "/x.so"}
    settings.write_text(json.dumps({"env": env}))
    code, output = _run(capsys, "import", "claude")
    assert code == 2, output
    assert "LD_PRELOAD" in output
    assert ProfileStore(AppPaths.default()).names() == []
    code, output = _run(capsys, "import", "claude", "--allow-dangerous-env")
    assert code == 0, output
    assert ProfileStore(AppPaths.default()).get("imported").allow_dangerous_env
