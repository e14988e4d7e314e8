"""Toolbar icons (Lucide, ISC) and vendor logos (LobeHub, MIT), from the SVGs in ``resources/icons``.

Lucide draws in ``currentColor``: each icon is rendered in the palette's text colour, so it follows
the theme (the cache key holds the colour). Logos keep their own colours. Nothing here loads before
the first paint: QtSvg and the files are read when the content is built, and each icon once.
"""

from __future__ import annotations

import functools
import logging
from urllib.parse import urlsplit

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QPainter, QPalette, QPixmap

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.resources import resource_path

log = logging.getLogger("kvswitch.ui.widgets.icons")

#: catalog vendor id (vendors.json) → logo file; ids missing here have no logo in the set
VENDOR_LOGOS = {
    "anthropic": "claude-color", "deepseek": "deepseek-color", "kimi": "kimi",
    "kimi-intl": "kimi", "kimi-coding": "kimi", "zhipu-glm": "zhipu-color", "zai": "zai",
    "bailian": "bailian-color",
    "bailian-intl": "bailian-color", "bailian-coding": "bailian-color", "minimax-cn": "minimax-color",
    "minimax": "minimax-color", "siliconflow-cn": "siliconcloud-color", "siliconflow": "siliconcloud-color",
    "openrouter": "openrouter-color", "modelscope": "modelscope-color", "stepfun": "stepfun-color",
    "stepfun-intl": "stepfun-color", "volcengine-coding": "volcengine-color",
    "volcengine-agent": "volcengine-color", "doubao-seed": "doubao-color",
    "qianfan-coding": "baiducloud-color",
    "qianfan-token-plan": "baiducloud-color", "mimo": "xiaomimimo", "mimo-token-plan-cn": "xiaomimimo",
    "novita": "novita-color", "longcat": "longcat-color", "ppio": "ppio-color", "nvidia": "nvidia-color",
    "qiniu": "qiniu-color", "byteplus-coding": "bytedance-color", "bailing": "antgroup-color",
}
#: catalog vendors the logo collection has no logo for: their glyph is their own monogram
VENDORS_WITHOUT_LOGO = frozenset({"taotoken"})
#: a profile kind's logo when no catalog vendor matches its URL (local servers, gateways)
KIND_LOGOS = {"anthropic": "claude-color", "ollama": "ollama", "lm-studio": "lmstudio", "vllm": "vllm-color",
              "openai-compatible": "openai"}

_CACHE: dict[tuple[str, int], QIcon] = {}


def _svg(relative: str) -> bytes | None:
    try:
        return resource_path(relative).read_bytes()
    except (KvSwitchError, OSError):
        return None


def _render(data: bytes, size: int) -> QPixmap:
    from PySide6.QtSvg import QSvgRenderer  # noqa: PLC0415 - loaded with the content, not before

    ratio = 2.0
    pixmap = QPixmap(int(size * ratio), int(size * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(data))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size * ratio, size * ratio))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def tool_icon(name: str, size: int = 18, color: str | None = None) -> QIcon:
    """A Lucide icon in ``color`` (a colour name; default the palette's button text colour), a null icon
    if the file is missing."""
    ink = color or QGuiApplication.palette().color(QPalette.ColorRole.ButtonText).name()
    key = (f"lucide:{name}:{ink}", size)
    if key not in _CACHE:
        data = _svg(f"icons/lucide/{name}.svg")
        if data is None:
            log.info("icon %s is not installed", name)
            _CACHE[key] = QIcon()
        else:
            _CACHE[key] = QIcon(_render(data.replace(b"currentColor", ink.encode()), size))
    return _CACHE[key]


def vendor_id_for(base_url: str) -> str | None:
    """The catalog vendor serving the URL (by host, then the longest matching path: plans share hosts),
    else None."""
    if not urlsplit(base_url).hostname:
        return None
    from kvswitch.servers.vendor_match import vendor_for_url  # noqa: PLC0415 - the catalog, on first use

    found = vendor_for_url(base_url)
    return found.vendor.id if found is not None else None


@functools.lru_cache(maxsize=512)
def logo_name(base_url: str, kind: str) -> str | None:
    """The logo file for a profile: its catalog vendor's, else its kind's, else None."""
    vendor = vendor_id_for(base_url)
    return VENDOR_LOGOS.get(vendor or "") or KIND_LOGOS.get(kind)


def logo_icon(name: str | None, size: int = 34, ink: str | None = None) -> QIcon | None:
    """A vendor logo (cached), or None when there is none.

    Monochrome logos draw in ``currentColor``: ``ink`` (a colour name) for that, by default the palette's
    text colour, so they show on the background they are drawn on (cards put them on a light tile).
    """
    if not name:
        return None
    ink = ink or QGuiApplication.palette().color(QPalette.ColorRole.Text).name()
    key = (f"vendor:{name}:{ink}", size)
    if key not in _CACHE:
        data = _svg(f"icons/vendors/{name}.svg")
        _CACHE[key] = (QIcon(_render(data.replace(b"currentColor", ink.encode()), size))
                       if data is not None else QIcon())
    icon = _CACHE[key]
    return None if icon.isNull() else icon
