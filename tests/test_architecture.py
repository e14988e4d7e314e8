"""The layering rule: Qt lives in ``kvswitch.ui`` only, so the engines stay testable and headless."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "app" / "kvswitch"
QT_PACKAGES = {"PySide6", "shiboken6", "PyQt6", "PyQt5", "PySide2"}


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_qt_outside_ui() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "ui" in path.relative_to(PACKAGE).parts[:1]:
            continue
        qt = {name for name in _imported_modules(path) if name.split(".")[0] in QT_PACKAGES}
        if qt:
            offenders.append(f"{path.relative_to(PACKAGE)}: {sorted(qt)}")
    assert offenders == []


def test_cli_help_does_not_load_qt() -> None:
    """The headless engine must work where Qt cannot even be imported (servers, CI without X)."""
    code = (
        "import sys; from kvswitch.cli import build_parser; build_parser().format_help();"
        "print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
