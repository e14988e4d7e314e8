"""The real Claude Code binary for tests, and the tiny model's end-of-turn token (to end answers at once)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from support.llama import CACHE, REPO

CLAUDE_VERSION = "2.1.332"


def claude_binary() -> Path:
    """``KVSWITCH_CLAUDE_BIN`` or the cached 2.1.332 install; the test is skipped when there is none."""
    configured = os.environ.get("KVSWITCH_CLAUDE_BIN")
    package = CACHE / "claude-code" / CLAUDE_VERSION / "node_modules" / "@anthropic-ai"
    binary = Path(configured) if configured else package / "claude-code-linux-x64" / "claude"
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.skip(
            f"end-to-end tier skipped: no Claude Code binary at {binary} (install it with "
            "scripts/install_claude_code.sh, which needs npm, or set KVSWITCH_CLAUDE_BIN)"
        )
    return binary


def eos_token_id() -> int:
    """The tiny model's ``<|im_end|>`` id: a logit bias on it makes every answer end at once."""
    spec = importlib.util.spec_from_file_location("make_tiny_model", REPO / "scripts" / "make_tiny_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return 256 + len(module.MERGES) + module.SPECIAL_TOKENS.index("<|im_end|>")
