"""``kvswitch mcp measure`` refuses clearly what it cannot measure, before running any client (issue 36):
no server to measure, an unknown name, no profile in use, a claude binary that is not there. The
measurement itself runs the real Claude Code: tests/e2e/test_e2e_mcp_cost.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvswitch.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["mcp", "measure", *args])
    done = capsys.readouterr()
    return code, done.out + done.err


def test_what_cannot_be_measured_is_said(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, said = _run(capsys)
    assert code == 2, said
    assert "no MCP server to measure" in said, said
    assert main(["mcp", "add", "one", "--", sys.executable, "-V"]) == 0
    code, said = _run(capsys, "two")
    assert code == 2, said
    assert "no MCP server named 'two'" in said, said
    code, said = _run(capsys, "one")
    assert code == 2, said
    assert "no profile is in use" in said, said
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                 "--model", "tiny", "--target", "claude"]) == 0
    assert main(["use", "local"]) == 0
    code, said = _run(capsys, "one", "--claude-bin", str(fake_home / "no-such-claude"))
    assert code == 3, said
    assert "not an executable file" in said, said
    assert "Traceback" not in said
