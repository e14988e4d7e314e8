"""A client that asks to log in or exits non-zero: a clear verdict, bounded in time, no key shown.

Real Claude Code cannot be made to do either on demand against a local server, so these two error
paths use a small shell program standing in for ``claude`` (it answers ``--version`` like the real one).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from kvswitch.cli import main
from support.net import free_port

KEY = "sk-NEVER-SHOWN-4242"


def _client(tmp_path: Path, body: str) -> Path:
    program = tmp_path / "claude"
    program.write_text(
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }\n" + body
    )
    program.chmod(0o755)
    return program


@pytest.fixture
def profile(fake_home: Path) -> str:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens: the client never gets that far
    assert main(["profile", "add", "p", "--kind", "llama.cpp", "--base-url", url, "--api-key", KEY]) == 0
    return "p"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("echo 'Invalid API key · Please run /login' >&2\nexit 1\n", "asks to log in"),
        (f"echo 'boom {KEY}' >&2\nexit 7\n", "exited 7 at conversation 1, turn 1"),
    ],
)
@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell program stands in for claude")
def test_client_failure_is_a_clear_error(
    tmp_path: Path, profile: str, capsys: pytest.CaptureFixture[str], body: str, said: str
) -> None:
    started = time.monotonic()
    code = main(
        [
            "verify",
            profile,
            "--client",
            "claude",
            "--claude-bin",
            str(_client(tmp_path, body)),
            "--timeout",
            "60",
        ]
    )
    captured = capsys.readouterr()
    assert code == 4
    assert said in captured.err
    assert KEY not in captured.err + captured.out
    assert "Traceback" not in captured.err
    assert time.monotonic() - started < 30
