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

A server whose cache has a tier in a process of its own is swept with that process too (``--tier-cmd``,
``sweep_tier``): it starts first and stops last in every setting, ``TIER.FLAG`` in ``--vary`` changes
its command, and the rows add the warm request's tokens by tier (L1, L2, computed) from the tiers' own
counters.
"""

from __future__ import annotations

import contextlib
import csv
import io
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
from kvswitch.servers.tier_sources import pinned_tier
from kvswitch.verify import sweep_tier
from kvswitch.verify.server_log import private_folder
from kvswitch.verify.server_run import ServerRun, port_in_use
from kvswitch.verify.sweep_grid import (  # noqa: F401 - the grid's names, as the sweep's callers know them
    DEFAULT,
    SWITCH,
    Assignment,
    Vary,
    grid,
    label,
    owners,
    parse_vary,
    setting_argv,
    without_flag,
)
from kvswitch.verify.sweep_tier import TierCommand, tier_columns

if TYPE_CHECKING:
    from kvswitch.verify.history import HistoryEntry

#: row statuses; only ``measured`` rows carry numbers
MEASURED, FAILED_TO_START, CRASHED, ERROR = "measured", "failed to start", "crashed", "error"
#: the server's last lines kept in a failed row
REASON_LINES = 8
#: how long a cache tier's process may take to answer on its own ``/metrics``
TIER_START_TIMEOUT = 180.0

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
    #: the warm request's prompt tokens by the cache tier that served them (verify's ``tiers``)
    tiers: dict[str, Any] | None = None


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
    #: a cache tier started beside the server (``--tier-cmd``): its command, its log, and the warm
    #: request's tokens by tier — the memory tier (L1), the tiers behind it (L2), the server's own
    #: cache, computed — with the tier's chunk size, from the tiers' own counters
    tier_command: str | None = None
    tier_log_file: str | None = None
    l1_hit_tokens: int | None = None
    l2_hit_tokens: int | None = None
    server_cache_tokens: int | None = None
    computed_tokens: int | None = None
    chunk_size: int | None = None
    tiers: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


CSV_COLUMNS = ("setting", "status", "verdict", "reuse_ratio", "cached_tokens", "prompt_tokens",
               "reprocessed_tokens", "ttft_cold_ms", "ttft_warm_ms", "start_s", "reason")
#: the tier columns, in the CSV and the table when a tier was started
TIER_COLUMNS = ("l1_hit_tokens", "l2_hit_tokens", "server_cache_tokens", "computed_tokens", "chunk_size")


@dataclass(frozen=True)
class SweepReport:
    profile: str
    command: str
    probe: str
    rows: list[SweepRow]
    tier_command: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when every setting was measured (whatever its verdict), 1 when one failed."""
        return 0 if all(row.status == MEASURED for row in self.rows) else 1

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "command": self.command, "probe": self.probe,
                "tier_command": self.tier_command, "rows": [row.to_json() for row in self.rows]}

    @property
    def columns(self) -> tuple[str, ...]:
        return CSV_COLUMNS + (TIER_COLUMNS if self.tier_command else ())

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            data = row.to_json()
            writer.writerow(["" if data[c] is None else printable(str(data[c]), multiline=False)
                             for c in self.columns])
        return buffer.getvalue()

    def describe(self) -> str:
        width = max([len("setting"), *(len(row.setting) for row in self.rows)])
        tiered = self.tier_command is not None
        head = [f"{self.profile}: {self.probe}, server command {self.command}"]
        if tiered:
            head.append(f"{'':{len(self.profile)}}  cache tier command {self.tier_command}")
        lines = [*head,
                 f"{'setting':{width}}  {'verdict':9} {'hit rate':>8} {'re-processed':>12} "
                 f"{'TTFT cold→warm':>17}  {'start':>7}" + (_TIER_HEAD if tiered else "")]
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
            tier = "".join(f" {_count(getattr(row, c)):>9}" for c in _TIER_SHOWN) if tiered else ""
            lines.append(f"{row.setting:{width}}  {row.verdict or '-':9} {rate:>8} {again:>12} {ttft:>17}  "
                         f"{start:>7}{tier}")
        return "\n".join(printable(line, multiline=False) for line in lines)


