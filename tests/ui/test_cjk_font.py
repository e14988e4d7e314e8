"""The bundled Noto Sans CJK SC subset: it covers GB2312 and the translations, draws real glyphs, and is
loaded on a system without a Chinese font, in either language (user data may be Chinese).

"Without a Chinese font" is made real, not pretended: a child process runs with a fontconfig file that
lists one Latin-only font of this machine, so Qt's font database has no Simplified Chinese family.
Tofu is recognised by its pixels: text in private-use code points (no font has them) draws the same
boxes as Chinese text drawn without a Chinese font.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

from PySide6.QtGui import QRawFont

from kvswitch.core.resources import resource_path
from kvswitch.ui import i18n
from support.require import component_missing, require_tool

REPO = Path(__file__).resolve().parents[2]
HAN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")

CHILD = r"""
import json, sys
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QApplication, QLabel
from kvswitch.ui import i18n

app = QApplication([])
TEXT = "验证缓存：命中"

def grab(text, font=None):
    label = QLabel(text)
    if font is not None:
        label.setFont(font)
    label.resize(240, 40)
    label.setAutoFillBackground(True)
    return label.grab().toImage()

result = {"system_has_cjk": i18n.system_has_cjk_font()}
tofu = grab("\U000f0001\U000f0002\U000f0003\U000f0004：\U000f0005\U000f0006")
before = grab(TEXT)
i18n.install(app, sys.argv[1])
family = i18n.ensure_cjk_font(app)
after = grab(TEXT)
result.update(family=family, before_is_tofu=before == tofu, after_is_tofu=after == tofu,
              after_is_bundled=family is not None and after == grab(TEXT, QFont(family)),
              again=i18n.ensure_cjk_font(app))
# every character of every shown Chinese text, drawn by the app's font or a fallback Qt finds for it
metrics = QFontMetrics(app.font())
result["undrawable"] = "".join(sorted(c for c in sys.argv[2] if not metrics.inFontUcs4(ord(c))))
print(json.dumps(result))
"""


def _shown_texts() -> list[str]:
    """The texts scripts/make_cjk_font.py cuts the subset to: the translations, the vendors' zh_CN names,
    the language names (one list, so the test and the font cannot disagree on what is shown)."""
    spec = importlib.util.spec_from_file_location("make_cjk_font", REPO / "scripts" / "make_cjk_font.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.shown_texts())


def _shown_characters() -> set[str]:
    return {c for t in _shown_texts() for c in t if ord(c) > 0x7F}


def test_the_shown_texts_include_the_vendor_names_and_the_language_name() -> None:
    texts = _shown_texts()
    assert "Anthropic 官方" in texts  # a vendors.json name: the "官" the subset lacked
    assert "简体中文" in texts
    assert len(texts) > 600


def test_the_subset_covers_every_character_of_the_shown_texts(qapp: Any) -> None:
    """Every non-ASCII character of every translated string, and every hanzi of GB2312, is in the
    font's cmap, except the few symbols Noto Sans CJK SC does not have (the system's Latin font draws
    them, which the font-less child below checks); Latin stays the system's."""
    font = QRawFont(str(resource_path(i18n.CJK_FONT)), 16)
    assert font.isValid()
    assert font.familyName() == "KV Switch Noto Sans SC"
    wanted = sorted(_shown_characters())
    assert len(wanted) > 300
    missing = "".join(c for c in wanted if not font.supportsCharacter(ord(c)))
    assert HAN.search(missing) is None, f"run scripts/make_cjk_font.py: the font lacks {missing}"
    assert all(unicodedata.category(c).startswith("S") for c in missing), missing  # symbols only
    assert font.supportsCharacter(ord("官"))
    assert not font.supportsCharacter(ord("A"))  # the check can fail: Latin stays the system's
    codes = [(high, low) for high in range(0xB0, 0xF8) for low in range(0xA1, 0xFF)]
    hanzi = "".join(bytes(code).decode("gb2312") for code in codes if code not in _GB2312_GAPS)
    assert len(hanzi) == 6763
    lacking = "".join(c for c in hanzi if not font.supportsCharacter(ord(c)))
    assert lacking == ""  # user data: "公司专用账号 (智谱 GLM …)" and any other common Simplified Chinese
    assert resource_path(i18n.CJK_FONT).stat().st_size < 3_500_000  # a subset, not the 19 MB collection
    licence = (resource_path(i18n.CJK_FONT).parent / "OFL.txt").read_text()
    assert "SIL-1.1" in licence
    assert "Open Font License" in licence


def _latin_only_fontconfig(tmp_path: Path) -> Path:
    """A fontconfig file whose one font directory holds a single font of this machine with no Chinese."""
    fc_list = require_tool("fc-list", "apt-get install fontconfig; scripts/dev.sh test installs it")
    listing = subprocess.run([fc_list, "--format", "%{file}\t%{lang}\n"], capture_output=True, text=True,
                             timeout=60, check=True).stdout.splitlines()
    latin = []
    for line in listing:
        file, _, langs = line.partition("\t")
        codes = langs.split("|")
        chinese = any(code.startswith("zh") for code in codes)
        if "en" in codes and not chinese and file.endswith((".ttf", ".otf")):
            latin.append(file)
    if not latin:
        component_missing("this machine has no Latin-only font to build a font-less system from (apt-get "
                          "install fonts-dejavu-core; scripts/dev.sh test installs it)")
    fonts = tmp_path / "fonts"
    fonts.mkdir()
    # a desktop's usual sans (DejaVu Sans) when there is one: its symbols (⚠, ✕) are a Latin system's too,
    # which a math or mono font alone would not show
    usual = [file for file in latin if Path(file).name in ("DejaVuSans.ttf", "LiberationSans-Regular.ttf")]
    shutil.copy(sorted(usual or latin)[0], fonts)
    config = tmp_path / "fonts.conf"
    config.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>'
                      f"<dir>{fonts}</dir><cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>\n")
    return config


