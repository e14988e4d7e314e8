"""``kvswitch mcp measure`` refuses clearly what it cannot measure, before running any client (issue 36):
no server to measure, an unknown name, no profile in use, a client binary that is not there, an unknown
client, an SSE server for Codex. The measurement itself runs the real clients:
tests/e2e/test_e2e_mcp_cost.py (Claude Code), tests/e2e/test_e2e_mcp_cost_clients.py (Codex, OpenCode)."""

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


def test_other_clients_refuse_clearly(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "add", "one", "--client", "claude", "--", sys.executable, "-V"]) == 0
    code, said = _run(capsys, "--client", "codex")
    assert code == 2, said
    assert "no MCP server to measure: name one, or enable one for codex" in said, said
    with pytest.raises(SystemExit) as exited:  # argparse's own refusal of an unknown choice
        main(["mcp", "measure", "one", "--client", "cursor"])
    assert exited.value.code == 2
    assert "invalid choice: 'cursor'" in capsys.readouterr().err
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                 "--model", "tiny", "--target", "bash"]) == 0
    assert main(["use", "local"]) == 0
    for client in ("codex", "opencode"):
        code, said = _run(capsys, "one", "--client", client, f"--{client}-bin", str(fake_home / "none"))
        assert code == 3, said
        assert f"--{client}-bin {fake_home / 'none'}: not an executable file" in said, said
    # Codex speaks stdio and streamable HTTP only: an SSE server is refused before anything runs (the
    # binary given is never started)
    assert main(["mcp", "add", "events", "--url", "http://127.0.0.1:9/sse", "--sse"]) == 0
    code, said = _run(capsys, "events", "--client", "codex", "--codex-bin", sys.executable)
    assert code == 2, said
    assert "speaks SSE, which Codex does not" in said, said
    assert "Traceback" not in said
