#!/usr/bin/env python3
"""Regenerate ``resources/fonts/``: the Noto Sans SC subset the app loads when a system has no CJK font.

Source: the npm package ``@fontsource/noto-sans-sc`` (SIL OFL 1.1), its one-file "chinese-simplified"
weight-400 face. The subset keeps every non-ASCII character the zh_CN window shows that the face has:
the translations (``app/kvswitch/ui/i18n/kvswitch_zh_CN.ts``), the vendors' Chinese names
(``app/kvswitch/core/data/vendors.json``, shown by the gallery and the tray, not translated through Qt:
"Anthropic 官方" went missing when only the .ts was read) and the language chooser's own names, plus
CJK punctuation (U+3000-303F) and the full-width forms (U+FF00-FFEF): Latin text keeps the system's own
font, so no Latin is carried.
The subset is renamed (a modified font, as the OFL asks for) so it never shadows a real Noto Sans SC.

``bash scripts/dev.sh translations`` runs it after compiling the translations (it needs ``npm`` and
``fonttools``, the ``fonts`` extra); the same inputs give the same bytes, so an unchanged set of
characters leaves the committed file as it is. The tarball is cached under ``~/.cache/kvswitch``.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@fontsource/noto-sans-sc"
VERSION = "5.3.0"
FACE = "package/files/noto-sans-sc-chinese-simplified-400-normal.woff"
FAMILY = "KV Switch Noto Sans SC"
#: CJK symbols and punctuation, full-width forms
EXTRA_CODEPOINTS = [*range(0x3000, 0x3040), *range(0xFF00, 0xFFF0)]

ROOT = Path(__file__).resolve().parents[1]
TS_FILE = ROOT / "app" / "kvswitch" / "ui" / "i18n" / "kvswitch_zh_CN.ts"
VENDORS_FILE = ROOT / "app" / "kvswitch" / "core" / "data" / "vendors.json"
SETTINGS_DIALOG = ROOT / "app" / "kvswitch" / "ui" / "shell" / "settings_dialog.py"
OUT_DIR = ROOT / "resources" / "fonts"
OUT_FONT = OUT_DIR / "KVSwitchNotoSansSC-Regular.ttf"
CACHE = Path.home() / ".cache" / "kvswitch" / "npm-fonts"


def fetch_package() -> Path:
    """The package tarball, fetched once with ``npm pack``."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"fontsource-noto-sans-sc-{VERSION}.tgz"
    if not tarball.is_file():
        subprocess.run(["npm", "pack", f"{PACKAGE}@{VERSION}", "--silent"], cwd=CACHE, check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
    return tarball


def shown_texts() -> list[str]:
    """Every Chinese text the app shows: the .ts translations, the vendors' zh_CN names, the language
    names of the settings dialog (``LANGUAGES``). tests/ui/test_cjk_font.py reads the same list."""
    text = TS_FILE.read_text(encoding="utf-8")
    texts = [html.unescape(t) for t in re.findall(r"<translation>([^<]*)</translation>", text)]
    texts += _zh_names(json.loads(VENDORS_FILE.read_text(encoding="utf-8")))
    languages = re.search(r"^LANGUAGES\b.*$", SETTINGS_DIALOG.read_text(encoding="utf-8"), re.MULTILINE)
    texts += re.findall(r'"([^"]*)"', languages.group(0)) if languages else []
    return texts


def _zh_names(data: object) -> list[str]:
    """The value of every ``zh_CN`` key, at any depth."""
    if isinstance(data, dict):
        found = [str(v) for k, v in data.items() if k == "zh_CN" and isinstance(v, str)]
        return found + [name for v in data.values() for name in _zh_names(v)]
    if isinstance(data, list):
        return [name for v in data for name in _zh_names(v)]
    return []


def translation_characters() -> str:
    """Every non-ASCII character of the shown texts, sorted (the subset's core)."""
    chars = {c for t in shown_texts() for c in t if ord(c) > 0x7F}
    return "".join(sorted(chars))


def main() -> int:
    try:
        from fontTools import subset
        from fontTools.ttLib import TTFont
    except ImportError:
        print("make_cjk_font: fonttools is missing (pip install fonttools)", file=sys.stderr)
        return 1
    tarball = fetch_package()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tarball) as archive:
            for name in (FACE, "package/LICENSE", "package/package.json"):
                archive.extract(name, tmp, filter="data")
        source = Path(tmp) / FACE
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        options = subset.Options(flavor=None, hinting=False, layout_features=["*"], notdef_outline=True,
                                 prune_codepage_ranges=False, prune_unicode_ranges=False)
        # no timestamp is recalculated: the same inputs give the same bytes (a rerun changes nothing)
        font = TTFont(source, recalcTimestamp=False)
        subsetter = subset.Subsetter(options)
        subsetter.populate(text=translation_characters(), unicodes=EXTRA_CODEPOINTS)
        subsetter.subset(font)
        names = font["name"]
        for name_id, value in ((1, FAMILY), (3, f"{FAMILY} {VERSION} subset"), (4, f"{FAMILY} Regular"),
                               (6, "KVSwitchNotoSansSC-Regular"), (16, FAMILY), (17, "Regular")):
            names.setName(value, name_id, 3, 1, 0x409)
        names.names = [n for n in names.names if n.platformID == 3 or n.nameID not in (1, 3, 4, 6, 16, 17)]
        font.flavor = None
        font.save(OUT_FONT)
        shutil.copy(Path(tmp) / "package" / "LICENSE", OUT_DIR / "OFL.txt")
    (OUT_DIR / "SOURCE").write_text(
        f"{OUT_FONT.name}: a subset of Noto Sans SC (Google, SIL Open Font License 1.1: see OFL.txt),\n"
        f"from the npm package {PACKAGE} {VERSION} ({FACE.removeprefix('package/')}),\n"
        f"renamed \"{FAMILY}\" and cut to the characters of the zh_CN translations and vendor names\n"
        "plus CJK punctuation and full-width forms by scripts/make_cjk_font.py (fonttools pyftsubset).\n",
        encoding="utf-8")
    print(f"{OUT_FONT.relative_to(ROOT)}: {OUT_FONT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
