#!/usr/bin/env python3
"""Regenerate ``resources/fonts/``: the Noto Sans CJK SC subset the app loads when a system has no CJK font.

Source: the Debian package ``fonts-noto-cjk`` 1:20220127+repack1-1 (SIL OFL 1.1), the "Noto Sans CJK SC"
face (number 2) of its ``NotoSansCJK-Regular.ttc``; fetched once with ``apt-get download`` into
``~/.cache/kvswitch/deb-fonts``. The subset keeps every character of GB2312 (its 6,763 hanzi and its
symbol rows: any Simplified Chinese a user is likely to type, so a provider named "公司专用账号 (智谱 GLM …)"
draws in either language), every non-ASCII character the zh_CN window shows (the translations
``app/kvswitch/ui/i18n/kvswitch_zh_CN.ts``, the vendors' Chinese names in
``app/kvswitch/core/data/vendors.json``, shown untranslated by the gallery and the tray, and the language
chooser's own names), CJK punctuation (U+3000-303F) and the full-width forms (U+FF00-FFEF). Latin text
keeps the system's own font (the subset carries no ASCII). The npm face used before (``@fontsource/
noto-sans-sc`` 5.3.0, "chinese-simplified") lacks 1,046 of GB2312's hanzi, which is why the source moved.
The subset is renamed (a modified font, as the OFL asks for) so it never shadows a real Noto Sans CJK.

``bash scripts/dev.sh translations`` runs it after compiling the translations (it needs ``apt-get``, i.e.
Debian or Ubuntu, and ``fonttools``, the ``fonts`` extra). Cutting takes about 80 s, so the SOURCE file
records a digest of the characters and the source: the same inputs skip the work and leave the committed
file as it is (``--force`` cuts anyway; it gives the same bytes).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

DEB_PACKAGE = "fonts-noto-cjk"
DEB_VERSION = "1:20220127+repack1-1"
FACE = "usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
FACE_NUMBER = 2  # JP, KR, SC, TC, HK: "Noto Sans CJK SC"
COPYRIGHT = "usr/share/doc/fonts-noto-cjk/copyright"
FAMILY = "KV Switch Noto Sans SC"
#: CJK symbols and punctuation, full-width forms
EXTRA_CODEPOINTS = [*range(0x3000, 0x3040), *range(0xFF00, 0xFFF0)]

ROOT = Path(__file__).resolve().parents[1]
TS_FILE = ROOT / "app" / "kvswitch" / "ui" / "i18n" / "kvswitch_zh_CN.ts"
VENDORS_FILE = ROOT / "app" / "kvswitch" / "core" / "data" / "vendors.json"
SETTINGS_DIALOG = ROOT / "app" / "kvswitch" / "ui" / "shell" / "settings_dialog.py"
OUT_DIR = ROOT / "resources" / "fonts"
OUT_FONT = OUT_DIR / "KVSwitchNotoSansSC-Regular.otf"
SOURCE_FILE = OUT_DIR / "SOURCE"
CACHE = Path.home() / ".cache" / "kvswitch" / "deb-fonts"


def fetch_package() -> Path:
    """The .deb, fetched once with ``apt-get download`` (no root needed, nothing installed)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob(f"{DEB_PACKAGE}_*{DEB_VERSION.split(':')[-1]}_all.deb"))
    if not found:
        subprocess.run(["apt-get", "download", f"{DEB_PACKAGE}={DEB_VERSION}"], cwd=CACHE, check=True,
                       stdout=subprocess.DEVNULL, timeout=1200)
        found = sorted(CACHE.glob(f"{DEB_PACKAGE}_*_all.deb"))
    return found[0]


