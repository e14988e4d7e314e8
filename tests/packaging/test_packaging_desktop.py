"""The Linux desktop entry and AppStream metainfo pass the freedesktop validators and match the app."""

from __future__ import annotations

import configparser
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from kvswitch import __version__
from kvswitch.core.paths import APP_ID
from support.require import require_tool

LINUX = Path(__file__).resolve().parents[2] / "packaging" / "linux"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"


def run_tool(*argv: str) -> subprocess.CompletedProcess[str]:
    require_tool(argv[0], "apt-get install desktop-file-utils appstream; scripts/dev.sh test installs them")
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=60)


def test_desktop_file_validates() -> None:
    result = run_tool("desktop-file-validate", str(DESKTOP))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout


def test_metainfo_validates() -> None:
    result = run_tool("appstreamcli", "validate", "--no-net", str(METAINFO))
    assert result.returncode == 0, result.stdout + result.stderr


def test_ids_icon_and_version_agree() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(DESKTOP, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Icon"] == APP_ID
    assert section["Exec"].split()[0] == "kvswitch"
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("icon") == APP_ID
    assert root.find("releases/release").get("version") == __version__  # type: ignore[union-attr]


def test_install_script_installs_icons_and_entries(tmp_path: Path) -> None:
    """packaging/linux/install.sh puts the entry, metainfo and hicolor icons under a data dir."""
    data = tmp_path / "share"
    subprocess.run(["bash", str(LINUX / "install.sh"), str(data)], check=True, capture_output=True,
                   timeout=60)
    assert (data / "applications" / DESKTOP.name).read_text() == DESKTOP.read_text()
    assert (data / "metainfo" / METAINFO.name).is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    for size in (16, 32, 48, 128, 256, 512):
        assert (data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    result = run_tool("desktop-file-validate", str(data / "applications" / DESKTOP.name))
    assert result.returncode == 0, result.stdout
