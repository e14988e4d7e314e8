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
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from kvswitch.core.envmap import shell_env
from kvswitch.core.errors import ConfigParseError, FileAccessError, UsageError
from kvswitch.core.models import Profile, mask_secret
from kvswitch.targets.base import Plan, Snapshot, Target
from kvswitch.targets.shell_quote import check_variable

if sys.platform == "win32":
    import winreg

TARGET_ID = "windows-env"
LOCATION = "HKCU\\Environment"
PRIOR = "@prior:"
KIND = "@kind:"
#: Windows keeps at most 32,767 characters per variable, terminator included.
MAX_VALUE_CHARS = 32766
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
RUNNING_PROGRAMS_NOTE = (
    "programs already running keep their old environment; start Claude Code or Codex again "
    "(from a new terminal) to use this profile"
)


class ValueKind(StrEnum):
    SZ = "REG_SZ"
    EXPAND_SZ = "REG_EXPAND_SZ"
    #: numbers, binary and lists: never written, never restored, never removed by KV Switch
    OTHER = "other"


@dataclass(frozen=True)
class RegValue:
    data: str
    kind: ValueKind = ValueKind.SZ


class Registry(Protocol):
    """The values under ``HKCU\\Environment``; names are case-insensitive, as in Windows."""

    def get(self, name: str) -> RegValue | None:
        """The value, ``None`` when absent (a non-text value comes back with kind ``OTHER``)."""

    def set(self, name: str, value: RegValue) -> None:
        """Create or replace a text value (kind ``SZ`` or ``EXPAND_SZ``)."""

    def delete(self, name: str) -> None:
        """Remove a value; an absent one is not an error."""

    def values(self) -> dict[str, RegValue]:
        """Every value, by name as stored."""

    def notify_changed(self) -> None:
        """Tell running programs (Explorer above all) that the environment changed."""


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
        secrets = [profile.key] if profile is not None and profile.key else []

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


class InMemoryRegistry:
    """``HKCU\\Environment`` kept in a dict, for tests and dry runs; case-insensitive like the real one.

    Args:
        initial: starting values (a plain string is a ``REG_SZ``).
    """

    def __init__(self, initial: Mapping[str, str | RegValue] | None = None):
        self._values: dict[str, tuple[str, RegValue]] = {}
        #: how many ``WM_SETTINGCHANGE`` broadcasts a real registry would have sent
        self.broadcasts = 0
        for name, value in (initial or {}).items():
            self.set(name, value if isinstance(value, RegValue) else RegValue(value))

    def get(self, name: str) -> RegValue | None:
        entry = self._values.get(name.casefold())
        return entry[1] if entry else None

    def set(self, name: str, value: RegValue) -> None:
        folded = name.casefold()
        stored_name = self._values[folded][0] if folded in self._values else name
        self._values[folded] = (stored_name, value)

    def delete(self, name: str) -> None:
        self._values.pop(name.casefold(), None)

    def values(self) -> dict[str, RegValue]:
        return dict(self._values.values())

    def notify_changed(self) -> None:
        self.broadcasts += 1


class WinRegRegistry:
    """The real ``HKCU\\Environment`` through ``winreg``; constructing it elsewhere is a ``UsageError``.

    Every method body sits under ``if sys.platform == "win32"`` so type checkers on other systems,
    where ``winreg`` does not exist, skip it.
    """

    def __init__(self) -> None:
        if sys.platform != "win32":
            raise UsageError("the windows-env target exists only on Windows; remove it from this profile")

    def get(self, name: str) -> RegValue | None:
        if sys.platform == "win32":
            try:
                with winreg.OpenKey(winreg.HKEY_CURRENT_USER, "Environment", 0, winreg.KEY_READ) as key:
                    data, kind = winreg.QueryValueEx(key, name)
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise FileAccessError(LOCATION, exc.strerror or str(exc)) from exc
            return _from_winreg(data, kind)
        raise _not_windows()

    def set(self, name: str, value: RegValue) -> None:
        if sys.platform == "win32":
            kind = winreg.REG_EXPAND_SZ if value.kind is ValueKind.EXPAND_SZ else winreg.REG_SZ
            try:
                hkcu = winreg.HKEY_CURRENT_USER
                with winreg.CreateKeyEx(hkcu, "Environment", 0, winreg.KEY_SET_VALUE) as key:
                    winreg.SetValueEx(key, name, 0, kind, value.data)
            except OSError as exc:
                raise FileAccessError(LOCATION, exc.strerror or str(exc)) from exc
            return
        raise _not_windows()

    def delete(self, name: str) -> None:
        if sys.platform == "win32":
            try:
                with winreg.OpenKey(winreg.HKEY_CURRENT_USER, "Environment", 0, winreg.KEY_SET_VALUE) as key:
                    winreg.DeleteValue(key, name)
            except FileNotFoundError:
                return
            except OSError as exc:
                raise FileAccessError(LOCATION, exc.strerror or str(exc)) from exc
            return
        raise _not_windows()

    def values(self) -> dict[str, RegValue]:
        if sys.platform == "win32":
            result: dict[str, RegValue] = {}
            try:
                with winreg.OpenKey(winreg.HKEY_CURRENT_USER, "Environment", 0, winreg.KEY_READ) as key:
                    index = 0
                    while True:
                        try:
                            name, data, kind = winreg.EnumValue(key, index)
                        except OSError:  # ERROR_NO_MORE_ITEMS
                            break
                        result[name] = _from_winreg(data, kind)
                        index += 1
            except FileNotFoundError:
                return {}
            except OSError as exc:
                raise FileAccessError(LOCATION, exc.strerror or str(exc)) from exc
            return result
        raise _not_windows()

    def notify_changed(self) -> None:
        """Broadcast ``WM_SETTINGCHANGE("Environment")``, waiting at most 2 s per hung window."""
        if sys.platform == "win32":
            import ctypes
            from ctypes import wintypes

            user32 = ctypes.WinDLL("user32", use_last_error=True)
            send = user32.SendMessageTimeoutW
            send.argtypes = [wintypes.HWND, wintypes.UINT, wintypes.WPARAM, ctypes.c_wchar_p, wintypes.UINT,
                             wintypes.UINT, ctypes.POINTER(ctypes.c_size_t)]
            send.restype = ctypes.c_ssize_t
            result = ctypes.c_size_t(0)
            hwnd_broadcast, wm_settingchange, smto_abortifhung = 0xFFFF, 0x001A, 0x0002
            # Best effort: the values are stored already; a program that misses the broadcast sees
            # them after the next sign-in.
            timeout_ms = 2000
            send(hwnd_broadcast, wm_settingchange, 0, "Environment", smto_abortifhung, timeout_ms,
                 ctypes.byref(result))
            return
        raise _not_windows()


def _not_windows() -> UsageError:
    return UsageError("the Windows registry is only available on Windows")


def _from_winreg(data: object, kind: int) -> RegValue:
    if sys.platform == "win32" and isinstance(data, str):
        if kind == winreg.REG_SZ:
            return RegValue(data)
        if kind == winreg.REG_EXPAND_SZ:
            return RegValue(data, ValueKind.EXPAND_SZ)
    return RegValue("", ValueKind.OTHER)


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
        loaded = json.loads(text)
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