#: the table's tier columns: the warm request's tokens from L1, from L2, computed
_TIER_SHOWN = ("l1_hit_tokens", "l2_hit_tokens", "computed_tokens")
_TIER_HEAD = f" {'L1 hit':>9} {'L2 hit':>9} {'computed':>9}"


def _count(value: int | None) -> str:
    return f"{value:,}" if value is not None else "-"


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
    tier_command: Sequence[str] | None = None,
) -> SweepReport:
    """Start, measure and stop the server once per setting; every setting becomes a row.

    ``timeout`` bounds each measurement and ``start_timeout`` each start, so a setting takes at most
    their sum plus the stop. ``on_row`` is called as each row is made (the history keeps it there).
    ``tier_command``: a cache tier's server, started before the server and stopped after it per setting
    (``sweep_tier``); ``TIER.FLAG`` varies go to it.
    """
    if not command:
        raise UsageError("--server-cmd is empty")
    settings = grid(varies)
    tier = sweep_tier.tier_command(tier_command) if tier_command else None
    sweep_tier.check_owners(tier, owners(varies))
    host, port = server_address(profile)
    busy = [(host, port)] + (sweep_tier.ports(tier, tier.argv, host) if tier else [])
    for where, number in busy:
        if port_in_use(where, number):
            whose = f"the port of profile {profile.name!r}" if number == port else \
                f"a port of the cache tier's command ({tier.tier.label if tier else ''})"
            raise UsageError(f"something is already listening on {where}:{number}, {whose}: sweep never "
                             "restarts a server it did not start. Stop that server (or give the command a "
                             "free port) and run the sweep again.")
    secrets = (profile.key or "", urlsplit(profile.base_url).password or "")
    step = on_step or (lambda _text: None)
    rows: list[SweepRow] = []
    for number, assignment in enumerate(settings, 1):
        if cancel is not None and cancel.is_set():
            break
        argv = setting_argv(command, assignment)
        step(f"[{number}/{len(settings)}] {label(assignment)}: starting the server")
        log_file = log_dir / f"setting-{number:02d}.log" if log_dir else None
        tier_argv = None
        if tier is not None:
            tier_argv = setting_argv(tier.argv, assignment, _owner_in(tier, assignment))
        row, measured = _one_setting(profile, argv, assignment, measure, host, port, timeout, start_timeout,
                                     log_file, secrets, step, cancel, tier, tier_argv)
        rows.append(row)
        if on_row is not None:
            on_row(row, measured)
    shown_tier = shown_command(tier.argv, secrets) if tier else None
    return SweepReport(profile.name, shown_command(command, secrets), probe, rows, shown_tier)


def _owner_in(tier: TierCommand, assignment: Assignment) -> str:
    """The name the grid gives the tier's flags (its name or its program's, as the user wrote it)."""
    written = {key.partition(".")[0] for key, _value in assignment if not key.startswith("-")}
    return next((name for name in tier.names if name in written), tier.names[0])


