"""Autostart: the real XDG file on Linux, the LaunchAgent plist as a file, the Run key via a fake registry."""

from __future__ import annotations

import plistlib
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import APP_ID, AppPaths
from kvswitch.core.settings import load_settings
from kvswitch.platform.autostart import (
    RUN_KEY,
    RUN_VALUE,
    AutostartError,
    MacLaunchAgent,
    WindowsRunKey,
    XdgAutostart,
    desktop_exec,
    for_platform,
    launch_command,
    set_enabled,
)

COMMAND = ["/opt/KV Switch/kvswitch", "--minimized"]


def test_xdg_entry_is_written_validated_and_removed(fake_home: Path) -> None:
    entry = for_platform("linux", command=COMMAND)
    assert isinstance(entry, XdgAutostart)
    path = fake_home / ".config" / "autostart" / f"{APP_ID}.desktop"
    assert entry.location == str(path)
    assert not entry.enabled()

    set_enabled(entry, True)

    assert entry.enabled()
    text = path.read_text()
    assert 'Exec="/opt/KV Switch/kvswitch" --minimized' in text
    validate = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    set_enabled(entry, False)
    assert not path.exists()
    assert not entry.enabled()
    set_enabled(entry, False)  # already off: no error


def test_xdg_entry_disabled_by_the_desktop_counts_as_off(fake_home: Path) -> None:
    entry = XdgAutostart(COMMAND)
    entry.enable()
    entry.path.write_text(entry.path.read_text() + "Hidden=true\n")
    assert not entry.enabled()


def test_xdg_honours_xdg_config_home(tmp_path: Path) -> None:
    entry = XdgAutostart(COMMAND, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)})
    assert entry.path == tmp_path / "cfg" / "autostart" / f"{APP_ID}.desktop"


def test_unwritable_autostart_dir_is_a_clear_error(fake_home: Path) -> None:
    autostart_dir = fake_home / ".config" / "autostart"
    autostart_dir.parent.mkdir(parents=True, exist_ok=True)
    autostart_dir.write_text("a file where a directory belongs")
    with pytest.raises(AutostartError, match="cannot enable autostart"):
        set_enabled(XdgAutostart(COMMAND), True)


def test_desktop_exec_quoting_round_trips_through_a_shell(tmp_path: Path) -> None:
    """The spec's Exec quoting is the shell's double-quote rule; bash must read back the same argv."""
    argv = ["/opt/My Apps/kv$witch", "--minimized", "100%", 'say "hi" `now`\\']
    value = desktop_exec(argv)
    assert "100%%" in value
    as_read = value.replace("\\\\", "\\").replace("%%", "%")  # undo the key file's escaping
    out = subprocess.run(["bash", "-c", f"printf '%s\\0' {as_read}"],
                         capture_output=True, check=True).stdout
    assert out.decode().split("\0")[:-1] == argv
    entry = XdgAutostart(argv, env={"HOME": str(tmp_path)})
    entry.enable()
    validate = subprocess.run(["desktop-file-validate", str(entry.path)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr


def test_mac_launch_agent_plist(fake_home: Path) -> None:
    entry = for_platform("darwin", command=COMMAND)
    assert isinstance(entry, MacLaunchAgent)
    entry.enable()
    path = fake_home / "Library" / "LaunchAgents" / f"{APP_ID}.plist"
    data = plistlib.loads(path.read_bytes())
    assert data["Label"] == APP_ID
    assert data["ProgramArguments"] == COMMAND
    assert data["RunAtLoad"] is True
    assert entry.enabled()
    entry.disable()
    assert not entry.enabled()


class FakeRegistry:
    """The part of ``winreg`` the Run key uses, over a dict; ``fail`` simulates a policy-locked key."""

    HKEY_CURRENT_USER = "HKCU"
    KEY_READ = 1
    KEY_SET_VALUE = 2
    REG_SZ = 1

    def __init__(self, fail: bool = False):
        self.values: dict[tuple[str, str], dict[str, Any]] = {}
        self.fail = fail

    class _Key:
        def __init__(self, store: dict[str, Any]):
            self.store = store

        def __enter__(self) -> FakeRegistry._Key:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def _key(self, root: str, path: str, create: bool) -> FakeRegistry._Key:
        if self.fail:
            raise PermissionError(5, "Access is denied")
        if (root, path) not in self.values:
            if not create:
                raise FileNotFoundError(2, "The system cannot find the file specified")
            self.values[(root, path)] = {}
        return self._Key(self.values[(root, path)])

    def OpenKey(self, root: str, path: str, reserved: int, access: int) -> FakeRegistry._Key:
        return self._key(root, path, create=False)

    def CreateKeyEx(self, root: str, path: str, reserved: int, access: int) -> FakeRegistry._Key:
        return self._key(root, path, create=True)

    def QueryValueEx(self, key: FakeRegistry._Key, name: str) -> tuple[str, int]:
        if name not in key.store:
            raise FileNotFoundError(2, "value not found")
        return key.store[name], self.REG_SZ

    def SetValueEx(self, key: FakeRegistry._Key, name: str, reserved: int, kind: int, value: str) -> None:
        key.store[name] = value

    def DeleteValue(self, key: FakeRegistry._Key, name: str) -> None:
        if name not in key.store:
            raise FileNotFoundError(2, "value not found")
        del key.store[name]


def test_windows_run_key() -> None:
    registry = FakeRegistry()
    entry = for_platform("win32", command=["C:\\Program Files\\KV Switch\\kvswitch.exe", "--minimized"],
                         registry=registry)
    assert isinstance(entry, WindowsRunKey)
    assert not entry.enabled()
    entry.enable()
    expected = '"C:\\Program Files\\KV Switch\\kvswitch.exe" --minimized'
    assert registry.values[("HKCU", RUN_KEY)][RUN_VALUE] == expected
    assert entry.enabled()
    entry.disable()
    assert not entry.enabled()
    entry.disable()


def test_windows_run_key_denied_is_reported() -> None:
    entry = WindowsRunKey(COMMAND, FakeRegistry(fail=True))
    with pytest.raises(AutostartError, match="cannot write"):
        entry.enable()


def test_launch_command_starts_minimized() -> None:
    command = launch_command()
    assert command[-1] == "--minimized"
    assert Path(command[0]).exists()


def test_autostart_command_switches_and_remembers(fake_home: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = fake_home / ".config" / "autostart" / f"{APP_ID}.desktop"
    assert main(["autostart", "on"]) == 0
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert load_settings(AppPaths.default()).autostart is True
    assert main(["autostart"]) == 0
    assert "autostart is on" in capsys.readouterr().out
    assert main(["autostart", "off"]) == 0
    assert not path.exists()
    assert load_settings(AppPaths.default()).autostart is False
