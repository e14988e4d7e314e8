"""Work-arounds for binding bugs and costs, each checked at run time so a fixed PySide6 makes them no-ops.

PySide6 6.12 on CPython 3.11 drops one reference to ``None`` every time a void method is called from
Python (``QObject.setObjectName``, ``QPainter.drawRect``, ``QSyntaxHighlighter.setFormat``...). ``None``
is not immortal before 3.12, so after some thousands of calls the interpreter aborts with
"deallocating None" — a log panel highlighting a busy server gets there within seconds. ``None`` is
never freed while the interpreter lives, so the fix is to give it a reference surplus far larger than
any session can spend. The probe measures the loss first; on a correct binding nothing is touched.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

log = logging.getLogger("kvswitch.ui.qtcompat")

_PROBE_CALLS = 256
#: 2**40 references: a trillion void calls, far beyond any session
NONE_SURPLUS = 1 << 40

_state: dict[str, int] = {}


def none_refs_lost_per_call() -> float:
    """How many references to ``None`` one void PySide6 call loses (0 on a correct binding)."""
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(_PROBE_CALLS):
        probe.setObjectName("probe")
    return max(0.0, (before - sys.getrefcount(None)) / _PROBE_CALLS)


class _EmitProbe(QObject):
    probed = Signal(int)


def true_refs_lost_per_emit() -> float:
    """How many references to ``True`` one ``Signal.emit`` loses (0 on a correct binding).

    The same binding bug as ``None``'s: ``emit`` hands back ``True`` without owning a reference, so a
    window emitting signals (the log panel does every tick) counts ``True`` down to an abort.
    """
    probe = _EmitProbe()
    before = sys.getrefcount(True)
    for _ in range(_PROBE_CALLS):
        probe.probed.emit(1)
    return max(0.0, (before - sys.getrefcount(True)) / _PROBE_CALLS)


def _protect_bools() -> None:
    if true_refs_lost_per_emit() < 0.5:
        return
    import ctypes  # noqa: PLC0415  (only on a leaking binding: it costs a few ms of start-up)

    for value in (True, False):
        refcount = ctypes.c_ssize_t.from_address(id(value))
        refcount.value += NONE_SURPLUS
    _state["bools_protected"] = 1
    log.info("PySide6 loses a reference to True per signal emit; gave True and False a surplus of %d",
             NONE_SURPLUS)


def protect_none_refcount() -> bool:
    """Give ``None`` a reference surplus when the binding leaks its references; True if it did.

    ``True`` and ``False`` get the same treatment when ``Signal.emit`` is seen losing them.
    """
    if sys.version_info >= (3, 12) or _state.get("done"):
        return bool(_state.get("protected"))
    _state["done"] = 1
    _protect_bools()
    lost = none_refs_lost_per_call()
    if lost < 0.5:
        return False
    import ctypes  # noqa: PLC0415

    refcount = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt is the first field of every object
    refcount.value += NONE_SURPLUS
    _state["protected"] = 1
    log.info("PySide6 loses a reference to None per void call; gave None a surplus of %d", NONE_SURPLUS)
    return True


def _names_pyside(module: object) -> bool:
    """Whether a module's namespace holds anything from PySide6 (what "uses PySide" means to it)."""
    for value in list(getattr(module, "__dict__", {}).values()):
        if isinstance(value, types.ModuleType):
            origin = value.__name__
        elif isinstance(value, type):
            origin = value.__module__
        else:
            origin = getattr(type(value), "__module__", "")
        if isinstance(origin, str) and origin.startswith(("PySide6", "shiboken6")):
            return True
    return False


def skip_feature_source_scan() -> bool:
    """Stop PySide6 reading the source of every module imported after it; True if it was replaced.

    To decide whether a module may use ``from __feature__ import ...``, shibokensupport's import hook
    reads each newly imported module's whole source file and searches it for "PySide6" — for pydantic,
    httpx and the engines that is a few hundred files, 0.2-0.3 s of a start-up that is 0.7 s without
    it. Looking at what the module's namespace holds gives the same answer for every module that
    imports from PySide6 at its top, and KV Switch enables no feature, so the answer changes nothing
    else. When the hook is not there (another PySide6 version), nothing is touched.
    """
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(original) or _state.get("feature_scan"):
        return False
    feature._mod_uses_pyside = _names_pyside  # type: ignore[attr-defined]
    _state["feature_scan"] = 1
    return True


def connect_for(owner: QObject, signal: Any, slot: Callable[..., Any]) -> None:
    """Connect a longer-lived object's ``signal`` to ``slot`` for as long as ``owner`` exists.

    The window is rebuilt on a language change while the controller and the profile store live on.
    PySide6 6.12 keeps a Python callable connected after its receiver's C++ object is deleted — a lambda
    always, and even a bound slot of a window whose metaobject gained dynamic slots — so the next emit
    ran code of the deleted window ("Internal C++ object already deleted", or "Signal source has been
    deleted" from the old list model). The connection is dropped when ``owner`` is destroyed.
    """
    connection = signal.connect(slot)

    def drop(*_args: object) -> None:
        # by the connection's handle: naming a bound slot of a deleted object would touch that object
        QObject.disconnect(connection)

    owner.destroyed.connect(drop)
