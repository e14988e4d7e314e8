"""Committed icons: every size present and well-formed, ICO/ICNS containers readable, resources resolvable."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

from kvswitch.core import resources
from kvswitch.core.resources import (
    TRAY_STATES,
    ResourceNotFoundError,
    app_icon_path,
    resource_path,
    tray_icon_path,
)
from support.require import require_module

REPO = Path(__file__).resolve().parents[2]
ICONS = REPO / "resources" / "icons"


def load_containers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kvswitch_icon_containers",
                                                  REPO / "packaging" / "icons" / "containers.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


containers = load_containers()


@pytest.mark.parametrize("size", [16, 24, 32, 48, 64, 128, 256, 512])
def test_app_png_sizes(size: int) -> None:
    data = app_icon_path(size).read_bytes()
    assert containers.png_size(data) == (size, size)


@pytest.mark.parametrize("state", [None, *TRAY_STATES])
@pytest.mark.parametrize("size", [16, 22, 32, 48])
def test_tray_png_sizes(state: str | None, size: int) -> None:
    assert containers.png_size(tray_icon_path(state, size=size).read_bytes()) == (size, size)


def test_svgs_are_well_formed() -> None:
    svgs = [app_icon_path(), tray_icon_path(), tray_icon_path(light=True)] + [
        tray_icon_path(state) for state in TRAY_STATES]
    for svg in svgs:
        root = ET.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", svg


def test_pngs_have_a_drawn_glyph() -> None:
    """The app icon is opaque in the middle and transparent in the corners (a rounded tile)."""
    require_module("PySide6", "a dependency of KV Switch: pip install -e .")
    from PySide6 import QtGui as gui  # noqa: PLC0415 - only this test draws
    image = gui.QImage(str(app_icon_path(256)))
    assert not image.isNull()
    assert image.pixelColor(128, 128).alpha() == 255
    assert image.pixelColor(1, 1).alpha() == 0
    tray = gui.QImage(str(tray_icon_path(size=32)))
    opaque = sum(tray.pixelColor(x, y).alpha() > 128 for x in range(32) for y in range(32))
    assert 100 < opaque < 32 * 32 - 100  # a glyph, neither empty nor a filled square


def test_ico_holds_every_size_up_to_256() -> None:
    entries = containers.read_ico((ICONS / "kvswitch.ico").read_bytes())
    assert sorted(entries) == [16, 24, 32, 48, 64, 128, 256]
    for size, png in entries.items():
        assert containers.png_size(png) == (size, size)


def test_icns_holds_retina_types() -> None:
    entries = containers.read_icns((ICONS / "kvswitch.icns").read_bytes())
    assert set(entries) == set(containers.ICNS_TYPES)
    for kind, png in entries.items():
        size = containers.ICNS_TYPES[kind]
        assert containers.png_size(png) == (size, size)


def test_container_writers_reject_wrong_sizes() -> None:
    png16 = app_icon_path(16).read_bytes()
    with pytest.raises(ValueError, match="not 32x32"):
        containers.build_ico({32: png16})
    with pytest.raises(ValueError, match="not a PNG"):
        containers.build_icns({16: b"GIF89a"})


def test_resource_path_in_source_tree() -> None:
    assert resource_path("icons/kvswitch.svg") == ICONS / "kvswitch.svg"
    assert resource_path("icons/kvswitch.png").is_file()  # the raster window icon the UI loads


def test_bundle_directory_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = tmp_path / "resources" / "icons"
    bundled.mkdir(parents=True)
    (bundled / "kvswitch.svg").write_text("<svg/>")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert resource_path("icons/kvswitch.svg") == bundled / "kvswitch.svg"
    assert resource_path("icons/png/kvswitch-16.png") == ICONS / "png" / "kvswitch-16.png"  # falls through


def test_missing_and_escaping_names_are_clear_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(ResourceNotFoundError, match="reinstall KV Switch"):
        resource_path("icons/nope.svg")
    with pytest.raises(FileNotFoundError):  # callers that fall back to a drawn icon catch this
        resource_path("icons/nope.svg")
    with pytest.raises(ResourceNotFoundError, match="relative paths"):
        resource_path("../pyproject.toml")
    monkeypatch.setattr(resources, "PACKAGE_DIR", tmp_path / "site-packages" / "kvswitch")
    with pytest.raises(ResourceNotFoundError, match="no resources directory exists"):
        resource_path("icons/kvswitch.svg")
    with pytest.raises(ValueError, match="unknown tray state"):
        tray_icon_path("great")