def _one_setting(
    profile: Profile, argv: list[str], assignment: Assignment, measure: Measure, host: str, port: int,
    timeout: float, start_timeout: float, log_file: Path | None, secrets: Sequence[str],
    step: Callable[[str], None], cancel: threading.Event | None,
    tier: TierCommand | None = None, tier_argv: list[str] | None = None,
) -> tuple[SweepRow, Measurement | None]:
    tier_log = log_file.with_name(log_file.stem + "-tier.log") if log_file and tier else None
    base: dict[str, Any] = {"setting": label(assignment), "values": dict(assignment),
                            "command": shown_command(argv, secrets),
                            "log_file": str(log_file) if log_file else None,
                            "tier_command": shown_command(tier_argv, secrets) if tier_argv else None,
                            "tier_log_file": str(tier_log) if tier_log else None}

    def failed(status: str, reason: str, server: ServerRun | None) -> SweepRow:
        lines = [_masked(line, secrets) for line in server.last_lines(REASON_LINES)] if server else []
        return SweepRow(status=status, reason=_masked(reason, secrets), last_lines=lines, **base)

    tier_ports = sweep_tier.ports(tier, tier_argv, host) if tier and tier_argv else []
    for where, number in [(host, port), *tier_ports]:
        if not _port_released(where, number):
            return failed(FAILED_TO_START, f"{where}:{number} is taken by another program", None), None
    if log_file is not None:
        private_folder(log_file.parent)
    with contextlib.ExitStack() as stack:  # the tier starts first and stops last
        tier_run, ready = None, ""
        if tier is not None and tier_argv is not None:
            step(f"{label(assignment)}: starting {tier.tier.label} first")
            tier_run = stack.enter_context(
                ServerRun(tier_argv, log_path=tier_log, mask=lambda line: _log_line(line, secrets)))
            ready = sweep_tier.ready_url(tier, tier_argv, host)
            why = tier_run.wait_ready(ready, min(start_timeout, TIER_START_TIMEOUT), cancel, exact=True)
            if why is not None:
                return failed(FAILED_TO_START, f"{tier.tier.label}: {why} ({ready})", tier_run), None
        started = time.monotonic()
        server = stack.enter_context(
            ServerRun(argv, log_path=log_file, mask=lambda line: _log_line(line, secrets)))
        why = server.wait_ready(profile.base_url, start_timeout, cancel)
        if why is not None:
            if why.startswith("not ready") and str(port) not in argv:
                why += f" (does the command listen on port {port}, the profile's?)"
            return failed(FAILED_TO_START, why, server), None
        start_s = time.monotonic() - started
        step(f"{label(assignment)}: ready in {start_s:.1f} s, measuring")
        try:
            with pinned_tier(tier.tier.name, ready) if tier is not None else contextlib.nullcontext():
                measured = measure(profile, timeout, cancel)
        except KvSwitchError as exc:  # the client could not run, its session broke: this setting's row
            measured = Measurement(verdict="ERROR", message=str(exc), failed=True)
        gone = server.exit_reason()
        tier_gone = tier_run.exit_reason() if tier_run is not None else None
    if gone is not None:
        return failed(CRASHED, gone, server), measured
    if tier_run is not None and tier_gone is not None and tier is not None:
        return failed(CRASHED, f"{tier.tier.label}: {tier_gone}", tier_run), measured
    if measured.failed:
        return failed(ERROR, measured.message, server), measured
    columns = tier_columns(measured.tiers) if tier is not None else None
    extra: dict[str, Any] = {**asdict(columns), "tiers": measured.tiers} if columns is not None else {}
    return SweepRow(status=MEASURED, verdict=measured.verdict, reuse_ratio=measured.reuse_ratio,
                    cached_tokens=measured.cached_tokens, prompt_tokens=measured.prompt_tokens,
                    reprocessed_tokens=measured.reprocessed_tokens, ttft_cold_ms=measured.ttft_cold_ms,
                    ttft_warm_ms=measured.ttft_warm_ms, start_s=round(start_s, 2), **base, **extra), measured


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
        server=_server_record(profile, row, public_url(profile.base_url)),
        reuse_ratio=row.reuse_ratio, cached_tokens=row.cached_tokens, prompt_tokens=row.prompt_tokens,
        ttft_cold_ms=row.ttft_cold_ms, ttft_warm_ms=row.ttft_warm_ms,
        requests=measured.requests if measured and row.status == MEASURED else [],
    )


def _server_record(profile: Profile, row: SweepRow, url: str) -> dict[str, Any]:
    """The row's server in the history: its command and values, and the cache tier's when one ran."""
    record: dict[str, Any] = {"url": url, "command": row.command, "values": row.values}
    if row.tier_command is not None:
        record["tier_command"] = row.tier_command
        record["tier_columns"] = {name: getattr(row, name) for name in TIER_COLUMNS}
    return record


def run_stamp() -> str:
    """A name for one sweep's folder of server logs (UTC time, sortable)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
