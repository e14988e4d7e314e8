"""The real Claude Code binary for tests, and the tiny model's end-of-turn token (to end answers at once)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from support.llama import CACHE, REPO
from support.require import require_binary

CLAUDE_VERSION = "2.1.332"


def claude_binary() -> Path:
    """``KVSWITCH_CLAUDE_BIN`` or the cached 2.1.332 install (skipped locally, failed under CI, if none)."""
    package = CACHE / "claude-code" / CLAUDE_VERSION / "node_modules" / "@anthropic-ai"
    return require_binary("Claude Code", "KVSWITCH_CLAUDE_BIN", package / "claude-code-linux-x64" / "claude",
                          "install it with scripts/install_claude_code.sh, which needs npm")


def eos_token_id() -> int:
    """The tiny model's ``<|im_end|>`` id: a logit bias on it makes every answer end at once."""
    spec = importlib.util.spec_from_file_location("make_tiny_model", REPO / "scripts" / "make_tiny_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return 256 + len(module.MERGES) + module.SPECIAL_TOKENS.index("<|im_end|>")
