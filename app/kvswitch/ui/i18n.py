"""Pick the UI language and load its Qt translations.

Order: ``$KVSWITCH_LANG``, then the app setting, then the system locale. English is the source
language and needs no file; Simplified Chinese ships as ``kvswitch_zh_CN.qm`` beside this module.
Qt's own strings (standard buttons) come from Qt's translations when they are installed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

log = logging.getLogger("kvswitch.ui.i18n")

I18N_DIR = Path(__file__).resolve().parent / "i18n"
SUPPORTED = ("en", "zh_CN")

_INSTALLED: list[QTranslator] = []
_CURRENT = ["en"]


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