def _run_child(script: str, *args: str, **env: str) -> dict[str, Any]:
    """``script`` in a new offscreen Qt process (no language chosen by the environment); its last line
    of output, as JSON."""
    full_env = {k: v for k, v in os.environ.items() if k != "KVSWITCH_LANG"}
    full_env.update(QT_QPA_PLATFORM="offscreen", **env)
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=120, env=full_env)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _child(language: str, **env: str) -> dict[str, Any]:
    return _run_child(CHILD, language, "".join(sorted(_shown_characters())), **env)


#: GB2312's unassigned code points in rows 55 (0xD7FA-0xD7FE)
_GB2312_GAPS = {(0xD7, low) for low in range(0xFA, 0xFF)}


def test_chinese_window_without_a_chinese_font_draws_glyphs_not_boxes(tmp_path: Path) -> None:
    result = _child("zh_CN", FONTCONFIG_FILE=str(_latin_only_fontconfig(tmp_path)))
    assert result["system_has_cjk"] is False
    assert result["before_is_tofu"] is True  # the failure the font fixes, seen on this system
    assert result["family"] == "KV Switch Noto Sans SC"
    assert result["after_is_tofu"] is False
    assert result["after_is_bundled"] is True  # the default font's label now draws the bundled glyphs
    assert result["again"] == result["family"]
    # every character of every shown Chinese text draws on this system: the bundled font's, or the Latin
    # font's for the few symbols Noto Sans SC lacks
    assert result["undrawable"] == ""


def test_english_window_without_a_chinese_font_loads_it_for_user_data(tmp_path: Path) -> None:
    """English text stays the system font's, but a profile named in Chinese must not be boxes."""
    result = _child("en", FONTCONFIG_FILE=str(_latin_only_fontconfig(tmp_path)))
    assert result["family"] == "KV Switch Noto Sans SC"
    assert result["after_is_tofu"] is False


def test_a_system_chinese_font_is_used_as_it_is() -> None:
    """With this machine's own fonts: the bundled one is loaded exactly when none covers Chinese."""
    result = _child("zh_CN")
    assert (result["family"] is None) == result["system_has_cjk"]
    assert result["after_is_tofu"] is False


def test_the_app_loads_the_font_after_its_first_paint(tmp_path: Path) -> None:
    """The real start: ``python -m kvswitch`` in Chinese on a font-less system logs that it took the
    bundled font once the window had painted (``AppShell.ready``), then is stopped."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "KVSWITCH_"))}
    env.update(HOME=str(home), KVSWITCH_LANG="zh_CN", QT_QPA_PLATFORM="offscreen",
               KVSWITCH_NO_ERROR_DIALOGS="1", FONTCONFIG_FILE=str(_latin_only_fontconfig(tmp_path)))
    app = subprocess.Popen([sys.executable, "-m", "kvswitch"], env=env, cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wanted = "using the bundled KV Switch Noto Sans SC"
    seen = ""
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and app.poll() is None:
            seen = "".join(p.read_text(errors="replace") for p in home.rglob("*.log") if p.is_file())
            if wanted in seen:
                break
            time.sleep(0.2)
    finally:
        app.terminate()
        try:
            _out, err = app.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            app.kill()
            _out, err = app.communicate()
    assert wanted in seen, err[-2000:]


FORM_CHILD = r"""
import json
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QFormLayout, QLabel, QLineEdit, QWidget
from kvswitch.ui import i18n

app = QApplication([])
i18n.install(app, "zh_CN")
window = QWidget()
form = QFormLayout(window)
labels = [QLabel(text) for text in ("类型", "名称", "基础 URL", "环境变量", "服务器日志")]
for label in labels:
    form.addRow(label, QLineEdit())
window.resize(520, 300)
window.show()
app.processEvents()  # laid out as the window is before the app is ready: no Chinese font yet
before = [label.width() for label in labels]
family = i18n.ensure_cjk_font(app)
app.processEvents()
needed = [QFontMetrics(label.font()).horizontalAdvance(label.text()) for label in labels]
print(json.dumps({"family": family, "before": before, "after": [label.width() for label in labels],
                  "needed": needed}))
"""


def test_labels_laid_out_before_the_bundled_font_came_are_laid_out_again(tmp_path: Path) -> None:
    """The window is built before the app is ready, and the bundled font is loaded once it is: a label
    measured before (with boxes for glyphs) must be measured again, or the editor's form labels are cut
    ("类型" shown as "类"), as the docs' zh_CN screenshots showed."""
    result = _run_child(FORM_CHILD, FONTCONFIG_FILE=str(_latin_only_fontconfig(tmp_path)))
    assert result["family"] == "KV Switch Noto Sans SC"
    assert any(b < n for b, n in zip(result["before"], result["needed"], strict=True)), result  # the fault
    assert all(a >= n for a, n in zip(result["after"], result["needed"], strict=True)), result
