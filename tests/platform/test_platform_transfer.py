"""Export and import of profiles: keys only with consent, 0600 when present, bad files add nothing."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.errors import ConfigParseError, ProfileError
from kvswitch.core.models import LogSource, Profile, ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.platform.transfer import export_profiles, import_profiles, read_export

KEY = "sk-ant-api03-secret-value-1234567890"


@pytest.fixture
def store() -> ProfileStore:
    store = ProfileStore(AppPaths.default())
    store.add(Profile(name="work", kind=ProfileKind.ANTHROPIC, base_url="https://api.anthropic.com",
                      api_key=KEY))
    store.add(Profile(name="local", kind=ProfileKind.LLAMA_CPP, base_url="http://127.0.0.1:8080",
                      model="qwen", env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
                      log=LogSource(kind="file", path="/tmp/l.log")))
    return store


def test_export_without_consent_has_no_key(store: ProfileStore, tmp_path: Path) -> None:
    path = export_profiles(store, tmp_path / "out.json")
    text = path.read_text()
    assert KEY not in text
    assert KEY[-4:] not in text  # not even a masked form that would import as a wrong key
    document = json.loads(text)
    assert document["includes_keys"] is False
    assert document["keys_omitted"] == ["work"]
    assert [p["name"] for p in document["profiles"]] == ["work", "local"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_export_with_keys_is_0600_and_round_trips(store: ProfileStore, tmp_path: Path) -> None:
    path = export_profiles(store, tmp_path / "keys.json", include_keys=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["profiles"][0]["api_key"] == KEY
    assert read_export(path) == store.profiles()


def test_import_renames_clashes_and_reports_missing_keys(store: ProfileStore, tmp_path: Path) -> None:
    path = export_profiles(store, tmp_path / "out.json")
    report = import_profiles(store, path)
    assert report.added == ["work (imported)", "local (imported)"]
    assert report.renamed == {"work": "work (imported)", "local": "local (imported)"}
    assert report.without_key == ["work (imported)"]
    assert store.names() == ["work", "local", "work (imported)", "local (imported)"]
    assert store.get("local (imported)").log == LogSource(kind="file", path="/tmp/l.log")
    assert "no API key in the file for: work (imported)" in report.summary()


def test_bad_files_add_nothing(store: ProfileStore, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ConfigParseError, match="not a KV Switch profiles file"):
        import_profiles(store, broken)
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"format": "kvswitch-profiles", "format_version": 1, "profiles": [
        {"name": "ok", "base_url": "http://127.0.0.1:1"},
        {"name": "bad", "base_url": "ftp://nowhere"}]}))
    with pytest.raises(ProfileError, match="profile 'bad' is invalid: base_url"):
        import_profiles(store, invalid)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": "kvswitch-profiles", "format_version": 99, "profiles": []}))
    with pytest.raises(ConfigParseError, match="newer"):
        import_profiles(store, newer)
    assert store.names() == ["work", "local"]


def test_cli_export_and_import(store: ProfileStore, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.json"
    assert main(["export", str(out), "--include-keys"]) == 0
    assert "with API keys" in capsys.readouterr().out
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    other = tmp_path / "other-config"
    assert main(["--config-dir", str(other), "import-profiles", str(out)]) == 0
    assert "imported 2 profile(s): work, local" in capsys.readouterr().out
    imported = ProfileStore(AppPaths.default(other))
    assert imported.get("work").key == KEY
    assert main(["import-profiles", str(tmp_path / "missing.json")]) != 0
    assert "missing.json" in capsys.readouterr().err
