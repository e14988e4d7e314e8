"""Find KV Switch's bundled files (icons) wherever the app runs from.

The same code runs from a source checkout (``resources/`` beside ``app/``), from an installed wheel
(the build copies ``resources/`` into the package as ``kvswitch/_resources``) and from a PyInstaller
bundle (``resources/`` under ``sys._MEIPASS``). One function hides the difference, so the UI never
guesses paths and a missing file is reported with every place that was searched.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kvswitch.core.errors import KvSwitchError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: name of the copy inside an installed package (written by the wheel build, see setup.py)
PACKAGED_NAME = "_resources"


class ResourceNotFoundError(KvSwitchError, FileNotFoundError):
    """A bundled file is missing: the installation is incomplete.

    Also a ``FileNotFoundError`` so callers that fall back to a drawn icon can catch the usual type.
    """


def resource_roots() -> list[Path]:
    """The directories searched, most specific first; only existing ones are returned."""
    candidates: list[Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources")
    candidates.append(PACKAGE_DIR / PACKAGED_NAME)
    candidates.append(PACKAGE_DIR.parent.parent / "resources")  # source tree: app/kvswitch -> repo root
    return [root for root in candidates if root.is_dir()]


def resource_path(name: str) -> Path:
    """Absolute path of a bundled file, e.g. ``resource_path("icons/kvswitch.svg")``.

    Raises:
        ResourceNotFoundError: no root holds the file (names are relative, ``/``-separated).
    """
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts:
        raise ResourceNotFoundError(f"resource names are relative paths inside resources/: {name!r}")
    roots = resource_roots()
    for root in roots:
        path = root / relative
        if path.exists():
            return path
    searched = ", ".join(str(root) for root in roots) or "no resources directory exists"
    raise ResourceNotFoundError(
        f"bundled file {name!r} is missing (searched: {searched}); reinstall KV Switch"
    )


def app_icon_path(size: int | None = None) -> Path:
    """The application icon: the SVG, or the PNG rendered at ``size`` pixels."""
    if size is None:
        return resource_path("icons/kvswitch.svg")
    return resource_path(f"icons/png/kvswitch-{size}.png")


def tray_icon_path(state: str | None = None, *, light: bool = False, size: int | None = None) -> Path:
    """A tray icon: monochrome (``state=None``; ``light`` for dark panels) or a cache-state variant.

    ``state`` is one of ``unknown``, ``hit``, ``partial``, ``miss``. ``size`` picks a PNG (16, 22, 32, 48)
    instead of the SVG, for platforms whose tray cannot draw SVG.
    """
    if state is not None and state not in TRAY_STATES:
        raise ValueError(f"unknown tray state {state!r}; expected one of {', '.join(TRAY_STATES)}")
    stem = "kvswitch-tray"
    if state is not None:
        stem += f"-{state}"
    elif light:
        stem += "-light"
    if size is None:
        return resource_path(f"icons/tray/{stem}.svg")
    return resource_path(f"icons/tray/png/{stem}-{size}.png")


TRAY_STATES = ("unknown", "hit", "partial", "miss")