def gb2312_characters() -> str:
    """Every character GB2312 encodes outside ASCII: rows 1-9 (symbols, kana, Greek, Cyrillic, box
    drawing) and 16-87 (the 6,763 hanzi, levels 1 and 2), decoded by Python's own ``gb2312`` codec."""
    found = []
    for high in (*range(0xA1, 0xAA), *range(0xB0, 0xF8)):
        for low in range(0xA1, 0xFF):
            try:
                found.append(bytes([high, low]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return "".join(found)


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


def subset_codepoints() -> list[int]:
    """The code points the subset keeps (those the face has), in order."""
    wanted = {ord(c) for c in gb2312_characters() + translation_characters()} | set(EXTRA_CODEPOINTS)
    return sorted(c for c in wanted if c > 0x7F)


def inputs_digest(codepoints: list[int]) -> str:
    """What the cut depends on: the source and the characters (a change of either cuts again)."""
    text = f"{DEB_PACKAGE} {DEB_VERSION} {FACE}#{FACE_NUMBER} " + ",".join(map(str, codepoints))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main(argv: list[str]) -> int:
    try:
        from fontTools import subset
        from fontTools.ttLib import TTFont
    except ImportError:
        print("make_cjk_font: fonttools is missing (pip install fonttools)", file=sys.stderr)
        return 1
    codepoints = subset_codepoints()
    digest = inputs_digest(codepoints)
    if ("--force" not in argv and OUT_FONT.is_file() and SOURCE_FILE.is_file()
            and f"inputs {digest}" in SOURCE_FILE.read_text(encoding="utf-8")):
        print(f"{OUT_FONT.relative_to(ROOT)}: up to date (inputs {digest})")
        return 0
    deb = fetch_package()
    with tempfile.TemporaryDirectory() as tmp:
        data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True, capture_output=True,
                              timeout=600).stdout
        archive_path = Path(tmp) / "data.tar"
        archive_path.write_bytes(data)
        with tarfile.open(archive_path) as archive:
            for name in (FACE, COPYRIGHT):
                archive.extract(f"./{name}", tmp, filter="data")
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        # horizontal UI text only: the default layout features (no vertical forms), no hinting (CFF)
        options = subset.Options(hinting=False, notdef_outline=True, prune_codepage_ranges=False,
                                 prune_unicode_ranges=False)
        # no timestamp is recalculated: the same inputs give the same bytes (a rerun changes nothing)
        font = TTFont(Path(tmp) / FACE, fontNumber=FACE_NUMBER, recalcTimestamp=False)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        names = font["name"]
        for name_id, value in ((1, FAMILY), (3, f"{FAMILY} {DEB_VERSION} subset"), (4, f"{FAMILY} Regular"),
                               (6, "KVSwitchNotoSansSC-Regular"), (16, FAMILY), (17, "Regular")):
            names.setName(value, name_id, 3, 1, 0x409)
        names.names = [n for n in names.names if n.platformID == 3 or n.nameID not in (1, 3, 4, 6, 16, 17)]
        font.save(OUT_FONT)
        shutil.copy(Path(tmp) / COPYRIGHT, OUT_DIR / "OFL.txt")
    for old in OUT_DIR.glob("KVSwitchNotoSansSC-Regular.*"):
        if old != OUT_FONT:
            old.unlink()
    glyphs = len(font.getBestCmap())
    SOURCE_FILE.write_text(
        f"{OUT_FONT.name}: a subset of Noto Sans CJK SC (Adobe/Google, SIL Open Font License 1.1:\n"
        f"see OFL.txt, the Debian package's copyright file), from the Debian package {DEB_PACKAGE}\n"
        f"{DEB_VERSION} ({FACE}, face {FACE_NUMBER}), renamed \"{FAMILY}\" and cut by\n"
        f"scripts/make_cjk_font.py (fonttools)\n"
        f"to GB2312, the zh_CN translations, vendor and language names, CJK punctuation and full-width\n"
        f"forms: {glyphs:,} characters. inputs {digest}\n",
        encoding="utf-8")
    print(f"{OUT_FONT.relative_to(ROOT)}: {OUT_FONT.stat().st_size:,} bytes, {glyphs:,} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
