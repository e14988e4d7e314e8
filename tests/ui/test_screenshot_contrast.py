"""Every committed screenshot: its sidecar exists, every state is there in every language, theme and
scale, and every visible text in it reaches WCAG's 4.5:1 contrast against its background.

The pixels are the app's own (``scripts/screenshots.py`` grabs the real widgets under the app's theme);
the sidecar names each text-bearing widget and its rectangle. Inside a rectangle the background is its
median luminance, and the text colour is robust to anti-aliasing and gradients: of the pixels farther
than half-way (in luminance) from the background to the farthest one, the 95th percentile by contrast
(thin glyphs are mostly blended edge pixels; the core of the strokes is the text's colour).
Disabled widgets and placeholder text are exempt, as WCAG 1.4.3 exempts
inactive components and placeholder hints; they are listed in the sidecar but not checked.
"""

from __future__ import annotations

import importlib.util
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtGui import QImage

REPO = Path(__file__).resolve().parents[2]
#: the committed screenshots; ``KVSWITCH_SCREENSHOTS_DIR`` checks a fresh ``screenshots.py --out DIR`` run
SHOTS = Path(os.environ.get("KVSWITCH_SCREENSHOTS_DIR") or REPO / "docs" / "screenshots")
MINIMUM = 4.5
INK_PERCENTILE = 95
MAX_BYTES = 520_000


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("screenshots_script", REPO / "scripts" / "screenshots.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pngs() -> list[Path]:
    return sorted(SHOTS.glob("*.png"))


@cache
def _pixels(png: Path) -> np.ndarray:
    image = QImage(str(png)).convertToFormat(QImage.Format.Format_RGB32)
    assert not image.isNull(), f"{png.name} is not a readable PNG"
    width, height = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    rows = raw.reshape(height, image.bytesPerLine())[:, : width * 4].reshape(height, width, 4)
    return rows[:, :, 2::-1].astype(np.float64) / 255.0  # BGRA in memory -> RGB


def _luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of sRGB colours (last axis: R, G, B in 0..1)."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def text_contrast(pixels: np.ndarray) -> float | None:
    """The contrast of the text in ``pixels`` against their background (None: no text drawn).

    The background is the median luminance (text covers a minority of its box; a button's gradient
    has no single most common colour). Ink is what lies farther than half-way from the background to
    the farthest pixel: the strokes and their darkest edges, not the blended fringe. Its 95th
    percentile is the text colour, robust to a stray pixel.
    """
    lum = _luminance(pixels.reshape(-1, 3))
    bg_l = float(np.median(lum))
    distance = np.abs(lum - bg_l)
    if distance.max() < 0.01:
        return None
    ink = lum[distance >= distance.max() / 2]
    ratios = (np.maximum(ink, bg_l) + 0.05) / (np.minimum(ink, bg_l) + 0.05)
    return float(np.percentile(ratios, INK_PERCENTILE))


def _sidecar(png: Path) -> dict[str, Any]:
    return dict(json.loads(png.with_suffix(".json").read_text(encoding="utf-8")))


def test_the_contrast_measure_tells_readable_from_faint_text() -> None:
    """Black on white is 21:1, mid grey on white about 4:1; blended edge pixels do not pull it down."""
    white = np.ones((20, 60, 3))
    black_text = white.copy()
    black_text[8:12, 5:55] = 0.0
    black_text[7, 5:55] = 0.5  # anti-aliased edge
    assert text_contrast(black_text) == pytest.approx(21.0, rel=0.01)
    grey_text = white.copy()
    grey_text[8:12, 5:55] = 0.55  # #8c8c8c: 3.4:1 (#767676 is the lightest grey that passes on white)
    assert 3.0 < text_contrast(grey_text) < MINIMUM
    assert text_contrast(white) is None


def test_every_state_exists_in_every_language_theme_and_scale() -> None:
    script = _script()
    names = {png.name for png in _pngs()}
    missing = [script.file_name(state, language, theme, scale)
               for state in script.STATES for language in script.LANGUAGES for theme in script.THEMES
               for scale in script.SCALES
               if script.file_name(state, language, theme, scale) not in names]
    assert not missing, f"missing screenshots (run scripts/screenshots.py --matrix): {', '.join(missing)}"


def test_every_screenshot_has_its_sidecar_and_is_small() -> None:
    assert _pngs(), "no screenshots in docs/screenshots"
    lacking = [png.name for png in _pngs() if not png.with_suffix(".json").is_file()]
    assert not lacking, f"screenshots without a sidecar: {', '.join(lacking)}"
    # a 200% shot is about 150-300 KB; the log panel's dense text at 200% about 470 KB (lossless)
    big = [f"{png.name} ({png.stat().st_size // 1024} KB)" for png in _pngs()
           if png.stat().st_size > MAX_BYTES]
    assert not big, f"screenshots over {MAX_BYTES // 1000} KB: {', '.join(big)}"
    for png in _pngs():
        sidecar = _sidecar(png)
        image = QImage(str(png))
        assert sidecar["size"] == [image.width(), image.height()], f"{png.name}: sidecar is for another image"
        assert sidecar["texts"], f"{png.name}: the sidecar lists no text"


@pytest.mark.parametrize("png", _pngs(), ids=lambda png: png.name)
def test_text_contrast(png: Path) -> None:
    pixels = _pixels(png)
    failures = []
    for entry in _sidecar(png)["texts"]:
        if entry["disabled"] or entry["placeholder"]:
            continue  # WCAG 1.4.3: inactive components and placeholder hints are exempt
        if entry.get("clipped"):
            # cut by a scroll area or the window's edge: what shows may be a sliver of frame, not the text
            # (a button 6 px into view); its whole self is judged in the states where it shows whole
            continue
        x, y, w, h = entry["rect"]
        ratio = text_contrast(pixels[y: y + h, x: x + w])
        if ratio is None:
            failures.append(f"{png.name}: {entry['class']} {entry['name'] or ''} “{entry['text'][:50]}” "
                            f"at {entry['rect']}: no text visible (drawn in the background colour?)")
        elif ratio < MINIMUM:
            failures.append(f"{png.name}: {entry['class']} {entry['name'] or ''} “{entry['text'][:50]}” "
                            f"at {entry['rect']}: {ratio:.2f}:1")
    assert not failures, f"text under {MINIMUM}:1 contrast:\n" + "\n".join(failures)
