"""The Windows user environment target, on the in-memory registry (winreg exists only on Windows).

The in-memory registry is case-insensitive and typed like ``HKCU\\Environment``; the last tests run the
real switching engine against it (apply, switch, undo) to check that snapshots taken by different
target instances agree, which undo depends on.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvswitch.core.envmap import shell_env
from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets import winenv
from kvswitch.targets.engine import Engine
from kvswitch.targets.winenv import (
    KIND,
    LOCATION,
    PRIOR,
    RUNNING_PROGRAMS_NOTE,
    EnvPlan,
    InMemoryRegistry,
    RegValue,
    ValueKind,
    WindowsEnvTarget,
    WinRegRegistry,
)

KEY = "sk-test-0123456789abcdef"
LOCAL = Profile(name="local", base_url="http://127.0.0.1:8080", api_key=KEY, model="qwen",
                env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}, targets=["claude", "codex", "windows-env"])
REMOTE = Profile(name="remote", base_url="https://gw.example.com", env={"HTTPS_PROXY": "http://proxy:3128"},
                 allow_dangerous_env=True,  # a proxy redirects traffic: confirmed by the user
                 targets=["windows-env"])
USER_VALUES = {
    "Path": RegValue("%USERPROFILE%\\bin;C:\\tools", ValueKind.EXPAND_SZ),
    "TEMP": RegValue("%USERPROFILE%\\AppData\\Local\\Temp", ValueKind.EXPAND_SZ),
    "OneDrive": RegValue("C:\\Users\\me\\OneDrive"),
    "Counter": RegValue("", ValueKind.OTHER),
}


def apply(target: WindowsEnvTarget, profile: Profile | None, owned: dict[str, str]) -> dict[str, str]:
    plan = target.plan(profile, owned)
    target.apply(plan)
    return plan.owned


def test_apply_sets_text_values_broadcasts_once_and_is_idempotent() -> None:
    registry = InMemoryRegistry(USER_VALUES)
    target = WindowsEnvTarget(registry)
    assert target.location() == LOCATION == "HKCU\\Environment"
    plan = target.plan(LOCAL, {})
    assert isinstance(plan, EnvPlan)
    assert plan.changed
    assert plan.new_values == shell_env(LOCAL)
    assert RUNNING_PROGRAMS_NOTE in plan.warnings
    assert KEY not in "\n".join(plan.changes)
    assert KEY in plan.secrets
    target.apply(plan)
    assert registry.broadcasts == 1
    for name, value in shell_env(LOCAL).items():
        assert registry.get(name) == RegValue(value, ValueKind.SZ)
    for name, value in USER_VALUES.items():
        assert registry.get(name) == value
    again = target.plan(LOCAL, plan.owned)
    assert not again.changed
    assert RUNNING_PROGRAMS_NOTE not in again.warnings
    target.apply(again)
    assert registry.broadcasts == 1


def test_percent_signs_stay_literal() -> None:
    registry = InMemoryRegistry()
    profile = Profile(name="p", base_url="http://h:1", env={"X": "%PATH%;!x!"}, targets=["windows-env"])
    apply(WindowsEnvTarget(registry), profile, {})
    assert registry.get("X") == RegValue("%PATH%;!x!", ValueKind.SZ)


def test_switching_removes_what_the_new_profile_does_not_set_and_nothing_else() -> None:
    registry = InMemoryRegistry(USER_VALUES)
    target = WindowsEnvTarget(registry)
    owned = apply(target, LOCAL, {})
    plan = target.plan(REMOTE, owned)
    assert "remove ANTHROPIC_AUTH_TOKEN" in plan.changes
    assert "change ANTHROPIC_BASE_URL = \"https://gw.example.com\"" in plan.changes
    target.apply(plan)
    assert {name for name in registry.values()} == {*USER_VALUES, *shell_env(REMOTE)}
    apply(target, None, plan.owned)
    assert registry.values() == USER_VALUES


def test_user_value_under_a_profile_name_is_given_back_with_its_type() -> None:
    original = RegValue("%GATEWAY%/v1", ValueKind.EXPAND_SZ)
    registry = InMemoryRegistry({**USER_VALUES, "anthropic_base_url": original})
    target = WindowsEnvTarget(registry)
    plan = target.plan(LOCAL, {})
    assert any("already set in your user environment" in w for w in plan.warnings)
    assert PRIOR + "ANTHROPIC_BASE_URL" in plan.owned
    target.apply(plan)
    assert registry.get("ANTHROPIC_BASE_URL") == RegValue("http://127.0.0.1:8080", ValueKind.SZ)
    owned = apply(target, REMOTE, plan.owned)  # the prior survives a switch
    assert PRIOR + "ANTHROPIC_BASE_URL" in owned
    removal = target.plan(None, owned)
    assert "restore ANTHROPIC_BASE_URL = \"%GATEWAY%/v1\" (your value from before)" in removal.changes
    assert removal.owned == {}
    target.apply(removal)
    assert registry.get("ANTHROPIC_BASE_URL") == original
    assert registry.values() == {**USER_VALUES, "anthropic_base_url": original}


def test_value_changed_by_hand_is_kept_on_removal_and_replaced_on_apply() -> None:
    registry = InMemoryRegistry()
    target = WindowsEnvTarget(registry)
    owned = apply(target, LOCAL, {})
    registry.set("ANTHROPIC_MODEL", RegValue("my-model"))
    replan = target.plan(LOCAL, owned)
    assert any("ANTHROPIC_MODEL was changed by hand" in w for w in replan.warnings)
    assert replan.new_values == {"ANTHROPIC_MODEL": "qwen"}
    registry.delete("CLAUDE_CODE_ATTRIBUTION_HEADER")
    removal = target.plan(None, owned)
    assert any("ANTHROPIC_MODEL was changed by hand" in w and "kept" in w for w in removal.warnings)
    target.apply(removal)
    assert registry.values() == {"ANTHROPIC_MODEL": RegValue("my-model")}


def test_snapshot_and_restore_put_every_value_and_type_back() -> None:
    registry = InMemoryRegistry({**USER_VALUES, "ANTHROPIC_MODEL": RegValue("%M%", ValueKind.EXPAND_SZ)})
    target = WindowsEnvTarget(registry)
    before = target.snapshot()
    assert before.values is not None
    assert before.values[KIND + "Path"] == "REG_EXPAND_SZ"
    assert "Counter" not in before.values, "non-text values are outside what KV Switch manages"
    assert WindowsEnvTarget(registry).snapshot() == before, "any instance sees the same snapshot"
    apply(target, LOCAL, {})
    assert target.snapshot() != before
    broadcasts = registry.broadcasts
    WindowsEnvTarget(registry).restore(before)
    assert registry.values() == {**USER_VALUES, "ANTHROPIC_MODEL": RegValue("%M%", ValueKind.EXPAND_SZ)}
    assert registry.broadcasts == broadcasts + 1
    target.restore(before)
    assert registry.broadcasts == broadcasts + 1, "nothing to put back: no broadcast"


def test_non_text_value_under_a_profile_name_stops_the_plan() -> None:
    registry = InMemoryRegistry({"ANTHROPIC_MODEL": RegValue("", ValueKind.OTHER)})
    with pytest.raises(ConfigParseError, match="ANTHROPIC_MODEL holds a value that is not text"):
        WindowsEnvTarget(registry).plan(LOCAL, {})
    assert registry.broadcasts == 0


def test_unstorable_values_are_refused_without_showing_them() -> None:
    target = WindowsEnvTarget(InMemoryRegistry())
    with_nul = Profile(name="p", base_url="http://h:1", api_key="sk-abc\x00def", targets=["windows-env"])
    with pytest.raises(UsageError, match="ANTHROPIC_AUTH_TOKEN.*NUL") as info:
        target.plan(with_nul, {})
    assert "sk-abc" not in str(info.value)
    huge = Profile(name="p", base_url="http://h:1", env={"BIG": "x" * 40000}, targets=["windows-env"])
    with pytest.raises(UsageError, match="BIG.*at most 32766"):
        target.plan(huge, {})


def test_damaged_prior_in_the_ledger_is_refused() -> None:
    registry = InMemoryRegistry({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"})
    owned = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", PRIOR + "ANTHROPIC_BASE_URL": "{not json"}
    with pytest.raises(ConfigParseError, match="saved earlier value"):
        WindowsEnvTarget(registry).plan(None, owned)


@pytest.mark.skipif(sys.platform == "win32", reason="checks the message shown on other systems")
def test_real_registry_is_refused_outside_windows() -> None:
    with pytest.raises(UsageError, match="only on Windows"):
        WinRegRegistry()
    with pytest.raises(UsageError, match="only on Windows"):
        WindowsEnvTarget()


_values = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)
_names = st.sampled_from(["ANTHROPIC_BASE_URL", "anthropic_model", "KVS_A", "KVS_B", "Path"])
_kinds = st.sampled_from([ValueKind.SZ, ValueKind.EXPAND_SZ])
_initial = st.dictionaries(_names, st.builds(RegValue, _values, _kinds), max_size=4)
_profiles = st.builds(
    lambda model, env, key: Profile(name="p", base_url="http://127.0.0.1:1", model=model or None,
                                    api_key=key or None, env=env, targets=["windows-env"]),
    _values, st.dictionaries(st.sampled_from(["KVS_A", "KVS_B", "KVS_C"]), _values, max_size=3), _values)


@settings(max_examples=300, deadline=None)
@given(initial=_initial, sequence=st.lists(_profiles, min_size=1, max_size=4))
def test_any_sequence_of_switches_then_removal_gives_back_the_original(initial: dict[str, RegValue],
                                                                        sequence: list[Profile]) -> None:
    registry = InMemoryRegistry(initial)
    original = registry.values()
    target = WindowsEnvTarget(registry)
    snapshot = target.snapshot()
    owned: dict[str, str] = {}
    for profile in sequence:
        owned = apply(target, profile, owned)
        for name, value in shell_env(profile).items():
            assert registry.get(name) == RegValue(value)
        assert not target.plan(profile, owned).changed
    apply(target, None, owned)
    assert registry.values() == original
    apply(target, sequence[-1], {})
    target.restore(snapshot)
    assert registry.values() == original


# -- through the real switching engine -----------------------------------------------------------------

@pytest.fixture
def shared_registry(monkeypatch: pytest.MonkeyPatch) -> InMemoryRegistry:
    """Every ``WindowsEnvTarget()`` the engine makes talks to this one registry."""
    registry = InMemoryRegistry(USER_VALUES)
    monkeypatch.setattr(winenv, "WinRegRegistry", lambda: registry)
    return registry


def test_engine_apply_switch_and_undo(shared_registry: InMemoryRegistry) -> None:
    engine = Engine(AppPaths.default(), lock_timeout=2.0)
    engine.apply(Profile(name="local", base_url="http://127.0.0.1:8080", api_key=KEY,
                         targets=["windows-env"]))
    assert shared_registry.get("ANTHROPIC_AUTH_TOKEN") == RegValue(KEY)
    engine.apply(REMOTE)
    assert shared_registry.get("ANTHROPIC_AUTH_TOKEN") is None
    assert shared_registry.get("HTTPS_PROXY") == RegValue("http://proxy:3128")
    result = engine.undo()
    assert result.written == [LOCATION], result.warnings
    assert shared_registry.get("ANTHROPIC_AUTH_TOKEN") == RegValue(KEY)
    assert shared_registry.get("HTTPS_PROXY") is None
    engine.undo()
    assert shared_registry.values() == USER_VALUES


def test_same_value_as_the_users_is_simply_let_go() -> None:
    registry = InMemoryRegistry({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"})
    target = WindowsEnvTarget(registry)
    plan = target.plan(LOCAL, {})
    assert "ANTHROPIC_BASE_URL" not in (plan.new_values or {})
    assert not any("already set" in w for w in plan.warnings)
    target.apply(plan)
    removal = target.plan(None, plan.owned)
    assert "ANTHROPIC_BASE_URL" not in (removal.new_values or {})
    target.apply(removal)
    assert registry.values() == {"ANTHROPIC_BASE_URL": RegValue("http://127.0.0.1:8080")}
