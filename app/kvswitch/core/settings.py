"""KV Switch's own preferences (language, autostart, tray, theme, reuse alerts), kept in ``settings.json``.

``core.quickread`` reads the same file at start-up without pydantic (the same rules, the same values);
this model is what the settings dialog edits and saves.

Preferences are small and harmless, so a damaged file must never stop the app: a file that fails to
parse is set aside as ``settings.json.bak`` and defaults are used; a file with some bad values keeps its
good ones and only the bad keys fall back to defaults.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kvswitch.core.errors import ConfigParseError, KvSwitchError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.paths import AppPaths
from kvswitch.core.quickread import SETTINGS_NAME as SETTINGS_NAME
from kvswitch.core.quickread import SETTINGS_SCHEMA_VERSION, validate_language
from kvswitch.core.quickread import settings_file as settings_file
from kvswitch.core.strictparse import loads_json

SCHEMA_VERSION = SETTINGS_SCHEMA_VERSION

log = logging.getLogger("kvswitch.settings")

Theme = Literal["system", "light", "dark"]


class AppSettings(BaseModel):
    """Preferences; ``language=None`` follows the system locale."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    schema_version: int = SCHEMA_VERSION
    language: str | None = None
    autostart: bool = False
    close_to_tray: bool = True
    theme: Theme = "system"
    first_run_done: bool = False
    #: "Use" shows the diff and asks before writing (off: it writes at once; the message bar offers
    #: "Review changes" and "Undo")
    always_review_changes: bool = False
    #: saving a profile some client runs now writes it to that client's files at once (off: the
    #: client is shown as differing from the profile, with one click to apply it; see ``targets.live_sync``)
    write_through_live: bool = True
    #: a tray notification when reuse inside a conversation stays low (see ``ui.log_alerts``)
    reuse_alerts: bool = True
    reuse_alert_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    reuse_alert_requests: int = Field(default=3, ge=1, le=100)
    #: the gateway's usage file keeps request rows this long, then daily summaries
    #: (``usage.retention``)
    usage_keep_requests_days: int = Field(default=90, ge=1, le=3650)
    usage_keep_daily_days: int = Field(default=365, ge=1, le=3650)
    #: a tray notification when a gateway session's rolling hit rate (``gateway.truth.alerts``) drops
    cache_alerts: bool = True
    cache_alert_threshold: float = Field(default=0.8, ge=0.0, le=1.0)
    #: the rolling window: the session's last N requests that had something to reuse
    cache_alert_requests: int = Field(default=10, ge=1, le=1000)
    #: the gateway's bounds on a hung upstream (``gateway.forward.Limits``): the head and first body byte
    #: (a stream's first event) within this long, else the next profile (or 504); raise it for a local
    #: server that reads very long prompts before its first token
    gateway_first_byte_seconds: int = Field(default=180, ge=1, le=3600)
    #: once an answer is under way, a pause this long between two of its chunks ends it
    gateway_read_idle_seconds: int = Field(default=240, ge=1, le=86400)

    @field_validator("language")
    @classmethod
    def _check_language(cls, value: str | None) -> str | None:
        return validate_language(value)


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older settings document forward (version 1 is the first; nothing to do yet)."""
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        log.warning("settings.json has schema_version %r; reading what this version understands", version)
    return {**data, "schema_version": SCHEMA_VERSION}


def load_settings(paths: AppPaths) -> AppSettings:
    """The saved settings, or defaults; never raises for a damaged or unreadable file."""
    path = settings_file(paths)
    try:
        raw = read_bytes(path)
    except KvSwitchError as exc:  # unreadable preferences must not stop the app
        log.warning("cannot read settings (%s); using defaults", exc)
        return AppSettings()
    if raw is None:
        return AppSettings()
    try:
        data = loads_json(path, raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
    except (UnicodeDecodeError, ValueError, ConfigParseError) as exc:
        _set_aside(path, raw)
        log.warning("%s is not valid JSON (%s); kept a copy as %s.bak, using defaults", path, exc, path.name)
        return AppSettings()
    data = migrate(data)
    try:
        return AppSettings.model_validate(data)
    except ValidationError as exc:
        bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
        log.warning("%s: ignoring invalid values for %s", path, ", ".join(sorted(bad)))
        _set_aside(path, raw)
        return AppSettings.model_validate({key: value for key, value in data.items() if key not in bad})


def save_settings(paths: AppPaths, settings: AppSettings) -> Path:
    """Write the settings atomically; returns the file written."""
    data = settings.model_dump(mode="json")
    data["schema_version"] = SCHEMA_VERSION
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return atomic_write(settings_file(paths), text.encode("utf-8"))


def _set_aside(path: Path, raw: bytes) -> None:
    backup = path.with_name(path.name + ".bak")
    try:
        atomic_write(backup, raw)
    except KvSwitchError as exc:  # losing the copy must not stop the app either
        log.warning("could not keep a copy of %s: %s", path, exc)
