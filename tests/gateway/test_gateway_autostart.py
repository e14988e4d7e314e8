"""``kvswitch autostart on --gateway`` writes a login entry that runs ``kvswitch gateway run``, next to
(not instead of) the window's own entry."""

from __future__ import annotations

from pathlib import Path

from kvswitch.cli import main


def test_gateway_autostart_is_its_own_entry(fake_home: Path) -> None:
    folder = fake_home / ".config" / "autostart"
    assert main(["autostart", "on"]) == 0
    assert main(["autostart", "on", "--gateway"]) == 0
    entries = sorted(p.name for p in folder.iterdir())
    assert entries == ["io.github.kvswitch.KVSwitch.desktop", "io.github.kvswitch.KVSwitch.gateway.desktop"]
    text = (folder / "io.github.kvswitch.KVSwitch.gateway.desktop").read_text()
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert exec_line.endswith(" gateway run")
    assert "Comment=Start the KV Switch gateway" in text
    assert main(["autostart", "off", "--gateway"]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["io.github.kvswitch.KVSwitch.desktop"]
