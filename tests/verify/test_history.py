"""Verify history: every run kept per profile (0600, no key), listed, as JSON and as CSV."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.verify.history import HistoryEntry, VerifyHistory, public_url


def _entry(profile: str, verdict: str, reuse: float | None) -> HistoryEntry:
    return HistoryEntry(
        time="2026-12-01T10:00:00+00:00",
        profile=profile,
        check="synthetic",
        verdict=verdict,
        reuse_ratio=reuse,
        ttft_cold_ms=900.0,
        ttft_warm_ms=40.0,
        server={"build": "b11434"},
    )


def test_append_load_and_damaged_lines(tmp_path: Path) -> None:
    store = VerifyHistory(tmp_path / "h")
    path = store.append(_entry("local/one", "HIT", 0.98))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with path.open("a") as handle:
        handle.write('{"time": "cut off mid-wri')  # a run killed while writing
    store.append(_entry("local/one", "MISS", 0.01))
    loaded = store.load("local/one")
    assert [e.verdict for e in loaded] == ["HIT", "MISS"]
    assert store.profiles() == ["local/one"]


def test_public_url_drops_credentials() -> None:
    assert public_url("http://user:secret@127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"


def test_cli_history_json_csv_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    store = VerifyHistory(AppPaths.default().data_dir / "verify-history")
    store.append(_entry("a", "HIT", 0.97))
    store.append(_entry("b", "PARTIAL", 0.5))
    assert main(["verify", "--history", "a", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["verdict"] for d in data] == ["HIT"]
    assert main(["verify", "--history", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["profile"] for r in rows] == ["a", "b"]
    assert rows[1]["reuse_ratio"] == "0.5"
    assert rows[0]["server_build"] == "b11434"
    assert main(["verify", "--history"]) == 0
    table = capsys.readouterr().out
    assert "PARTIAL" in table
    assert "900→40 ms" in table


def test_a_verify_is_recorded_without_its_key(capsys: pytest.CaptureFixture[str]) -> None:
    """A verify against a closed port still lands in the history (as ERROR), and no key with it."""
    from support.net import free_port

    url = f"http://127.0.0.1:{free_port()}"
    assert (
        main(["profile", "add", "p", "--kind", "llama.cpp", "--base-url", url, "--api-key", "sk-HISTORY-KEY"])
        == 0
    )
    main(["verify", "p", "--timeout", "3"])
    capsys.readouterr()
    history_dir = AppPaths.default().data_dir / "verify-history"
    files = list(history_dir.iterdir())
    assert len(files) == 1
    text = files[0].read_text()
    assert "sk-HISTORY-KEY" not in text
    assert json.loads(text.splitlines()[0])["verdict"] == "ERROR"
    assert os.stat(files[0]).st_mode & 0o077 == 0
