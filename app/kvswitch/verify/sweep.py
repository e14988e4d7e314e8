"""``kvswitch sweep``: the settings table — one server setting at a time, the same measurement, the server's
own numbers per row.

People tune a local server by experiment: change one flag (``-np``, ``--cache-ram``, a block size), restart,
re-run the same requests, write TTFT and hit rate down, compare. Here the grid is the cartesian product of
``--vary FLAG=V1,V2`` options; each setting is the user's server command with those flags substituted
(an occurrence already in the command is removed, the setting's value appended; ``default`` leaves the
flag out, ``set`` passes it alone, as a switch). KV Switch starts the server for each setting
(``server_run``), waits until it is ready, measures (``sweep_measure``: verify's synthetic probe or the
real client's session), and stops it. A setting whose server fails to start, crashes or errors is a row
with its reason and the server's last lines, never an abort. A server someone else runs on the profile's
port is never touched: the sweep refuses before it starts anything.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kvswitch.core.addresses import is_loopback_url
from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.knownsecrets import hide_known
from kvswitch.core.models import Profile
from kvswitch.core.redact import MASK, mask_text
from kvswitch.core.text import printable
from kvswitch.verify.server_log import private_folder
from kvswitch.verify.server_run import ServerRun, port_in_use

if TYPE_CHECKING:
    from kvswitch.verify.history import HistoryEntry

#: a ``--vary`` value that leaves the flag out (the server's own default)
DEFAULT = "default"
#: a ``--vary`` value that passes the flag alone (a switch such as ``--swa-full``)
SWITCH = "set"
#: row statuses; only ``measured`` rows carry numbers
MEASURED, FAILED_TO_START, CRASHED, ERROR = "measured", "failed to start", "crashed", "error"
#: the server's last lines kept in a failed row
REASON_LINES = 8
_FLAG = re.compile(r"^--?[A-Za-z][A-Za-z0-9_.-]*$")
_LOOKS_LIKE_FLAG = re.compile(r"^--?[A-Za-z]")

Assignment = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Vary:
    flag: str
    values: tuple[str, ...]


def parse_vary(text: str) -> Vary:
    """``FLAG=V1,V2,...`` (``--vary=-np=1,4``): a usage error naming what is wrong."""
    flag, sep, values = text.partition("=")
    if not sep or not _FLAG.match(flag):
        raise UsageError(f"--vary {text!r}: write FLAG=V1,V2 with the flag as the server spells it, "
                         "e.g. --vary=-np=1,4 or --vary=--cache-ram=0,default")
    items = tuple(v.strip() for v in values.split(","))
    if not all(items):
        raise UsageError(f"--vary {text!r}: an empty value (use '{DEFAULT}' to leave {flag} out)")
    if len(set(items)) != len(items):
        raise UsageError(f"--vary {text!r}: a value is given twice")
    return Vary(flag, items)


def grid(varies: Sequence[Vary]) -> list[Assignment]:
    """Every setting: the cartesian product of the values, the first ``--vary`` changing slowest."""
    flags = [v.flag for v in varies]
    if len(set(flags)) != len(flags):
        raise UsageError("--vary: the same flag is varied twice; give all its values in one --vary")
    products = itertools.product(*(v.values for v in varies))
    return [tuple(zip(flags, values, strict=True)) for values in products]


def without_flag(argv: Sequence[str], flag: str) -> list[str]:
    """``argv`` without ``flag`` (as ``flag value``, ``flag=value`` or a lone switch)."""
    kept: list[str] = []
    skip_value = False
    for word in argv:
        if skip_value:
            skip_value = False
            if not _LOOKS_LIKE_FLAG.match(word):
                continue  # the removed flag's value (``-1`` is a value, ``-c`` the next flag)
        if word == flag:
            skip_value = True
            continue
        if word.startswith(flag + "="):
            continue
        kept.append(word)
    return kept


def setting_argv(argv: Sequence[str], assignment: Assignment) -> list[str]:
    """The server command for one setting: each varied flag removed, then appended with its value."""
    out = list(argv)
    for flag, _value in assignment:
        out = without_flag(out, flag)
    for flag, value in assignment:
        if value == SWITCH:
            out.append(flag)
        elif value != DEFAULT:
            out += [flag, value]
    return out


def label(assignment: Assignment) -> str:
    return ", ".join(f"{flag} {value}" for flag, value in assignment)


@dataclass(frozen=True)
class Measurement:
    """What one measurement found, in the server's own numbers (see ``sweep_measure``)."""

    verdict: str
    message: str = ""
    cached_tokens: int | None = None
    prompt_tokens: int | None = None
    reprocessed_tokens: int | None = None
    reuse_ratio: float | None = None
    ttft_cold_ms: float | None = None
    ttft_warm_ms: float | None = None
    client: str | None = None
    client_version: str | None = None
    failed: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)


#: ``measure(profile, timeout_s, cancel)``: one measurement against the running server
Measure = Callable[[Profile, float, threading.Event | None], Measurement]


