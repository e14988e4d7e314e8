"""One rule for a real component a test needs and cannot find: skip locally, fail under CI.

A developer without, say, Codex installed still runs the rest of the suite: the test is skipped and
pytest's ``-ra`` summary prints the reason (what is missing, where it was looked for, how to get it).
Under ``CI=true`` the same absence fails the test with that reason: CI installs every real component
(``scripts/dev.sh test``), so a missing one is a broken install, never a pass with a tier left out.

Every test finds a component through the variable ``scripts/dev.sh`` exports for it (``VARIABLES``),
else the place that script's installer caches it under ``KVSWITCH_CACHE`` (never the account's home
alone: tests run with a temporary HOME).

What may still skip under CI is only what cannot apply on this machine at all (another OS, a root-only
check run as a user): such a skip goes through ``not_applicable`` and its reason starts with
``NOT_APPLICABLE``; tests/conftest.py fails any other skip under CI.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

#: the variables scripts/dev.sh exports, by component (the tests read the same ones)
VARIABLES = {
    "llama-server": "KVSWITCH_LLAMA_SERVER",
    "Claude Code": "KVSWITCH_CLAUDE_BIN",
    "Codex": "KVSWITCH_CODEX_BIN",
    "Codex (newest)": "KVSWITCH_CODEX_NEW_BIN",
    "OpenCode": "KVSWITCH_OPENCODE_BIN",
    "ccusage": "KVSWITCH_CCUSAGE",
    "vLLM": "KVSWITCH_VLLM_PYTHON",
}
#: the reason prefix of a skip that is allowed under CI (see ``not_applicable``)
NOT_APPLICABLE = "not applicable here: "
#: the reason marker of a documented parse-only line (tests/docs/test_docs_commands.py)
PARSE_ONLY = "only parsed: "


def under_ci() -> bool:
    """``CI`` set to a true value, as CI services set it (``true``, ``1``, ``yes``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


def component_missing(reason: str) -> NoReturn:
    """Skip with ``reason`` on a developer's machine; fail with it under ``CI=true``."""
    if under_ci():
        pytest.fail(f"CI=true and a real component is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def not_applicable(reason: str) -> NoReturn:
    """Skip a test that cannot apply on this machine (not a missing component): allowed under CI."""
    pytest.skip(NOT_APPLICABLE + reason)


def require_binary(name: str, variable: str, default: Path | None = None, how: str = "") -> Path:
    """The executable ``$variable`` names (else ``default``), or a skip/fail naming both and ``how``."""
    configured = os.environ.get(variable)
    binary = Path(configured) if configured else default
    if binary is None or not binary.is_file() or not os.access(binary, os.X_OK):
        where = f"no {name} binary at {binary}" if binary else f"no {name} ({variable} is not set)"
        hint = f" ({how}, or set {variable})" if how else f" (set {variable})"
        component_missing(f"{where}{hint}")
    return binary


def require_tool(command: str, how: str) -> str:
    """``command`` found on PATH (a shell, a validator scripts/dev.sh installs), or a skip/fail."""
    found = shutil.which(command)
    if found is None:
        component_missing(f"{command} is not on PATH ({how})")
    return found


def require_module(module: str, how: str) -> None:
    """A Python package the tests need (in the ``[test]`` extra), or a skip/fail."""
    if importlib.util.find_spec(module) is None:
        component_missing(f"the Python package {module!r} is missing ({how})")
