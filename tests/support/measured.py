"""Run ``kvswitch`` as a real subprocess and measure what a user would suffer: exit, wall time, peak RSS.

The peak resident set comes from the kernel (``wait4``'s ``ru_maxrss``), exact for that one child
however fast it grows, with no polling. An address-space cap (``RLIMIT_AS``, 4 GiB by default) keeps
a runaway child from taking the machine with it: it then dies with a MemoryError, which shows up as
exit 70 (or a signal) in the figures instead of as swapping.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MB = 1 << 20
ADDRESS_SPACE_CAP = 4 << 30


@dataclass(frozen=True)
class Outcome:
    argv: tuple[str, ...]
    code: int | None  # None when it was killed at the timeout
    elapsed: float
    peak_rss_mb: float
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _cap_address_space(limit: int) -> None:
    import resource  # noqa: PLC0415 - POSIX only

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_kvswitch(
    args: Sequence[str | bytes],
    env: Mapping[str, str | bytes],
    timeout: float = 60.0,
    cap: int = ADDRESS_SPACE_CAP,
    stdin: bytes = b"",
) -> Outcome:
    """``python -m kvswitch ARGS`` in ``env``; killed at ``timeout`` (``code`` is then None)."""
    argv = [sys.executable, "-m", "kvswitch", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        inp.write(stdin)
        inp.seek(0)
        started = time.monotonic()
        proc = subprocess.Popen(argv, env=dict(env), stdin=inp, stdout=out, stderr=err,  # type: ignore[arg-type]
                                preexec_fn=lambda: _cap_address_space(cap))
        code: int | None = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - started > timeout:
                proc.send_signal(signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        elapsed = time.monotonic() - started
        proc.returncode = code if code is not None else -9  # wait4 reaped it: keep Popen from waiting again
        out.seek(0)
        err.seek(0)
        rss_kb = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss // 1024
        return Outcome(tuple(str(a) for a in args), code, elapsed, rss_kb * 1024 / MB,
                       out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))
