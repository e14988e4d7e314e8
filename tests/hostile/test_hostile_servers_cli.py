"""Every command that talks to a server, as a real ``kvswitch`` subprocess, against servers that
misbehave on purpose (``tests/support/hostile_servers.py``): double gzip, a gzip bomb, codings KV
Switch does not decode, headers or a body one byte a second, endless bodies and streams, escape
codes and bidi overrides, 4 MB of headers, bytes that are not UTF-8.

Each case asserts what a user would suffer: an exit status that is not 70 (internal error) and not a
kill at the timeout, a message naming what went wrong, wall time within the command's own timeout
plus a generous margin, peak RSS (the kernel's ``ru_maxrss``) under 300 MB, and no escape sequence
or bidi override on the terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kvswitch.cli import main
from support.hostile_servers import RAW_CONTROLS, HostileServer
from support.measured import run_kvswitch

RSS_CAP_MB = 300
#: what a loaded 2-core CI machine may need past a command's timeout to start, notice and unwind
MARGIN = 12.0
TIMEOUT = 3

REQUEST = '{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'


def _command(what: str, server: HostileServer, home: Path) -> list[str]:
    request = home / "req.json"
    request.write_text(REQUEST)
    return {
        "test": ["test", "h", "--timeout", str(TIMEOUT)],
        "test-json": ["test", "h", "--json", "--timeout", str(TIMEOUT)],
        "models": ["models", "h", "--timeout", str(TIMEOUT)],
        "models-json": ["models", "h", "--json", "--timeout", str(TIMEOUT)],
        "verify": ["verify", "h", "--timeout", str(TIMEOUT), "--no-claude-replay"],
        "detect": ["detect", "--port", str(server.port), "--no-processes", "--timeout", "1"],
        "diagnose": ["diagnose", str(request), str(request), "--server", server.url,
                     "--server-timeout", str(TIMEOUT)],
    }[what]


#: (server mode, command, what the output must say); "" when the command may say it its own way
CASES = [
    ("double_gzip", "test", "more than 8 MB once decompressed"),
    ("double_gzip", "models", "more than 8 MB once decompressed"),
    ("double_gzip", "verify", "more than 8 MB once decompressed"),
    ("double_gzip", "detect", "none running"),
    ("double_gzip", "diagnose", "once decompressed"),
    ("gzip_bomb", "models", "more than 8 MB once decompressed"),
    ("triple_gzip", "models", "at most 2 layers are decoded"),
    ("unknown_coding", "test", "Content-Encoding 'compress'"),
    ("corrupt_gzip", "models", "corrupt"),
    ("slow_headers", "test", "no response headers within 3 s"),
    ("slow_headers", "models", "no response headers within 3 s"),
    ("slow_headers", "verify", "3 s"),
    ("slow_headers", "detect", "none running"),
    ("slow_headers", "diagnose", "3 s"),
    ("slow_body", "models", "no complete answer within the 3 s"),
    ("endless_body", "models", "more than 8 MB"),
    ("endless_sse", "verify", ""),
    ("escapes", "test", "answered as mredlink"),
    ("escapes", "test-json", "answered as mredlink"),
    ("escapes", "models", "model-aredlink"),
    ("escapes", "models-json", "model-aredlink"),
    ("escapes_error", "test", "bad modelredlink"),
    ("escapes_error", "models", "bad modelredlink"),
    ("huge_headers", "test", "FAILED"),
    ("huge_headers", "models", "FAILED"),
    ("invalid_utf8", "models", "bad"),
    ("invalid_utf8", "test", ""),
]


@pytest.mark.parametrize(("mode", "what", "said"), CASES, ids=[f"{m}-{w}" for m, w, _ in CASES])
def test_hostile_server(
    hostile_server: Callable[[str], HostileServer], child_env: dict[str, str], fake_home: Path,
    mode: str, what: str, said: str,
) -> None:
    server = hostile_server(mode)
    assert main(["profile", "add", "h", "--kind", "custom", "--base-url", server.url, "--model", "m",
                 "--target", "claude"]) == 0
    got = run_kvswitch(_command(what, server, fake_home), child_env, timeout=TIMEOUT + 60)
    assert got.code is not None, f"killed after {got.elapsed:.0f} s"
    assert got.code != 70, got.output
    assert "Traceback" not in got.output
    assert said in got.output, got.output
    assert got.elapsed < TIMEOUT + MARGIN, got.elapsed
    assert got.peak_rss_mb < RSS_CAP_MB, got.peak_rss_mb
    for char in RAW_CONTROLS:
        assert char not in got.output, f"{char!r} reached the terminal: {got.output!r}"