@dataclass(frozen=True)
class SweepRow:
    setting: str
    values: dict[str, str]
    command: str
    status: str
    verdict: str | None = None
    reuse_ratio: float | None = None
    cached_tokens: int | None = None
    prompt_tokens: int | None = None
    reprocessed_tokens: int | None = None
    ttft_cold_ms: float | None = None
    ttft_warm_ms: float | None = None
    start_s: float | None = None
    reason: str | None = None
    last_lines: list[str] = field(default_factory=list)
    log_file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


CSV_COLUMNS = ("setting", "status", "verdict", "reuse_ratio", "cached_tokens", "prompt_tokens",
               "reprocessed_tokens", "ttft_cold_ms", "ttft_warm_ms", "start_s", "reason")


@dataclass(frozen=True)
class SweepReport:
    profile: str
    command: str
    probe: str
    rows: list[SweepRow]

    @property
    def exit_code(self) -> int:
        """0 when every setting was measured (whatever its verdict), 1 when one failed."""
        return 0 if all(row.status == MEASURED for row in self.rows) else 1

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "command": self.command, "probe": self.probe,
                "rows": [row.to_json() for row in self.rows]}

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for row in self.rows:
            data = row.to_json()
            writer.writerow(["" if data[c] is None else printable(str(data[c]), multiline=False)
                             for c in CSV_COLUMNS])
        return buffer.getvalue()

    def describe(self) -> str:
        width = max([len("setting"), *(len(row.setting) for row in self.rows)])
        lines = [f"{self.profile}: {self.probe}, server command {self.command}",
                 f"{'setting':{width}}  {'verdict':9} {'hit rate':>8} {'re-processed':>12} "
                 f"{'TTFT cold→warm':>17}  {'start':>6}"]
        for row in self.rows:
            start = f"{row.start_s:.1f} s" if row.start_s is not None else "-"
            if row.status != MEASURED:
                lines.append(f"{row.setting:{width}}  {row.status.upper()}: {row.reason}")
                lines.extend(f"{'':{width}}    | {line}" for line in row.last_lines)
                continue
            rate = f"{row.reuse_ratio:.1%}" if row.reuse_ratio is not None else "-"
            again = f"{row.reprocessed_tokens:,}" if row.reprocessed_tokens is not None else "-"
            ttft = (f"{row.ttft_cold_ms:.0f}→{row.ttft_warm_ms:.0f} ms"
                    if row.ttft_cold_ms is not None and row.ttft_warm_ms is not None else "-")
            lines.append(f"{row.setting:{width}}  {row.verdict or '-':9} {rate:>8} {again:>12} {ttft:>17}  "
                         f"{start:>6}")
        return "\n".join(printable(line, multiline=False) for line in lines)


def shown_command(argv: Sequence[str], secrets: Sequence[str] = ()) -> str:
    """The command as a person would type it, credentials masked (a ``--api-key`` value, a known key)."""
    words: list[str] = []
    hide_next = False
    for word in argv:
        masked = MASK if hide_next else word
        for secret in secrets:
            if secret:
                masked = masked.replace(secret, MASK)
        words.append(masked)
        hide_next = bool(re.match(r"^--?[\w-]*(?:api[-_]?key|token|password|secret)$", word, re.I))
    return mask_text(shlex.join(words))


def _masked(text: str, secrets: Sequence[str]) -> str:
    """A server's line or a reason: known secrets and credential-shaped parts masked, printable."""
    return printable(_log_line(text, secrets), multiline=False)


