"""Small input edges: option-like profile names, port 0, temp files left by a killed write."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import STALE_TEMP_SECONDS, ProfileStore

BASE = ["--kind", "custom", "--base-url", "http://127.0.0.1:8080"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_names_starting_with_a_dash_are_refused_at_creation(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _run(capsys, "profile", "add", *BASE, "--", "-x")
    assert code == 2, output
    assert "starts with '-'" in output
    assert main(["profile", "add", "ok", *BASE]) == 0
    code, output = _run(capsys, "profile", "edit", "ok", "--rename=-x")
    assert code == 2, output
    assert ProfileStore(AppPaths.default()).names() == ["ok"]


def test_a_stored_dash_name_still_loads_and_can_be_renamed(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store written before the rule must keep working, so its owner can rename the profile."""
    paths = AppPaths.default()
    assert main(["profile", "add", "ok", *BASE]) == 0
    document = json.loads(paths.profiles_file.read_text())
    document["profiles"][0]["name"] = "-old"
    paths.profiles_file.write_text(json.dumps(document))
    code, output = _run(capsys, "profile", "edit", "--rename", "renamed", "--", "-old")
    assert code == 0, output
    assert ProfileStore(paths).names() == ["renamed"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:0", "http://127.0.0.1:65536", "https://h:00/v1"])
def test_ports_outside_1_to_65535_are_refused(
    fake_home: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    code, output = _run(capsys, "profile", "add", "p", "--kind", "custom", "--base-url", url)
    assert code == 2, output
    assert "port must be a number from 1 to 65535" in output


def test_stale_temp_of_a_killed_write_is_cleaned_on_the_next_load(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = AppPaths.default()
    assert main(["profile", "add", "p", *BASE]) == 0
    folder = paths.profiles_file.parent
    stale = folder / ".profiles.json.abc123.kvswitch-tmp"
    stale.write_text('{"half": ')
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    fresh = folder / ".profiles.json.def456.kvswitch-tmp"  # another process may be writing it now
    fresh.write_text("{")
    foreign = folder / ".profiles.json.old-notes"  # not ours: never touched
    foreign.write_text("mine")
    os.utime(foreign, (old, old))

    code, output = _run(capsys, "profile", "list")
    assert code == 0, output
    assert not stale.exists()
    assert fresh.exists()
    assert foreign.exists()
    assert ProfileStore(paths).names() == ["p"]
