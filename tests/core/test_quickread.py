"""The start-up reading (``core.quickread``, no pydantic) and the models agree, on real and hostile files.

The window lists its cards from settings.json, profiles.json and the ledger read without pydantic; the
engines read the same files through the pydantic models. Two readings of one file must never disagree:
whenever the quick reading gives a value, the model gives the same one, and whatever the model accepts
and KV Switch writes back is read quickly (so a real user's start really skips pydantic).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kvswitch.core import quickread
from kvswitch.core.canonical import NotCanonical
from kvswitch.core.ledger import Ledger, LedgerState
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.settings import AppSettings, load_settings, save_settings
from kvswitch.core.store import ProfileStore
from kvswitch.targets.engine import Engine

ROOT = Path(__file__).resolve().parents[2]
STORED = {"stored": True}
SECRETS = {"secrets": True}

FULL_PROFILE: dict[str, Any] = {
    "name": "-old style name", "kind": "llama.cpp", "base_url": "http://user:pa55word@127.0.0.1:8080/v1",
    "api_key": "sk-quick-0123456789abcdef", "key_env": "ANTHROPIC_API_KEY", "model": "qwen",
    "models": {"opus": "big", "sonnet": None, "haiku": "small", "small_fast": None, "subagent": None},
    "env": {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0", "PATH": "/opt/bin"},
    "targets": ["claude", "codex", "claude-project:/work/p"],
    "log": {"kind": "command", "path": None, "command": ["llama-server", "-m", "x.gguf"], "unit": None},
    "codex_provider_id": "local_1", "notes": "ünïcode ✓", "allow_dangerous_env": False,
    "via_gateway": True, "fallbacks": ["cloud"], "protocol": "openai_chat", "context_window": 32768,
    "stable_prefix": True,
}
MINIMAL_PROFILE: dict[str, Any] = {"name": "m", "base_url": "https://api.example.com"}

# values that look right to a careless reader: each is lax (the model coerces it) or wrong
TRICKY: list[Any] = [
    None, True, False, 0, 1, 2, -1, 255, 256, 100_000_001, 1.0, 0.5, 2.0, float("inf"), "", " ", "x",
    " padded ", "\ud800", "a\x00b", "true", "1", "256", "http://h", "http://h/", " http://h", "ftp://h",
    "http://h:0", "http://h?q=1", "claude", "codex", "bad-target", "-dash", "a/b", "x" * 65, "anthropic",
    "openai_chat", "file", "command", [], ["claude"], ["claude", "claude"], ["x"], [1], ["cloud"],
    [" cloud "], ["m"], {}, {"opus": "o"}, {"bogus": 1}, {"A": "b"}, {"1A": "b"}, {"A": 1},
    {"kind": "file"}, {"kind": "file", "path": "/var/log/x"}, {"kind": "journald", "unit": "ollama"},
    {"kind": "directory", "path": ""}, {"kind": "command", "command": []},
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


def full_profile(item: Any) -> dict[str, Any] | None:
    try:
        return Profile.model_validate(item, context=STORED).model_dump(mode="json", context=SECRETS)
    except ValidationError:
        return None


def quick_profile(item: Any) -> dict[str, Any] | None:
    try:
        return quickread.read_profile(item)
    except NotCanonical:
        return None


def same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``True`` is not ``1``, nor ``1`` ``1.0`` (``==`` would say they are)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def assert_profiles_agree(item: Any) -> None:
    quick, full = quick_profile(item), full_profile(item)
    if quick is not None:
        assert same(full, quick), item  # never a value the model would not give (or would refuse)
    if full is not None and writable(full):
        assert same(quick_profile(full), full)  # what the store writes back is always read quickly


def writable(data: Any) -> bool:
    """Whether the store could write it (a lone surrogate cannot be encoded in UTF-8)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("base", [FULL_PROFILE, MINIMAL_PROFILE])
@pytest.mark.parametrize("field", sorted(FULL_PROFILE))
@pytest.mark.parametrize("value", TRICKY, ids=repr)
def test_a_tricky_field_value_reads_alike(base: dict[str, Any], field: str, value: Any) -> None:
    assert_profiles_agree({**base, field: value})


