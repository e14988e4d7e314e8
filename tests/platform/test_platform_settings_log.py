"""App settings (pydantic, atomic, forgiving) and KV Switch's own rotating, key-scrubbing log."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from kvswitch.core.applog import BACKUP_COUNT, MAX_BYTES, log_file, setup_logging
from kvswitch.core.paths import AppPaths
from kvswitch.core.settings import SCHEMA_VERSION, AppSettings, load_settings, save_settings, settings_file


@pytest.fixture
def paths(tmp_path: Path) -> AppPaths:
    return AppPaths.default(tmp_path / "cfg")


def test_defaults_when_no_file(paths: AppPaths) -> None:
    settings = load_settings(paths)
    assert settings == AppSettings()
    assert (settings.autostart, settings.close_to_tray, settings.theme, settings.language) == (
        False, True, "system", None)


def test_round_trip_is_atomic_json_with_schema_version(paths: AppPaths) -> None:
    settings = AppSettings(language="pt-BR", autostart=True, close_to_tray=False, theme="dark")
    written = save_settings(paths, settings)
    assert written == settings_file(paths) == paths.config_dir / "settings.json"
    data = json.loads(written.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["language"] == "pt_BR"
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    assert load_settings(paths) == settings
    assert list(paths.config_dir.glob("*kvswitch-tmp*")) == []


def test_broken_json_is_set_aside_and_defaults_used(paths: AppPaths) -> None:
    paths.config_dir.mkdir(parents=True)
    settings_file(paths).write_text("{not json")
    assert load_settings(paths) == AppSettings()
    assert (paths.config_dir / "settings.json.bak").read_text() == "{not json"


def test_bad_values_fall_back_one_by_one(paths: AppPaths) -> None:
    paths.config_dir.mkdir(parents=True)
    settings_file(paths).write_text(json.dumps({"schema_version": 1, "theme": "purple", "autostart": True,
                                                "language": "de", "unknown_future_key": 3}))
    settings = load_settings(paths)
    assert (settings.theme, settings.autostart, settings.language) == ("system", True, "de")


def test_invalid_language_is_rejected() -> None:
    with pytest.raises(ValidationError, match="locale name"):
        AppSettings(language="../../etc")


def test_setup_logging_writes_a_rotating_file_without_keys(paths: AppPaths) -> None:
    logger = logging.getLogger("kvswitch.test")
    try:
        path = setup_logging(paths)
        assert path == log_file(paths) == paths.log_dir / "kvswitch.log"
        assert setup_logging(paths) == path  # a second call adds no second handler
        handlers = [h for h in logging.getLogger("kvswitch").handlers if getattr(h, "_kvswitch_file", None)]
        assert len(handlers) == 1
        assert (handlers[0].maxBytes, handlers[0].backupCount) == (MAX_BYTES, BACKUP_COUNT)  # type: ignore[attr-defined]
        logger.info("applied profile %s with key %s", "work", "sk-ant-api03-abcdefghijklmnop")
        logger.warning("header Authorization: Bearer abcdef1234567890")
        handlers[0].flush()
        text = path.read_text()
        assert "applied profile work" in text
        assert "abcdefghijklmnop" not in text
        assert "abcdef1234567890" not in text
        assert "sk-ant-…[hidden]" in text
    finally:
        for handler in list(logging.getLogger("kvswitch").handlers):
            if getattr(handler, "_kvswitch_file", None):
                logging.getLogger("kvswitch").removeHandler(handler)
                handler.close()


def test_log_rotates(paths: AppPaths) -> None:
    logger = logging.getLogger("kvswitch.rotation")
    try:
        path = setup_logging(paths)
        line = "x" * 1000
        for _ in range(MAX_BYTES // 1000 + 50):
            logger.info(line)
        assert path.with_name("kvswitch.log.1").is_file()
        assert path.stat().st_size < MAX_BYTES
    finally:
        for handler in list(logging.getLogger("kvswitch").handlers):
            if getattr(handler, "_kvswitch_file", None):
                logging.getLogger("kvswitch").removeHandler(handler)
                handler.close()
