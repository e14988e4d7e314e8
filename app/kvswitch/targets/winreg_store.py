"""Values under ``HKCU\\Environment``: the real registry (``winreg``) and an in-memory one.

Kept apart from the target so the target's ownership logic reads without the Windows plumbing, and
so tests and dry runs on any system use the same ``Registry`` protocol as Windows does.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from kvswitch.core.errors import FileAccessError, UsageError

if sys.platform == "win32":
    import winreg

LOCATION = "HKCU\\Environment"


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
            send.argtypes = [
                wintypes.HWND,
                wintypes.UINT,
                wintypes.WPARAM,
                ctypes.c_wchar_p,
                wintypes.UINT,
                wintypes.UINT,
                ctypes.POINTER(ctypes.c_size_t),
            ]
            send.restype = ctypes.c_ssize_t
            result = ctypes.c_size_t(0)
            hwnd_broadcast, wm_settingchange, smto_abortifhung = 0xFFFF, 0x001A, 0x0002
            # Best effort: the values are stored already; a program that misses the broadcast sees
            # them after the next sign-in.
            timeout_ms = 2000
            send(
                hwnd_broadcast,
                wm_settingchange,
                0,
                "Environment",
                smto_abortifhung,
                timeout_ms,
                ctypes.byref(result),
            )
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