def test_extra_and_missing_fields_read_alike() -> None:
    assert quick_profile(FULL_PROFILE) == full_profile(FULL_PROFILE)
    assert quick_profile(MINIMAL_PROFILE) == full_profile(MINIMAL_PROFILE)
    own_fallback = {**FULL_PROFILE, "name": "cloud"}
    unknown_role = {**FULL_PROFILE, "models": {**FULL_PROFILE["models"], "x": 1}}
    for broken in ({**MINIMAL_PROFILE, "unknown": 1}, {"name": "m"}, {"base_url": "http://h"}, [], "x", None,
                   own_fallback, unknown_role):
        assert_profiles_agree(broken)
        assert full_profile(broken) is None


@settings(max_examples=400, deadline=None)
@given(base=st.sampled_from([FULL_PROFILE, MINIMAL_PROFILE]),
       changes=st.dictionaries(st.sampled_from(sorted(FULL_PROFILE) + ["extra"]),
                               json_values | st.sampled_from(TRICKY), max_size=3))
def test_random_profiles_read_alike(base: dict[str, Any], changes: dict[str, Any]) -> None:
    assert_profiles_agree({**base, **changes})


def test_the_rules_know_the_models_fields() -> None:
    """One list of fields and defaults: a field added to the model and not here fails this test."""
    assert set(quickread.PROFILE.fields) == set(Profile.model_fields)
    assert set(quickread.SETTINGS.fields) == set(AppSettings.model_fields)
    assert set(quickread.LEDGER.fields) == set(LedgerState.model_fields)
    defaults = AppSettings().model_dump(mode="json")
    assert same(quickread.read_settings(Path("/nonexistent/settings.json")), defaults)


# -- settings ----------------------------------------------------------------------------------------

SETTINGS_TRICKY: list[Any] = [None, True, False, 0, 1, 3, 101, 0.5, 1.0, 1.5, -0.1, "", "de", "pt-BR",
                              "pt_BR", "x y", "dark", "light", "system", "neon", [], {}, "\ud800", "yes"]


def settings_agree(data: Any) -> None:
    try:
        quick = quickread.SETTINGS.read(quickread.migrate_settings(data))
    except (NotCanonical, TypeError):
        quick = None
    try:
        full = AppSettings.model_validate(quickread.migrate_settings(data)).model_dump(mode="json")
    except (ValidationError, TypeError):
        full = None
    if quick is not None:
        assert same(full, quick), data
    if full is not None and writable(full):
        assert same(quickread.SETTINGS.read(full), full)


@pytest.mark.parametrize("field", sorted(AppSettings.model_fields))
@pytest.mark.parametrize("value", SETTINGS_TRICKY, ids=repr)
def test_a_tricky_setting_reads_alike(field: str, value: Any) -> None:
    settings_agree({field: value})
    settings_agree({**AppSettings(theme="dark", language="de").model_dump(mode="json"), field: value})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.dictionaries(st.sampled_from(sorted(AppSettings.model_fields) + ["old_key"]),
                            json_values | st.sampled_from(SETTINGS_TRICKY), max_size=4))
def test_random_settings_read_alike(data: dict[str, Any]) -> None:
    settings_agree(data)


HOSTILE_SETTINGS_FILES = [b"", b"   \n", b"\xef\xbb\xbf{}", b"{\"theme\": \"dark\",}", b"[1, 2]", b"null",
                          b"{\"theme\": NaN}", b"[" * 5000, b"\xff\xfe", b"{\"schema_version\": 9}",
                          b"{\"schema_version\": true}", b"{\"theme\": \"dark\", \"theme\": \"neon\"}",
                          b"{\"reuse_alert_threshold\": 1}", b"{\"language\": \"\"}"]


