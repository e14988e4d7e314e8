"""The lazy boundary of start-up: the first window paints from Qt and a few light modules only.

The moment is the benchmark's own (``benchmarks/ui_startup.py``, the window's first Paint event), in a
fresh interpreter with a temporary HOME holding a few real profiles. What must not be loaded by then is
what made the first window 2.4x slower than a bare one: pydantic (the engine models), the server
registry, httpx, and the engine packages.

By "ready" (the cards list the user's profiles, the tray is up) the store has read the profiles, but
through the plain start-up reader (``core.quickread``): pydantic and the engines still wait.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: loaded after the first paint, never before it
HEAVY = ("pydantic", "pydantic_core", "httpx", "kvswitch.servers", "kvswitch.core.models",
         "kvswitch.core.store", "kvswitch.core.settings", "kvswitch.targets", "kvswitch.verify",
         "kvswitch.logs", "kvswitch.platform", "kvswitch.commands", "kvswitch.gateway")


#: still not loaded when the cards list the profiles: the store reads them without the engine models
HEAVY_AT_READY = tuple(h for h in HEAVY if h not in ("kvswitch.core.store",)) + ("kvswitch.core.ledger",)


def _benchmark() -> object:
    spec = importlib.util.spec_from_file_location("ui_startup", ROOT / "benchmarks" / "ui_startup.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ui_startup", module)
    spec.loader.exec_module(module)
    return module


def _heavy(modules: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


@pytest.mark.parametrize("program", ["app", "command"])
def test_first_paint_loads_no_engine(program: str) -> None:
    modules = _benchmark().modules_at_first_paint(program)  # type: ignore[attr-defined]
    assert "kvswitch.ui.shell.main_window" in modules  # the window did paint, through the app's own code
    assert _heavy(modules) == []


def test_ready_lists_the_profiles_without_the_engine_models() -> None:
    modules = _benchmark().modules_at_ready()  # type: ignore[attr-defined]
    assert "kvswitch.core.store" in modules  # the profiles were read (the cards list them)
    assert "kvswitch.ui.profiles.profile_card" in modules
    assert _heavy(modules, HEAVY_AT_READY) == []


def test_the_check_sees_a_heavy_module() -> None:
    """The filter itself: a list with the engines in it is caught (so an empty result means something)."""
    assert _heavy(["PySide6.QtCore", "pydantic.main", "kvswitch.servers", "kvswitch.ui.shell.shell"]) == [
        "kvswitch.servers", "pydantic.main"]
