"""Start KV Switch in the tray at login: XDG autostart, the Windows Run key, or a macOS LaunchAgent.

Off by default. Each platform has one small class with ``enabled()``, ``enable()`` and ``disable()``;
``for_platform()`` picks it. All of them start the app with ``--minimized`` so login shows only the
tray icon. The Windows registry is reached through an injectable module so the logic is tested on
any OS.
"""

from __future__ import annotations

import importlib
import os
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from kvswitch.core.errors import FileAccessError, KvSwitchError
from kvswitch.core.fsutil import atomic_delete, atomic_write, read_bytes
from kvswitch.core.paths import APP_ID, home_dir

RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "KV Switch"


class AutostartError(KvSwitchError):
    """Autostart could not be switched on or off."""


class Autostart(Protocol):
    """One platform's login-item mechanism."""

    @property
    def location(self) -> str:
        """Where the entry lives, for display (a file path or a registry key)."""
        ...

    def enabled(self) -> bool: ...

    def enable(self) -> None: ...

    def disable(self) -> None: ...


def launch_command() -> list[str]:
    """How to start this installation of KV Switch in the tray.

    A PyInstaller bundle starts its own executable; an installed package its ``kvswitch`` script
    (next to the interpreter in a venv, else on PATH); anything else runs the module.
    """
    if getattr(sys, "frozen", False):
        return [sys.executable, "--minimized"]
    # On Windows the GUI script starts without a console window flashing up at login.
    name = "kvswitch-gui.exe" if sys.platform == "win32" else "kvswitch"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return [str(beside), "--minimized"]
    on_path = shutil.which(name)
    if on_path:
        return [on_path, "--minimized"]
    return [sys.executable, "-m", "kvswitch", "--minimized"]


#: the entry that starts the gateway at login, next to (not instead of) the app's own
GATEWAY_ID = f"{APP_ID}.gateway"
GATEWAY_RUN_VALUE = "KV Switch gateway"


def gateway_command() -> list[str]:
    """How to start this installation's gateway (``kvswitch gateway run``) at login, without a window."""
    command = launch_command()
    return [*command[:-1], "gateway", "run"]


def desktop_exec(argv: Sequence[str]) -> str:
    """An ``Exec=`` value as written in the file, per the Desktop Entry spec.

    Arguments with reserved characters are double-quoted with ``"`$\\`` backslash-escaped, ``%`` is
    doubled, and then the whole value gets the key file's string escaping (each backslash doubled).
    """
    quoted = []
    for arg in argv:
        escaped = arg.replace("%", "%%")
        if any(ch in arg for ch in ' \t\n"\'\\><~|&;$*?#()`='):
            escaped = '"' + "".join("\\" + ch if ch in '"`$\\' else ch for ch in escaped) + '"'
        quoted.append(escaped)
    return " ".join(quoted).replace("\\", "\\\\")


