"""Run ``kvswitch`` as a real subprocess and measure what a user would suffer: exit, wall time, peak RSS.

The peak resident set comes from the kernel (``wait4``'s ``ru_maxrss``), exact for that one child
however fast it grows, with no polling. The child is started by a small launcher, not by the test
process itself: the kernel counts the high-water mark of the memory a process had before its
``exec`` (a fork of the test process: hundreds of MB late in a long pytest run) into that process's
``ru_maxrss``, so the launcher forks the command from its own few MB and reports its figure.
An address-space cap (``RLIMIT_AS``, 4 GiB by default) keeps a runaway child from taking the machine
with it: it then dies with a MemoryError, which shows up as exit 70 (or a signal) in the figures
instead of as swapping.
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
from pathlib import Path

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


#: forks ``python -m kvswitch`` from a small interpreter, caps it, waits, and writes its peak RSS (KiB)
#: and exit status to the file named in argv[1]
LAUNCHER = """
import os, resource, sys
cap, report, argv = int(sys.argv[2]), sys.argv[1], sys.argv[3:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.execv(argv[0], argv)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    out.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run_kvswitch(
    args: Sequence[str | bytes],
    env: Mapping[str, str | bytes],
    timeout: float = 60.0,
    cap: int = ADDRESS_SPACE_CAP,
    stdin: bytes = b"",
) -> Outcome:
    """``python -m kvswitch ARGS`` in ``env``; killed at ``timeout`` (``code`` is then None)."""
    argv = [sys.executable, "-m", "kvswitch", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp, \
            tempfile.TemporaryDirectory() as scratch:
        inp.write(stdin)
        inp.seek(0)
        report = Path(scratch) / "rusage"
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(report), str(cap), *argv],  # type: ignore[list-item]
                                env=dict(env), stdin=inp, stdout=out, stderr=err,  # type: ignore[arg-type]
                                start_new_session=True)
        code: int | None = None
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and the command it forked
            proc.wait()
        elapsed = time.monotonic() - started
        rss_kb = 0
        if report.exists():
            peak, status = report.read_text().split()
            rss_kb, code = int(peak), int(status)  # a signal is its negative number, as with Popen
        out.seek(0)
        err.seek(0)
        if sys.platform == "darwin":
            rss_kb //= 1024
        return Outcome(tuple(str(a) for a in args), code, elapsed, rss_kb * 1024 / MB,
                       out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))
