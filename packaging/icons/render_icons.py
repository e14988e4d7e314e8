"""Render the committed PNG, ICO and ICNS icons from the SVG sources in ``resources/icons``.

Run after editing an SVG: ``QT_QPA_PLATFORM=offscreen python packaging/icons/render_icons.py``.
The outputs are committed so neither a wheel build nor a PyInstaller build needs a renderer.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from containers import build_icns, build_ico  # noqa: E402 - sibling module of this script

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
APP_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
TRAY_SIZES = (16, 22, 32, 48)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def render(svg: Path, size: int) -> bytes:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    app_svg = ICONS / "kvswitch.svg"
    rendered = {size: render(app_svg, size) for size in (*APP_SIZES, 1024)}
    png_dir = ICONS / "png"
    png_dir.mkdir(exist_ok=True)
    for size in APP_SIZES:
        (png_dir / f"kvswitch-{size}.png").write_bytes(rendered[size])
    (ICONS / "kvswitch.png").write_bytes(rendered[256])  # the one raster a window icon needs
    (ICONS / "kvswitch.ico").write_bytes(build_ico({size: rendered[size] for size in ICO_SIZES}))
    (ICONS / "kvswitch.icns").write_bytes(build_icns(rendered))
    tray_png = ICONS / "tray" / "png"
    tray_png.mkdir(exist_ok=True)
    for svg in sorted((ICONS / "tray").glob("*.svg")):
        for size in TRAY_SIZES:
            (tray_png / f"{svg.stem}-{size}.png").write_bytes(render(svg, size))
    sys.stdout.write(f"rendered icons into {ICONS}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