@pytest.mark.parametrize("raw", HOSTILE_SETTINGS_FILES, ids=lambda raw: repr(raw[:24]))
def test_hostile_settings_files_read_alike(raw: bytes) -> None:
    paths = AppPaths.default()
    path = quickread.settings_file(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    try:
        quick = quickread.read_settings(path)
    except NotCanonical:
        quick = None
    full = load_settings(paths).model_dump(mode="json")  # never raises; may set the file aside
    if quick is not None:
        assert quick == full


def test_saved_settings_are_read_quickly() -> None:
    paths = AppPaths.default()
    changed = AppSettings(theme="light", language="zh_CN", reuse_alert_threshold=0.25, reuse_alert_requests=7,
                          close_to_tray=False, first_run_done=True)
    for saved in (AppSettings(), changed):
        save_settings(paths, saved)
        assert quickread.read_settings(quickread.settings_file(paths)) == saved.model_dump(mode="json")
        assert load_settings(paths) == saved


# -- the ledger --------------------------------------------------------------------------------------

def real_ledger() -> dict[str, Any]:
    """The ledger the real engine writes: two applies to Claude Code and Codex, one undone."""
    paths = AppPaths.default()
    engine = Engine(paths, lock_timeout=2.0)
    for name, url in (("local", "http://127.0.0.1:8080"), ("other", "http://127.0.0.1:8081")):
        engine.apply(Profile.model_validate({"name": name, "kind": "llama.cpp", "base_url": url,
                                             "api_key": "sk-ledger-0123456789",
                                             "targets": ["claude", "codex"]}))
    engine.undo()
    return json.loads(paths.state_file.read_text())  # type: ignore[no-any-return]


def ledger_agree(data: Any, tmp: Path) -> None:
    path = tmp / "state.json"
    path.write_text(json.dumps(data))
    try:
        quick = quickread.read_ledger(path)
    except NotCanonical:
        quick = None
    try:
        full: dict[str, Any] | None = Ledger(path).load().model_dump(mode="json")
    except Exception:  # noqa: BLE001 - the model's refusal, whichever error it is
        full = None
    if quick is not None:
        assert same(quick, full)


def test_the_real_ledger_reads_alike(tmp_path: Path) -> None:
    data = real_ledger()
    assert data["history"]
    assert data["active"] == "local"
    state_file = AppPaths.default().state_file
    assert same(quickread.read_ledger(state_file), Ledger(state_file).load().model_dump(mode="json"))
    ledger_agree(data, tmp_path)
    for key in ("active", "targets", "history", "pending", "originals", "schema_version"):
        for value in TRICKY[:30]:
            ledger_agree({**data, key: value}, tmp_path)
    entry = data["history"][0]["entries"][0]
    for key in sorted(entry):
        for value in TRICKY[:30]:
            history = [{**data["history"][0], "entries": [{**entry, key: value}]}]
            ledger_agree({**data, "history": history}, tmp_path)


# -- the store, as the window starts ----------------------------------------------------------------

def test_the_store_lists_a_real_file_without_pydantic() -> None:
    """A fresh interpreter lists the profiles, the active one and the preferences with pydantic unloaded,
    and they are the values the models give."""
    real_ledger()
    paths = AppPaths.default()
    store = ProfileStore(paths)
    store.add(Profile.model_validate(FULL_PROFILE, context=STORED))
    store.add(Profile.model_validate({"name": "local", "kind": "ollama", "base_url": "http://127.0.0.1:11434"}))
    save_settings(paths, AppSettings(theme="dark", first_run_done=True))
    code = """
import json, sys
from kvswitch.core.paths import AppPaths
from kvswitch.core.quickread import read_settings, settings_file
from kvswitch.core.store import ProfileStore
paths = AppPaths.default()
store = ProfileStore(paths)
rows = [[s.name, s.kind.value, s.base_url, s.model, s.via_gateway, s.secrets] for s in store.summaries()]
print(json.dumps({"names": store.names(), "rows": rows, "active": store.active_name,
                  "settings": read_settings(settings_file(paths)), "pydantic": "pydantic" in sys.modules}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=_env()).stdout
    seen = json.loads(out)
    assert seen["pydantic"] is False
    full = ProfileStore(paths).profiles()
    assert seen["names"] == [p.name for p in full] == ["-old style name", "local"]
    assert seen["rows"] == [[p.name, p.kind.value, p.base_url, p.model, p.via_gateway, p.secrets]
                            for p in full]
    assert seen["active"] == Ledger(paths.state_file).load().active == "local"
    assert seen["settings"] == load_settings(paths).model_dump(mode="json")


def _env() -> dict[str, str]:
    import os  # noqa: PLC0415

    return {**os.environ, "PYTHONPATH": str(ROOT / "app")}


def test_the_active_name_follows_every_apply_at_once() -> None:
    """The store keeps the active name between paints; applies milliseconds apart still show at once."""
    paths = AppPaths.default()
    store = ProfileStore(paths)
    engine = Engine(paths, lock_timeout=2.0)
    assert store.active_name is None
    seen = []
    for name in ("aa", "bb", "aa", "bb"):  # same-size ledgers, written within a few ms
        engine.apply(Profile.model_validate({"name": name, "kind": "llama.cpp", "base_url": "http://127.0.0.1:8080",
                                             "targets": ["claude"]}))
        seen.append(store.active_name)
    engine.undo()
    assert seen == ["aa", "bb", "aa", "bb"]
    assert store.active_name == "aa"
