"""Hostile or merely sloppy client files: each is a clear error naming file:line:col, nothing written.

Runs the real CLI (``kvswitch.cli.main``) against real files in the temporary HOME. Claude Code and
Codex refuse NaN/Infinity JSON and TOML inline tables with trailing commas, so KV Switch must too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from support.require import not_applicable, require_tool

INTERNAL_ERROR = 70


@pytest.fixture
def profile(fake_home: Path) -> str:
    assert main(["profile", "add", "p", "--kind", "openai-compatible", "--base-url", "https://a.b/v1",
                 "--api-key", "sk-SECRET", "--target", "claude", "--target", "bash"]) == 0
    return "p"


def _settings(home: Path, text: str) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _assert_refused(code: int, output: str, where: str) -> None:
    assert code not in (0, INTERNAL_ERROR), output
    assert "internal error" not in output
    assert where in output, output


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ('{"a":' * 10000 + "1" + "}" * 10000, "settings.json:1:1001", "nested more than 200 levels"),
        ('{\n  "a": ' + "9" * 5000 + "\n}", "settings.json:2:8", "more than 4300 digits"),
        ('{\n  "a": NaN\n}', "settings.json:2:8", "NaN is not a JSON number"),
        ('{"env": {},\n "b": -Infinity}', "settings.json:2:7", "-Infinity is not a JSON number"),
    ],
)
def test_claude_settings_hostile_json_is_refused_by_use_and_doctor(
    fake_home: Path, profile: str, capsys: pytest.CaptureFixture[str], text: str, where: str, reason: str
) -> None:
    path = _settings(fake_home, text)
    code, output = _run(capsys, "use", profile)
    _assert_refused(code, output, where)
    assert reason in output
    assert path.read_text() == text
    assert not (fake_home / ".bashrc").exists()  # nothing anywhere was written
    code, output = _run(capsys, "use", profile, "--dry-run")
    _assert_refused(code, output, where)
    code, output = _run(capsys, "doctor")
    assert code == 1, output
    assert where in output
    assert reason in output


def test_codex_toml_trailing_comma_in_inline_table_is_refused(
    fake_home: Path, profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = fake_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "m"\nx = { a = 1, }\n')
    assert main(["profile", "edit", profile, "--target", "codex", "--target", "bash"]) == 0
    code, output = _run(capsys, "use", profile)
    _assert_refused(code, output, "config.toml:2:14")
    assert "trailing comma" in output
    assert config.read_text() == 'model = "m"\nx = { a = 1, }\n'
    code, output = _run(capsys, "doctor")
    assert code == 1, output
    assert "config.toml:2:14" in output


def test_codex_toml_hostile_numbers_and_nesting_are_refused(
    fake_home: Path, profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = fake_home / ".codex" / "config.toml"
    config.parent.mkdir()
    assert main(["profile", "edit", profile, "--target", "codex"]) == 0
    for text in ("a = " + "9" * 5000 + "\n", "a = " + "[" * 3000 + "]" * 3000 + "\n"):
        config.write_text(text)
        code, output = _run(capsys, "use", profile)
        _assert_refused(code, output, "config.toml")
        assert config.read_text() == text


def test_backups_folder_that_is_a_file_is_named_and_nothing_is_written(
    fake_home: Path, profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    backups = AppPaths.default().backups_dir
    backups.parent.mkdir(parents=True, exist_ok=True)
    backups.write_text("in the way")
    settings = _settings(fake_home, "{}\n")
    code, output = _run(capsys, "use", profile)
    _assert_refused(code, output, str(backups))
    assert "backups folder" in output
    assert settings.read_text() == "{}\n"
    assert not (fake_home / ".bashrc").exists()


def test_immutable_home_is_a_clear_error(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``chattr +i HOME``: EPERM on every create; each command names the path it could not write."""
    chattr = require_tool("chattr", "apt-get install e2fsprogs")
    if subprocess.run([chattr, "+i", str(fake_home)], capture_output=True).returncode != 0:
        # setting the attribute takes CAP_LINUX_IMMUTABLE and a filesystem that has it (ext4, xfs, btrfs)
        not_applicable("this filesystem or user cannot set the immutable attribute")
    try:
        code, output = _run(capsys, "profile", "add", "p", "--kind", "openai-compatible",
                            "--base-url", "https://a.b/v1", "--target", "bash")
        _assert_refused(code, output, str(fake_home / ".config"))
        code, output = _run(capsys, "doctor")
        assert code == 0, output
        assert "internal error" not in output
    finally:
        subprocess.run(["chattr", "-i", str(fake_home)], check=True)
    assert not (fake_home / ".config").exists()


def test_import_profiles_of_a_hostile_file_is_a_clear_error(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared.json"
    shared.write_text('{"profiles": ' + "[" * 10000 + "]" * 10000 + "}")
    code, output = _run(capsys, "import-profiles", str(shared))
    _assert_refused(code, output, "shared.json:1:")
    assert "nested more than 200 levels" in output


def test_hostile_ledger_is_a_clear_error(profile: str, capsys: pytest.CaptureFixture[str]) -> None:
    """KV Switch's own state.json gets the same strict reading as the client files it guards."""
    ledger = AppPaths.default().config_dir / "state.json"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text('{\n  "schema_version": NaN\n}')
    code, output = _run(capsys, "use", profile)
    _assert_refused(code, output, "state.json:2:21")
    assert "NaN is not a JSON number" in output
