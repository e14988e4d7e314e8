"""The real Codex and OpenCode binaries for tests (installed by scripts/install_codex.sh and
scripts/install_opencode.sh); a test is skipped with the reason when its binary is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.llama import CACHE

CODEX_VERSION = "0.169.0"
OPENCODE_VERSION = "1.18.33"


def _binary(variable: str, default: Path, name: str, script: str) -> Path:
    configured = os.environ.get(variable)
    binary = Path(configured) if configured else default
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.skip(
            f"end-to-end tier skipped: no {name} binary at {binary} (install it with scripts/{script}, "
            f"which needs npm, or set {variable})"
        )
    return binary


def codex_binary() -> Path:
    """``KVSWITCH_CODEX_BIN`` or the cached 0.169.0 install."""
    vendor = CACHE / "codex" / CODEX_VERSION / "node_modules" / "@openai" / "codex-linux-x64" / "vendor"
    default = vendor / "x86_64-unknown-linux-musl" / "bin" / "codex"
    return _binary("KVSWITCH_CODEX_BIN", default, "Codex", "install_codex.sh")


def opencode_binary() -> Path:
    """``KVSWITCH_OPENCODE_BIN`` or the cached 1.18.33 install."""
    package = CACHE / "opencode" / OPENCODE_VERSION / "node_modules" / "opencode-linux-x64"
    default = package / "bin" / "opencode"
    return _binary("KVSWITCH_OPENCODE_BIN", default, "OpenCode", "install_opencode.sh")