class XdgAutostart:
    """``$XDG_CONFIG_HOME/autostart/<APP_ID>.desktop`` (Linux and other freedesktop systems)."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None, *,
                 entry_id: str = APP_ID, name: str = "KV Switch"):
        env = os.environ if env is None else env
        xdg = env.get("XDG_CONFIG_HOME")
        config_home = Path(xdg) if xdg else home_dir(env) / ".config"
        self.path = config_home / "autostart" / f"{entry_id}.desktop"
        self.command = list(command)
        self.name = name

    @property
    def location(self) -> str:
        return str(self.path)

    def entry(self) -> str:
        return "\n".join([
            "[Desktop Entry]",
            "Type=Application",
            f"Name={self.name}",
            "Comment=Start KV Switch in the system tray" if self.name == "KV Switch"
            else "Comment=Start the KV Switch gateway",
            f"Exec={desktop_exec(self.command)}",
            f"Icon={APP_ID}",
            "Terminal=false",
            "X-GNOME-Autostart-enabled=true",
            "",
        ])

    def enabled(self) -> bool:
        raw = read_bytes(self.path)
        if raw is None:
            return False
        text = raw.decode("utf-8", errors="replace")
        return "Hidden=true" not in text and "X-GNOME-Autostart-enabled=false" not in text

    def enable(self) -> None:
        atomic_write(self.path, self.entry().encode("utf-8"))

    def disable(self) -> None:
        atomic_delete(self.path)


class MacLaunchAgent:
    """``~/Library/LaunchAgents/<APP_ID>.plist``, loaded by launchd at the next login."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None, *,
                 entry_id: str = APP_ID):
        self.path = home_dir(env) / "Library" / "LaunchAgents" / f"{entry_id}.plist"
        self.command = list(command)
        self.label = entry_id

    @property
    def location(self) -> str:
        return str(self.path)

    def plist(self) -> bytes:
        return plistlib.dumps({
            "Label": self.label,
            "ProgramArguments": self.command,
            "RunAtLoad": True,
            "ProcessType": "Interactive",
            "LimitLoadToSessionType": "Aqua",
        })

    def enabled(self) -> bool:
        raw = read_bytes(self.path)
        if raw is None:
            return False
        try:
            return bool(plistlib.loads(raw).get("RunAtLoad"))
        except (plistlib.InvalidFileException, ValueError):
            return False

    def enable(self) -> None:
        atomic_write(self.path, self.plist())

    def disable(self) -> None:
        atomic_delete(self.path)


class WindowsRunKey:
    """``HKCU\\...\\CurrentVersion\\Run`` value ``KV Switch``.

    Args:
        command: the program and arguments to start.
        registry: the ``winreg`` module (or a stand-in with the same functions, for tests).
    """

    def __init__(self, command: Sequence[str], registry: Any = None, *, value: str = RUN_VALUE):
        self.registry = registry if registry is not None else importlib.import_module("winreg")
        self.command = subprocess.list2cmdline(list(command))
        self.value = value

    @property
    def location(self) -> str:
        return f"HKEY_CURRENT_USER\\{RUN_KEY}\\{self.value}"

    def enabled(self) -> bool:
        reg = self.registry
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_READ) as key:
                value, _kind = reg.QueryValueEx(key, self.value)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise AutostartError(f"cannot read {self.location}: {exc}") from exc
        return bool(value)

    def enable(self) -> None:
        reg = self.registry
        try:
            with reg.CreateKeyEx(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_SET_VALUE) as key:
                reg.SetValueEx(key, self.value, 0, reg.REG_SZ, self.command)
        except OSError as exc:
            raise AutostartError(f"cannot write {self.location}: {exc}") from exc

    def disable(self) -> None:
        reg = self.registry
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_SET_VALUE) as key:
                reg.DeleteValue(key, self.value)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise AutostartError(f"cannot remove {self.location}: {exc}") from exc


def for_platform(platform: str | None = None, *, command: Sequence[str] | None = None,
                 env: Mapping[str, str] | None = None, registry: Any = None,
                 gateway: bool = False) -> Autostart:
    """The autostart mechanism of ``platform`` (default: this one); ``gateway``: the gateway's entry."""
    platform = sys.platform if platform is None else platform
    if command is None:
        command = gateway_command() if gateway else launch_command()
    if platform == "win32":
        return WindowsRunKey(command, registry, value=GATEWAY_RUN_VALUE if gateway else RUN_VALUE)
    if platform == "darwin":
        return MacLaunchAgent(command, env, entry_id=GATEWAY_ID if gateway else APP_ID)
    if gateway:
        return XdgAutostart(command, env, entry_id=GATEWAY_ID, name="KV Switch gateway")
    return XdgAutostart(command, env)


def set_enabled(autostart: Autostart, enabled: bool) -> None:
    """Switch autostart on or off, with file errors reported as :class:`AutostartError`."""
    try:
        autostart.enable() if enabled else autostart.disable()
    except FileAccessError as exc:
        raise AutostartError(f"cannot {'enable' if enabled else 'disable'} autostart: {exc}") from exc
