"""Pick the UI language and load its Qt translations.

Order: ``$KVSWITCH_LANG``, then the app setting, then the system locale. English is the source
language and needs no file; Simplified Chinese ships as ``kvswitch_zh_CN.qm`` beside this module.
Qt's own strings (standard buttons) come from Qt's translations when they are installed.

A Chinese window needs a font with Chinese glyphs, and so does an English one showing a provider
named in Chinese (user data: "公司专用账号 (智谱 GLM …)" imported from CC Switch). Most desktops have one;
a bare Linux box or a minimal container has none and would draw them as boxes. :func:`ensure_cjk_font`
then loads the Noto Sans CJK SC subset shipped in ``resources/fonts/`` (GB2312 plus the characters of the
translations, made by ``scripts/make_cjk_font.py``), whatever the language. It runs after the first paint
(the shell's ``ready``), so start-up never waits for the font database, again right after a live switch
of language (the new window is built with it), and only when the system has no Simplified Chinese font.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator
from PySide6.QtGui import QFont, QFontDatabase

from kvswitch.core.resources import ResourceNotFoundError, resource_path

log = logging.getLogger("kvswitch.ui.i18n")

I18N_DIR = Path(__file__).resolve().parent / "i18n"
SUPPORTED = ("en", "zh_CN")

#: the bundled CJK subset, a path inside ``resources/`` (see ``kvswitch.core.resources``)
CJK_FONT = "fonts/KVSwitchNotoSansSC-Regular.otf"

_INSTALLED: list[QTranslator] = []
_CURRENT = ["en"]
_LOADED_FONT: list[str] = []


def fill(text: str, *values: object) -> str:
    """A translated text with its ``%1``, ``%2``… filled in order (the placeholders translations keep;
    a translation may move them)."""
    for number, value in enumerate(values, 1):
        text = text.replace(f"%{number}", str(value))
    return text


def current() -> str:
    """The language installed last (``en`` when none)."""
    return _CURRENT[0]


def normalize(lang: str | None) -> str | None:
    """``zh``, ``zh-CN``, ``zh_CN.UTF-8``, ``zh_Hans`` → ``zh_CN``; ``en_GB`` → ``en``; others → None."""
    if not lang:
        return None
    text = lang.split(".")[0].replace("-", "_").strip()
    lower = text.lower()
    if lower.startswith("zh"):
        return "zh_CN"  # the one Chinese translation we ship; zh_TW readers still read it better than English
    if lower.startswith("en") or lower in ("c", "posix"):
        return "en"
    return None


def choose_language(setting: str | None = None) -> str:
    for candidate in (os.environ.get("KVSWITCH_LANG"), setting):
        chosen = normalize(candidate)
        if chosen:
            return chosen
    for name in QLocale.system().uiLanguages():
        chosen = normalize(name)
        if chosen:
            return chosen
    return "en"


def install(app: QCoreApplication, language: str) -> str:
    """Install translators for ``language``; returns the language actually in use."""
    for translator in _INSTALLED:
        app.removeTranslator(translator)
    _INSTALLED.clear()
    _CURRENT[0] = "en"
    if language == "en":
        return "en"
    ours = QTranslator(app)
    if not ours.load(f"kvswitch_{language}", str(I18N_DIR)):
        log.warning("no translation for %s in %s; using English", language, I18N_DIR)
        return "en"
    app.installTranslator(ours)
    _INSTALLED.append(ours)
    _CURRENT[0] = language
    qt = QTranslator(app)
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if qt.load(QLocale(language), "qtbase", "_", qt_dir):
        app.installTranslator(qt)
        _INSTALLED.append(qt)
    return language


def system_has_cjk_font() -> bool:
    """True when some installed font covers Simplified Chinese (what Qt's fallback would use)."""
    return bool(QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese))


def ensure_cjk_font(app: QCoreApplication | None = None) -> str | None:
    """On a system without a CJK font, load the bundled subset, in any language (user data may be
    Chinese); returns its family when it was loaded (now or before), else None. Idempotent; a missing
    file is logged, never raised.

    The added font joins Qt's glyph fallback, and it is also registered as a substitute for the
    default family, so every label (including ones already shown) finds its glyphs there.
    """
    if _LOADED_FONT:
        return _LOADED_FONT[0]
    if system_has_cjk_font():
        return None
    try:
        path = resource_path(CJK_FONT)
    except ResourceNotFoundError as exc:
        log.warning("no CJK font on this system and %s", exc)
        return None
    font_id = QFontDatabase.addApplicationFont(str(path))
    families = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
    if not families:
        log.warning("could not load the bundled CJK font %s", path)
        return None
    family = families[0]
    _LOADED_FONT.append(family)
    app = app or QCoreApplication.instance()
    default = QFont().family()
    QFont.insertSubstitution(default, family)
    log.info("no Chinese font on this system: using the bundled %s", family)
    _repaint(app)
    return family


def _repaint(app: QCoreApplication | None) -> None:
    """Widgets shown before the font came are measured again and redrawn with it. A label keeps the
    size it computed with boxes for glyphs (much narrower: "类型" 8 px instead of 24) until its font
    changes, so each widget is told its font changed: its size hint is recomputed and its layout runs
    again, and no form label stays cut."""
    from PySide6.QtCore import QEvent  # noqa: PLC0415 - only on a system without a Chinese font

    all_widgets = getattr(app, "allWidgets", None)
    if all_widgets is None:
        return
    for widget in all_widgets():
        QCoreApplication.sendEvent(widget, QEvent(QEvent.Type.FontChange))
        widget.updateGeometry()
        widget.update()
