"""The real Codex and OpenCode binaries for tests (installed by scripts/install_codex.sh and
scripts/install_opencode.sh); a missing binary skips the test with the reason on a developer's machine
and fails it under ``CI=true`` (``support.require``).

Codex runs in two versions: the pinned one the docs were measured on (``KVSWITCH_CODEX_BIN``) and the
newest (``KVSWITCH_CODEX_NEW_BIN``); ``CODEX_VERSIONS`` parametrizes the Codex end-to-end tests over both.
"""

from __future__ import annotations

from pathlib import Path

from support.llama import CACHE
from support.require import require_binary

CODEX_VERSION = "0.169.0"
CODEX_NEW_VERSION = "0.171.0"
#: every Codex version the real-client tiers run on, pinned first
CODEX_VERSIONS = (CODEX_VERSION, CODEX_NEW_VERSION)
OPENCODE_VERSION = "1.18.33"
_CODEX_VARIABLES = {CODEX_VERSION: "KVSWITCH_CODEX_BIN", CODEX_NEW_VERSION: "KVSWITCH_CODEX_NEW_BIN"}


def codex_binary(version: str = CODEX_VERSION) -> Path:
    """``KVSWITCH_CODEX_BIN`` (0.169.0) / ``KVSWITCH_CODEX_NEW_BIN`` (0.171.0), or that cached install."""
    vendor = CACHE / "codex" / version / "node_modules" / "@openai" / "codex-linux-x64" / "vendor"
    default = vendor / "x86_64-unknown-linux-musl" / "bin" / "codex"
    how = "install it with scripts/install_codex.sh, which needs npm"
    if version != CODEX_VERSION:
        how = f"install it with CODEX_VERSION={version} scripts/install_codex.sh, which needs npm"
    return require_binary(f"Codex {version}", _CODEX_VARIABLES[version], default, how)


def opencode_binary() -> Path:
    """``KVSWITCH_OPENCODE_BIN`` or the cached 1.18.33 install."""
    package = CACHE / "opencode" / OPENCODE_VERSION / "node_modules" / "opencode-linux-x64"
    return require_binary("OpenCode", "KVSWITCH_OPENCODE_BIN", package / "bin" / "opencode",
                          "install it with scripts/install_opencode.sh, which needs npm")