def _log_line(text: str, secrets: Sequence[str]) -> str:
    """A line of a setting's log file: the profile's and the other known secrets and credential-shaped
    parts masked, escape sequences removed (``cat`` of the file must not drive the terminal)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return printable(mask_text(hide_known(text)))


def server_address(profile: Profile) -> tuple[str, int]:
    """The profile's host and port, refused unless it is this machine (the sweep starts the server)."""
    if not is_loopback_url(profile.base_url):
        raise UsageError(f"sweep starts the server itself, so profile {profile.name!r} must point at this "
                         f"machine (127.0.0.1 / localhost), not {urlsplit(profile.base_url).hostname}")
    parts = urlsplit(profile.base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "127.0.0.1", port


def run_sweep(
    profile: Profile,
    command: Sequence[str],
    varies: Sequence[Vary],
    measure: Measure,
    *,
    probe: str,
    timeout: float,
    start_timeout: float,
    log_dir: Path | None = None,
    on_step: Callable[[str], None] | None = None,
    on_row: Callable[[SweepRow, Measurement | None], None] | None = None,
    cancel: threading.Event | None = None,
) -> SweepReport:
    """Start, measure and stop the server once per setting; every setting becomes a row.

    ``timeout`` bounds each measurement and ``start_timeout`` each start, so a setting takes at most
    their sum plus the stop. ``on_row`` is called as each row is made (the history keeps it there).
    """
    if not command:
        raise UsageError("--server-cmd is empty")
    settings = grid(varies)
    host, port = server_address(profile)
    if port_in_use(host, port):
        raise UsageError(f"something is already listening on {host}:{port}, the port of profile "
                         f"{profile.name!r}: sweep never restarts a server it did not start. Stop that "
                         "server (or give the profile a free port) and run the sweep again.")
    secrets = (profile.key or "", urlsplit(profile.base_url).password or "")
    step = on_step or (lambda _text: None)
    rows: list[SweepRow] = []
    for number, assignment in enumerate(settings, 1):
        if cancel is not None and cancel.is_set():
            break
        argv = setting_argv(command, assignment)
        step(f"[{number}/{len(settings)}] {label(assignment)}: starting the server")
        log_file = log_dir / f"setting-{number:02d}.log" if log_dir else None
        row, measured = _one_setting(profile, argv, assignment, measure, host, port, timeout, start_timeout,
                                     log_file, secrets, step, cancel)
        rows.append(row)
        if on_row is not None:
            on_row(row, measured)
    return SweepReport(profile.name, shown_command(command, secrets), probe, rows)


def _one_setting(
    profile: Profile, argv: list[str], assignment: Assignment, measure: Measure, host: str, port: int,
    timeout: float, start_timeout: float, log_file: Path | None, secrets: Sequence[str],
    step: Callable[[str], None], cancel: threading.Event | None,
) -> tuple[SweepRow, Measurement | None]:
    base: dict[str, Any] = {"setting": label(assignment), "values": dict(assignment),
                            "command": shown_command(argv, secrets),
                            "log_file": str(log_file) if log_file else None}

    def failed(status: str, reason: str, server: ServerRun | None) -> SweepRow:
        lines = [_masked(line, secrets) for line in server.last_lines(REASON_LINES)] if server else []
        return SweepRow(status=status, reason=_masked(reason, secrets), last_lines=lines, **base)

    if not _port_released(host, port):
        return failed(FAILED_TO_START, f"{host}:{port} is taken by another program", None), None
    if log_file is not None:
        private_folder(log_file.parent)
    started = time.monotonic()
    with ServerRun(argv, log_path=log_file, mask=lambda line: _log_line(line, secrets)) as server:
        why = server.wait_ready(profile.base_url, start_timeout, cancel)
        if why is not None:
            if why.startswith("not ready") and str(port) not in argv:
                why += f" (does the command listen on port {port}, the profile's?)"
            return failed(FAILED_TO_START, why, server), None
        start_s = time.monotonic() - started
        step(f"{label(assignment)}: ready in {start_s:.1f} s, measuring")
        try:
            measured = measure(profile, timeout, cancel)
        except KvSwitchError as exc:  # the client could not run, its session broke: this setting's row
            measured = Measurement(verdict="ERROR", message=str(exc), failed=True)
        gone = server.exit_reason()
    if gone is not None:
        return failed(CRASHED, gone, server), measured
    if measured.failed:
        return failed(ERROR, measured.message, server), measured
    return SweepRow(status=MEASURED, verdict=measured.verdict, reuse_ratio=measured.reuse_ratio,
                    cached_tokens=measured.cached_tokens, prompt_tokens=measured.prompt_tokens,
                    reprocessed_tokens=measured.reprocessed_tokens, ttft_cold_ms=measured.ttft_cold_ms,
                    ttft_warm_ms=measured.ttft_warm_ms, start_s=round(start_s, 2), **base), measured


def _port_released(host: str, port: int, wait: float = 10.0) -> bool:
    """The previous setting's server is reaped, but its socket may linger a moment; anything still
    answering after ``wait`` is another program."""
    deadline = time.monotonic() + wait
    while port_in_use(host, port, timeout=0.5):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)  # a socket being released: nothing to read, only to wait
    return True


def history_entry(profile: Profile, row: SweepRow, measured: Measurement | None) -> HistoryEntry:
    """A sweep row in the profile's verify history (``check`` "sweep", ``setting`` the row's)."""
    from kvswitch.verify.history import HistoryEntry, now, public_url  # noqa: PLC0415

    verdict = row.verdict if row.status == MEASURED and row.verdict else row.status.upper()
    return HistoryEntry(
        time=now(), profile=profile.name, check="sweep", verdict=verdict, setting=row.setting,
        client=measured.client if measured else None,
        client_version=measured.client_version if measured else None,
        server={"url": public_url(profile.base_url), "command": row.command, "values": row.values},
        reuse_ratio=row.reuse_ratio, cached_tokens=row.cached_tokens, prompt_tokens=row.prompt_tokens,
        ttft_cold_ms=row.ttft_cold_ms, ttft_warm_ms=row.ttft_warm_ms,
        requests=measured.requests if measured and row.status == MEASURED else [],
    )


def run_stamp() -> str:
    """A name for one sweep's folder of server logs (UTC time, sortable)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
