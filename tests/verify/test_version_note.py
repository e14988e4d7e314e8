"""Claims follow measurements: ``doctor`` and the client verify say when the installed Claude Code is not
the version the cache-safe settings were measured on, and point at ``--ablate`` to measure again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.client_settings import claude_settings
from kvswitch.verify.client_report import version_note
from support.claude import claude_binary


def _on_path(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}/usr/bin{os.pathsep}/bin")


def _claude_profile() -> None:
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--model", "tiny"]) == 0


def test_the_measured_version_needs_no_note() -> None:
    measured = claude_settings().client_version
    assert version_note("claude", measured) is None
    assert version_note("codex", "0.169.0") is None  # only Claude Code's settings are measured
    note = version_note("claude", "9.9.9", "local")
    assert note is not None
    assert measured in note
    assert "kvswitch verify local --client claude --ablate" in note


@pytest.mark.real_server
def test_doctor_is_quiet_about_the_real_measured_claude(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = claude_binary()
    _claude_profile()
    _on_path(monkeypatch, binary.parent)
    main(["doctor"])
    assert "measured on Claude Code" not in capsys.readouterr().out


def test_doctor_names_a_claude_of_another_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # only one Claude Code version is installed here: a newer one is a stand-in that answers --version
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    fake.chmod(0o755)
    _claude_profile()
    _on_path(monkeypatch, bin_dir)
    assert main(["doctor"]) == 1
    text = capsys.readouterr().out
    assert f"measured on Claude Code {claude_settings().client_version}; this is 9.9.9" in text
    assert "--ablate" in text
