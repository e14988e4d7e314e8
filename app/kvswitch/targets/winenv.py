"""The Windows user environment (``HKCU\\Environment``): what Explorer hands to every new program.

Claude Code and Codex started from the Start menu or a new terminal read their variables from here.
KV Switch writes text values (``REG_SZ``, so a ``%`` in a value stays literal) and then broadcasts
``WM_SETTINGCHANGE`` so Explorer reloads them; programs already running keep their old environment.

Ownership follows the other targets: only names KV Switch wrote (the ledger's ``owned``) are changed
or removed. A value the user had under a name the profile sets is remembered (``@prior:NAME`` in
``owned``) and put back, with its type, when no profile sets that name any more.

A snapshot is the whole text part of ``HKCU\\Environment`` (a few dozen values at most), so the same
snapshot taken by any instance at any time compares equal when nothing changed; the engine relies on
that to decide whether undo may put it back. ``@kind:NAME`` entries in ``Snapshot.values`` record
``REG_EXPAND_SZ`` values (keys starting with ``@`` are never variable names).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from kvswitch.core.envmap import shell_env
from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.models import Profile, mask_secret
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.targets.base import Plan, Snapshot, Target
from kvswitch.targets.shell_quote import check_variable
from kvswitch.targets.winreg_store import (
    LOCATION,
    InMemoryRegistry,
    Registry,
    RegValue,
    ValueKind,
    WinRegRegistry,
)

__all__ = [
    "KIND", "LOCATION", "PRIOR", "RUNNING_PROGRAMS_NOTE", "EnvPlan", "InMemoryRegistry", "RegValue",
    "Registry", "ValueKind", "WinRegRegistry", "WindowsEnvTarget",
]

TARGET_ID = "windows-env"
PRIOR = "@prior:"
KIND = "@kind:"
#: Windows keeps at most 32,767 characters per variable, terminator included.
MAX_VALUE_CHARS = 32766
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
RUNNING_PROGRAMS_NOTE = (
    "programs already running keep their old environment; start Claude Code or Codex again "
    "(from a new terminal) to use this profile"
)


@dataclass
class EnvPlan(Plan):
    """A plan for the registry: ``new_values`` plus the type of each value it puts back."""

    kinds: dict[str, ValueKind] = field(default_factory=dict)


class WindowsEnvTarget(Target):
    """Exports a profile's variables into the Windows user environment.

    Args:
        registry: where the values live; default: the real ``HKCU\\Environment`` (Windows only).
    """

    target_id = TARGET_ID

    def __init__(self, registry: Registry | None = None):
        self.registry: Registry = registry if registry is not None else WinRegRegistry()

    def location(self) -> str:
        return LOCATION

    def snapshot(self) -> Snapshot:
        values: dict[str, str | None] = {}
        for name, value in self.registry.values().items():
            if value.kind is ValueKind.OTHER:
                continue
            values[name] = value.data
            if value.kind is not ValueKind.SZ:
                values[KIND + name] = value.kind.value
        return Snapshot(target_id=self.target_id, location=LOCATION, values=values)

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Plan:
        desired = shell_env(profile) if profile is not None else {}
        for name, value in desired.items():
            _check(name, value)
        written = {name: value for name, value in owned.items() if not name.startswith("@")}
        priors = {name[len(PRIOR) :]: value for name, value in owned.items() if name.startswith(PRIOR)}
        plan = EnvPlan(self.target_id, LOCATION, before="", after="", new_values={})
        assert plan.new_values is not None
        current = {name: self.registry.get(name) for name in [*desired, *written]}
        secrets = profile.secrets if profile is not None else []

        for name, value in desired.items():
            now = current[name]
            if now is not None and now.kind is ValueKind.OTHER:
                raise ConfigParseError(
                    LOCATION,
                    f"{name} holds a value that is not text (a number, binary or list); KV Switch will not "
                    "replace it. Delete or rename it (e.g. in 'Edit environment variables for your "
                    "account') and try again",
                )
            if name in written:
                if now is None:
                    plan.warnings.append(f"{name} was removed by hand since the last switch; it is set again")
                elif now.data != written[name]:
                    plan.warnings.append(
                        f"{name} was changed by hand since the last switch (now {_show(name, now.data)}); "
                        "it is replaced by the profile's value"
                    )
                if name in priors:
                    plan.owned[PRIOR + name] = priors[name]
            elif now is not None:
                if now != RegValue(value):
                    plan.warnings.append(
                        f"{name} is already set in your user environment to {_show(name, now.data)}; the "
                        "profile replaces it and KV Switch puts your value back when no profile sets it"
                    )
                plan.owned[PRIOR + name] = _dump_prior(now)
            if now != RegValue(value):
                plan.new_values[name] = value
                plan.changes.append(f"{'set' if now is None else 'change'} {name} = {_show(name, value)}")
            plan.owned[name] = value
            secrets += _secret_values(name, value, now.data if now else None)

        for name, value in written.items():
            if name in desired:
                continue
            now = current[name]
            secrets += _secret_values(name, value, now.data if now else None)
            if now is None:
                continue
            if now.kind is ValueKind.OTHER or now.data != value:
                plan.warnings.append(
                    f"{name} was changed by hand since the last switch; kept, and no longer managed by "
                    "KV Switch"
                )
                continue
            if name in priors:
                prior = _load_prior(priors[name])
                if prior == now:  # the user's value was the same as ours: nothing to put back
                    continue
                plan.new_values[name] = prior.data
                plan.kinds[name] = prior.kind
                plan.changes.append(f"restore {name} = {_show(name, prior.data)} (your value from before)")
                secrets += _secret_values(name, prior.data)
            else:
                plan.new_values[name] = None
                plan.changes.append(f"remove {name}")

        plan.before = _render({name: now.data for name, now in current.items() if now is not None})
        plan.after = _render(_after(current, plan.new_values))
        plan.secrets = list(dict.fromkeys(secret for secret in secrets if secret))
        if plan.changed:
            plan.warnings.append(RUNNING_PROGRAMS_NOTE)
        return plan

    def apply(self, plan: Plan) -> None:
        if plan.target_id != self.target_id or plan.new_values is None:
            raise ValueError(f"plan for {plan.location} cannot be applied to {LOCATION}")
        if not plan.new_values:
            return
        kinds = plan.kinds if isinstance(plan, EnvPlan) else {}
        for name, value in plan.new_values.items():
            if value is None:
                self.registry.delete(name)
            else:
                _check(name, value)
                self.registry.set(name, RegValue(value, kinds.get(name, ValueKind.SZ)))
        self.registry.notify_changed()

    def restore(self, snapshot: Snapshot) -> None:
        """Make the text values equal to ``snapshot`` again (values created since are deleted).

        The engine calls this only when the key is exactly as KV Switch left it (or to roll back its
        own interrupted write), so nobody else's change can be undone by it.
        """
        if snapshot.values is None or snapshot.target_id != self.target_id:
            raise ValueError(f"snapshot of {snapshot.location} cannot restore {LOCATION}")
        wanted: dict[str, RegValue] = {}
        for name, data in snapshot.values.items():
            if name.startswith("@") or data is None:
                continue
            kind = ValueKind(snapshot.values.get(KIND + name) or ValueKind.SZ.value)
            wanted[name.casefold()] = RegValue(data, kind)
        names = {name.casefold(): name for name in snapshot.values if not name.startswith("@")}
        current = {
            name: value for name, value in self.registry.values().items() if value.kind is not ValueKind.OTHER
        }
        changed = False
        for name in current:
            if name.casefold() not in wanted:
                self.registry.delete(name)
                changed = True
        present = {name.casefold(): value for name, value in current.items()}
        for folded, value in wanted.items():
            if present.get(folded) != value:
                self.registry.set(names[folded], value)
                changed = True
        if changed:
            self.registry.notify_changed()


def _check(name: str, value: str) -> None:
    check_variable(name, value, LOCATION)
    if len(value) > MAX_VALUE_CHARS:
        raise UsageError(
            f"cannot write {name} to {LOCATION}: its value has {len(value)} characters, Windows allows "
            f"at most {MAX_VALUE_CHARS}"
        )


def _is_secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in _SECRET_WORDS)


def _show(name: str, value: str) -> str:
    return mask_secret(value) if _is_secret(name) else json.dumps(value, ensure_ascii=False)


def _secret_values(name: str, *values: str | None) -> list[str]:
    return [value for value in values if value] if _is_secret(name) else []


def _dump_prior(value: RegValue) -> str:
    if value.kind is ValueKind.SZ:
        return json.dumps(value.data, ensure_ascii=False)
    return json.dumps({"data": value.data, "kind": value.kind.value}, ensure_ascii=False)


def _load_prior(text: str) -> RegValue:
    """Read ``@prior:`` back; a damaged entry is refused rather than guessed."""
    try:
        loaded = strict_json(text)
        if isinstance(loaded, str):
            return RegValue(loaded)
        kind = ValueKind(loaded["kind"])
        if kind is ValueKind.OTHER or not isinstance(loaded["data"], str):
            raise ValueError(kind)
        return RegValue(loaded["data"], kind)
    except (ValueError, KeyError, TypeError):
        raise ConfigParseError(
            "KV Switch's ledger", f"the saved earlier value for {LOCATION} cannot be read"
        ) from None


def _after(current: Mapping[str, RegValue | None], new_values: Mapping[str, str | None]) -> dict[str, str]:
    after = {name: value.data for name, value in current.items() if value is not None}
    for name, value in new_values.items():
        if value is None:
            after.pop(name, None)
        else:
            after[name] = value
    return after


def _render(values: Mapping[str, str]) -> str:
    """``NAME=value`` lines for the diff; control characters escaped so each value stays on its line."""
    lines = (f"{name}={json.dumps(value, ensure_ascii=False)[1:-1]}\n" for name, value in values.items())
    return "".join(lines)
