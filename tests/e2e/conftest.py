"""End-to-end tier: the real Claude Code binary against a real llama-server (skips without either)."""

from __future__ import annotations

import sys
from pathlib import Path

# the real-server helpers live beside the real-server tier; share them rather than copy them
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realserver"))
