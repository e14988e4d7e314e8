"""The window's start-up reading of settings.json, profiles.json and the ledger, without pydantic.

Importing pydantic and building the models takes longer than painting the whole window, and the
cards need only a few plain values. The documents KV Switch writes itself are in a canonical form
(every value as the model would give it); those are read here through the same rules the models use
(``core.profile_rules``, ``validate_language``). Anything else raises ``NotCanonical``, and the caller
lets the pydantic model decide, so both readings give the same values or the model's own error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvswitch.core import profile_rules as rules
from kvswitch.core.canonical import (
    REQUIRED,
    Checked,
    DictOf,
    Exact,
    ListOf,
    Model,
    NotCanonical,
    OneOf,
    Optional,
    Spec,
    Text,
)
from kvswitch.core.errors import ConfigParseError, KvSwitchError
from kvswitch.core.fsutil import read_bytes
from kvswitch.core.paths import AppPaths
from kvswitch.core.strictparse import loads_json

SETTINGS_SCHEMA_VERSION = 1
SETTINGS_NAME = "settings.json"
LEDGER_SCHEMA = 1
PROFILES_SCHEMA = 2
THEMES = ("system", "light", "dark")


def validate_language(value: str | None) -> str | None:
    """A locale name such as ``de`` or ``pt_BR`` (``-`` becomes ``_``); empty means the system's."""
    if value is None or value == "":
        return None
    value = value.replace("-", "_")
    if not all(part.isalnum() for part in value.split("_")) or len(value) > 16:
        raise ValueError(f"language must be a locale name such as 'de' or 'pt_BR', not {value!r}")
    return value


_TEXT = Text()
_MAYBE_TEXT = Optional(_TEXT)
_BOOL = Exact(bool)

SETTINGS = Model({
    "schema_version": (Exact(int), SETTINGS_SCHEMA_VERSION),
    "language": (Optional(Checked(_TEXT, validate_language)), None),
    "autostart": (_BOOL, False),
    "close_to_tray": (_BOOL, True),
    "theme": (OneOf(THEMES), "system"),
    "first_run_done": (_BOOL, False),
    "always_review_changes": (_BOOL, False),
    "write_through_live": (_BOOL, True),
    "reuse_alerts": (_BOOL, True),
    "reuse_alert_threshold": (Exact(float, 0.0, 1.0), 0.5),
    "reuse_alert_requests": (Exact(int, 1, 100), 3),
    "usage_keep_requests_days": (Exact(int, 1, 3650), 90),
    "usage_keep_daily_days": (Exact(int, 1, 3650), 365),
    "cache_alerts": (_BOOL, True),
    "cache_alert_threshold": (Exact(float, 0.0, 1.0), 0.8),
    "cache_alert_requests": (Exact(int, 1, 1000), 10),
    "gateway_first_byte_seconds": (Exact(int, 1, 3600), 180),
    "gateway_read_idle_seconds": (Exact(int, 1, 86400), 240),
}, forbid_extra=False)

MODEL_ROLES = ("opus", "sonnet", "haiku", "small_fast", "subagent")
_LOG_SOURCE = Model({
    "kind": (OneOf(rules.LOG_SOURCE_NEEDS), REQUIRED),
    "path": (_MAYBE_TEXT, None),
    "command": (Optional(ListOf(_TEXT)), None),
    "unit": (_MAYBE_TEXT, None),
}, forbid_extra=True, check=lambda log: rules.check_log_source(log["kind"], log))

PROFILE = Model({
    "name": (Checked(_TEXT, lambda name: rules.validate_profile_name(name, stored=True)), REQUIRED),
    "kind": (OneOf(kind.value for kind in rules.ProfileKind), rules.ProfileKind.CUSTOM.value),
    "base_url": (Checked(_TEXT, rules.validate_base_url), REQUIRED),
    "api_key": (_MAYBE_TEXT, None),
    "key_env": (OneOf(rules.KEY_ENVS), rules.KEY_ENVS[0]),
    "model": (_MAYBE_TEXT, None),
    "models": (Model({role: (_MAYBE_TEXT, None) for role in MODEL_ROLES}, forbid_extra=True),
               dict.fromkeys(MODEL_ROLES)),
    "env": (Checked(DictOf(_TEXT), rules.validate_env), {}),
    "targets": (Checked(ListOf(_TEXT), rules.validate_targets), ["claude"]),
    "log": (Optional(_LOG_SOURCE), None),
    "codex_provider_id": (Optional(Checked(_TEXT, rules.validate_provider_id)), None),
    "notes": (_TEXT, ""),
    "allow_dangerous_env": (_BOOL, False),
    "via_gateway": (_BOOL, False),
    "fallbacks": (Checked(ListOf(_TEXT), rules.validate_fallbacks), []),
    "protocol": (Optional(OneOf(rules.WIRE_PROTOCOLS)), None),
    "context_window": (Optional(Exact(int, *rules.CONTEXT_WINDOW_RANGE)), None),
    "stable_prefix": (_BOOL, False),
    "slot_affinity": (_BOOL, False),
    "inline_system_as_user": (_BOOL, False),
}, forbid_extra=True, check=lambda p: rules.check_not_own_fallback(p["name"], p["fallbacks"]))

