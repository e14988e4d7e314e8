"""The bundled icon subset: every icon the app names is there with its licence, profiles find their
vendor's logo through the catalog, and Lucide icons take the palette's colour."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QGuiApplication, QPalette

from kvswitch.core.catalog import vendors
from kvswitch.ui.widgets import appearance, icons

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
TOOLBAR = ("plus", "file-diff", "undo-2", "shield-check", "download")


def test_every_named_icon_is_bundled_with_its_licence() -> None:
    for name in {*icons.VENDOR_LOGOS.values(), *icons.KIND_LOGOS.values()}:
        assert (ICONS / "vendors" / f"{name}.svg").is_file(), name
    for name in TOOLBAR:
        assert (ICONS / "lucide" / f"{name}.svg").is_file(), name
    assert "ISC License" in (ICONS / "lucide" / "LICENSE").read_text()
    assert "MIT License" in (ICONS / "vendors" / "LICENSE").read_text()
    assert set(icons.VENDOR_LOGOS) <= {v.id for v in vendors()}  # no logo for a vendor that does not exist


def test_a_profile_gets_its_catalog_vendors_logo_or_its_kinds(qapp: object) -> None:
    deepseek = next(v for v in vendors() if v.id == "deepseek")
    assert icons.logo_name(deepseek.base_url, "anthropic") == "deepseek-color"
    assert icons.logo_name("http://127.0.0.1:11434", "ollama") == "ollama"
    assert icons.logo_name("http://127.0.0.1:8080", "llama.cpp") is None  # drawn as the kind's badge
    assert icons.logo_icon("deepseek-color") is not None


def test_toolbar_icons_follow_the_theme(qapp: object) -> None:
    def ink(scheme: str) -> QColor:
        QGuiApplication.setPalette(appearance.build_palette(scheme))
        image = icons.tool_icon("plus").pixmap(18, 18).toImage()
        opaque = [image.pixelColor(x, y) for y in range(image.height()) for x in range(image.width())
                  if image.pixelColor(x, y).alpha() > 200]
        assert opaque
        return opaque[len(opaque) // 2]

    assert appearance.luminance(ink("dark")) > 0.6
    assert appearance.luminance(ink("light")) < 0.1
    assert QGuiApplication.palette().color(QPalette.ColorRole.ButtonText).name() == appearance.LIGHT[
        QPalette.ColorRole.ButtonText]


def test_the_toolbar_icons_are_redrawn_for_a_new_theme(qtbot: object, window: object) -> None:
    def ink() -> float:
        image = window.verify_action.icon().pixmap(18, 18).toImage()  # type: ignore[attr-defined]
        opaque = [image.pixelColor(x, y) for y in range(image.height()) for x in range(image.width())
                  if image.pixelColor(x, y).alpha() > 200]
        return appearance.luminance(opaque[len(opaque) // 2])

    appearance.apply_theme("light")
    qtbot.waitUntil(lambda: ink() < 0.1)  # type: ignore[attr-defined]
    appearance.apply_theme("dark")
    qtbot.waitUntil(lambda: ink() > 0.6)  # type: ignore[attr-defined]  (the change event is posted)


def test_the_tray_icon_is_the_app_mark_with_a_state_dot(qapp: object) -> None:
    """The tray shows KV Switch's own tile (its blue, as the app icon) and a dot in the state's colour in
    the corner; unknown has no dot."""
    from PySide6.QtGui import QColor

    from kvswitch.ui.widgets import theme

    size = 48
    images = {state: theme.state_icon(state).pixmap(size, size).toImage()
              for state in ("unknown", "hit", "miss")}
    app = theme.app_icon().pixmap(size, size).toImage()
    corner = (size - 8, size - 8)
    middle = (size // 2, 4)  # the tile above its blocks
    assert images["unknown"].pixelColor(*middle) == app.pixelColor(*middle)  # the app's own mark
    blue = app.pixelColor(*middle)
    assert blue.blue() > blue.red()
    hit, miss = images["hit"].pixelColor(*corner), images["miss"].pixelColor(*corner)
    assert hit.green() > hit.red()  # a green dot
    assert miss.red() > miss.green()  # a red dot
    assert images["unknown"].pixelColor(*corner) == app.pixelColor(*corner)
    assert QColor(hit) != QColor(miss)