_MAYBE_INT = Optional(Exact(int))
_VALUES = Optional(DictOf(_MAYBE_TEXT))
_TARGET_RECORD = Model({
    "location": (_TEXT, REQUIRED), "profile": (_MAYBE_TEXT, None), "owned": (DictOf(_TEXT), {}),
    "digest": (_MAYBE_TEXT, None),
}, forbid_extra=False)
_JOURNAL_ENTRY = Model({
    "target_id": (_TEXT, REQUIRED), "location": (_TEXT, REQUIRED), "existed": (_BOOL, True),
    "mode": (_MAYBE_INT, None), "backup": (_MAYBE_TEXT, None), "values": (_VALUES, None),
    "before_digest": (_TEXT, REQUIRED), "after_digest": (_MAYBE_TEXT, None),
    "before_record": (Optional(_TARGET_RECORD), None), "after_record": (Optional(_TARGET_RECORD), None),
}, forbid_extra=False)
_PROFILE_EDIT = Model({"before": (PROFILE, REQUIRED), "after": (PROFILE, REQUIRED)}, forbid_extra=False)
_TRANSACTION = Model({
    "action": (_TEXT, REQUIRED), "profile": (_MAYBE_TEXT, None), "previous_active": (_MAYBE_TEXT, None),
    "created_at": (_TEXT, ""), "entries": (ListOf(_JOURNAL_ENTRY), []),
    "edit": (Optional(_PROFILE_EDIT), None),
}, forbid_extra=False)
_ORIGINAL = Model({
    "location": (_TEXT, REQUIRED), "existed": (_BOOL, True), "mode": (_MAYBE_INT, None),
    "backup": (_MAYBE_TEXT, None), "values": (_VALUES, None), "digest": (_TEXT, REQUIRED),
    "saved_at": (_TEXT, ""),
}, forbid_extra=False)
LEDGER = Model({
    "schema_version": (Exact(int), LEDGER_SCHEMA), "active": (_MAYBE_TEXT, None),
    "targets": (DictOf(_TARGET_RECORD), {}), "history": (ListOf(_TRANSACTION), []),
    "pending": (Optional(_TRANSACTION), None), "originals": (DictOf(_ORIGINAL), {}),
}, forbid_extra=False)


def settings_file(paths: AppPaths) -> Path:
    return paths.config_dir / SETTINGS_NAME


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older settings document forward (version 1 is the first; nothing to do yet)."""
    return {**data, "schema_version": SETTINGS_SCHEMA_VERSION}


def _document(path: Path, *, encoding: str = "utf-8") -> Any:
    """The file's JSON value (``None`` when absent or blank); anything unreadable is the model's to
    judge (it says which line), so it raises ``NotCanonical`` here."""
    try:
        raw = read_bytes(path)
    except KvSwitchError as exc:
        raise NotCanonical(str(exc)) from None
    if raw is None or not raw.strip():
        return None
    try:
        return loads_json(path, raw.decode(encoding))
    except (UnicodeDecodeError, json.JSONDecodeError, ConfigParseError, ValueError) as exc:
        raise NotCanonical(str(exc)) from None


def read_settings(path: Path) -> dict[str, Any]:
    """settings.json's values with the defaults filled in, as ``load_settings`` would give them."""
    data = _document(path)
    if data is None:
        if path.exists():
            raise NotCanonical("blank")  # the full reader sets a blank file aside
        return SETTINGS.read({})
    if type(data) is not dict:
        raise NotCanonical("not an object")
    version = data.get("schema_version", SETTINGS_SCHEMA_VERSION)
    if version != SETTINGS_SCHEMA_VERSION or type(version) is not int:
        raise NotCanonical("another schema version")  # the full reader says so in the log
    return read(SETTINGS, migrate_settings(data))


def read_profiles_document(path: Path) -> dict[str, Any] | None:
    """profiles.json as a JSON object of the current schema, or ``None`` when there is none yet."""
    data = _document(path, encoding="utf-8-sig")
    if data is None:
        return None
    version = data.get("schema_version") if type(data) is dict else None
    if type(version) is not int or version != PROFILES_SCHEMA or type(data.get("profiles")) is not list:
        raise NotCanonical("not the current layout")  # migration and its backup are the store's
    return data


def read_profile(item: Any) -> dict[str, Any]:
    """One stored profile, as ``Profile.model_validate(item, context={"stored": True})`` dumps it."""
    return read(PROFILE, item)


def read_ledger(path: Path) -> dict[str, Any]:
    """The ledger (state.json) with its defaults filled in; an empty one when there is no file."""
    data = _document(path)
    if data is None:
        return LEDGER.read({})
    if type(data) is not dict:
        raise NotCanonical("not an object")
    version = data.get("schema_version", LEDGER_SCHEMA)
    if type(version) is not int or version > LEDGER_SCHEMA:
        raise NotCanonical("another schema version")
    return read(LEDGER, data)


def read(spec: Spec, value: Any) -> Any:
    return spec.read(value)
