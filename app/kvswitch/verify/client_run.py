"""Verify with the user's own client: a scripted headless session through the recorder.

A synthetic probe proves that a server *can* reuse a prefix; what users need to know is whether their
installed Claude Code or Codex, configured as the profile configures it, keeps the cache across the
turns of a session. So the installed client runs headless in a throw-away project and a throw-away home
that carry exactly what the profile applies (only the base URL points at the recorder, which forwards to
the profile's backend unchanged): conversation 1 turns 1-3 (continued) and conversation 2 turn 1. Every
request the client sends is counted with the server's own numbers from its answer. What differs per
client (files, command lines, which request carries the turn) is in ``client_specs``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import Profile
from kvswitch.verify.client_specs import ClientSpec, client_spec
from kvswitch.verify.recorder import Capture, Recorder

#: what each scripted run asks; short, so the answer (not the prompt) stays small. The two
#: conversations open with different words, as a person's do: Claude Code 2.1.332 derives its billing
#: header from the first user message, so two openings that begin alike would hide that header's cost.
SCRIPT: tuple[tuple[int, int, str], ...] = (
    (1, 1, "Reply with one word: ready."),
    (1, 2, "Reply with one word: again."),
    (1, 3, "Reply with one word: done."),
    (2, 1, "Name one colour, in one word."),
)
#: how often a running client checks for Cancel
CANCEL_POLL_S = 0.1


class ClientMissing(KvSwitchError):
    """No client binary to run: nothing was verified."""

    exit_code = 3


class ClientFailed(KvSwitchError):
    """The client ran but did not finish a turn (error exit, login prompt, time limit)."""

    exit_code = 4


class ClientCancelled(ClientFailed):
    """The user cancelled the session; the running client was stopped."""


@dataclass(frozen=True)
class ClientRequest:
    """One request the client sent, as the server answered it."""

    conversation: int
    turn: int
    number: int
    prompt_tokens: int | None
    cached_tokens: int | None
    prompt_ms: float | None
    status: int | None
    body: object

    @property
    def reuse(self) -> float | None:
        if self.prompt_tokens and self.cached_tokens is not None:
            return self.cached_tokens / self.prompt_tokens
        return None


@dataclass(frozen=True)
class ClientSession:
    client: str
    version: str
    requests: list[ClientRequest]
    #: what the profile gave the client: env names for Claude Code, config keys and env names for Codex
    env_names: list[str]
    #: wall time of each turn's client run (start to exit), ``(conversation, turn, ms)``
    turn_ms: list[tuple[int, int, float]] = field(default_factory=list)
    #: what the client itself warned about (each line once), e.g. Codex's unknown-model metadata
    client_warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        try:
            return client_spec(self.client).label
        except ValueError:
            return self.client


def find_client(client: str, explicit: str | None) -> Path:
    """The client binary to run: the one the option names, else the one on PATH; a clear error when
    there is none."""
    spec = client_spec(client)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ClientMissing(f"{spec.bin_option} {explicit}: not an executable file")
        return path
    found = shutil.which(spec.executable)
    if found is None:
        raise ClientMissing(
            f"{spec.label} is not installed here (no '{spec.executable}' on PATH): install it, "
            f"or give {spec.bin_option} PATH"
        )
    return Path(found)


def find_claude(explicit: str | None) -> Path:
    """The ``claude`` to run: ``--claude-bin``, else the one on PATH."""
    return find_client("claude", explicit)


def _run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    cancel: threading.Event | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the client in its own process group; on time-out or cancel the whole group is killed and reaped.

    The cancel event is polled every ``CANCEL_POLL_S`` while the client runs, so Cancel in the window
    stops a running client within a fraction of a second instead of after its turn.
    """
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + max(timeout, 0.1)
    while True:
        left = deadline - time.monotonic()
        try:
            out, err = proc.communicate(timeout=max(0.01, min(CANCEL_POLL_S, left)))
            break
        except subprocess.TimeoutExpired:
            cancelled = cancel is not None and cancel.is_set()
            if not cancelled and time.monotonic() < deadline:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            if cancelled:
                raise ClientCancelled("cancelled") from None
            message = f"{argv[0]} did not finish a turn within {timeout:.0f} s; it was stopped"
            raise ClientFailed(message) from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def client_version(binary: Path, timeout: float = 20.0, client: str = "claude") -> str:
    spec = client_spec(client)
    with tempfile.TemporaryDirectory(prefix=f"kvswitch-{spec.name}-") as home:
        done = _run([str(binary), "--version"], Path(home), spec.version_env(Path(home)), timeout)
    if done.returncode != 0:
        raise ClientFailed(f"{binary} --version failed (exit {done.returncode})")
    return spec.parse_version(done.stdout)


def _clean(text: str, secrets: list[str | None], limit: int | None = 600) -> str:
    """Client output fit to show: keys masked, control characters dropped, the last ``limit`` chars."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "••••")
    text = "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")
    return text if limit is None else text[-limit:]


def run_session(
    profile: Profile,
    binary: Path,
    *,
    timeout: float,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    client: str = "claude",
    script: tuple[tuple[int, int, str], ...] = SCRIPT,
) -> ClientSession:
    """Run the scripted session against the profile's backend; every request with the server's numbers."""
    spec = client_spec(client)
    deadline = time.monotonic() + timeout
    version = client_version(binary, min(20.0, timeout), client)
    step = on_step or (lambda _text: None)
    requests: list[ClientRequest] = []
    turn_ms: list[tuple[int, int, float]] = []
    warnings: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"kvswitch-verify-{spec.name}-") as scratch:
        root = Path(scratch)
        captures: list[Capture] = []
        with Recorder(spec.upstream(profile), root / "captures", on_capture=captures.append) as recorder:
            layout = spec.layout(profile, recorder.url, root)
            for conversation, turn, prompt in script:
                if cancel is not None and cancel.is_set():
                    raise ClientCancelled("cancelled")
                step(f"conversation {conversation}, turn {turn}")
                seen = len(captures)
                argv = spec.argv(binary, conversation, turn, prompt)
                started = time.monotonic()
                done = _run(argv, layout.cwd, layout.env, deadline - time.monotonic(), cancel)
                turn_ms.append((conversation, turn, (time.monotonic() - started) * 1000))
                for line in spec.warnings(_clean(done.stdout + done.stderr, [profile.key], None)):
                    if line not in warnings:
                        warnings.append(line)
                new = [c for c in captures[seen:] if spec.is_turn_request(c)]
                _check_turn(spec, profile, done, new, conversation, turn)
                requests.extend(_request(conversation, turn, capture) for capture in new)
    return ClientSession(spec.name, version, requests, layout.given, turn_ms, warnings)


def _check_turn(
    spec: ClientSpec,
    profile: Profile,
    done: subprocess.CompletedProcess[str],
    new: list[Capture],
    conversation: int,
    turn: int,
) -> None:
    """A turn that failed says why in the client's own words (keys masked)."""
    output = done.stdout + done.stderr
    if done.returncode != 0 and any(hint in output for hint in spec.login_hints):
        raise ClientFailed(f"{spec.label} asks to log in: {_clean(output, [profile.key])}")
    if done.returncode != 0 and not new:
        raise ClientFailed(
            f"{spec.label} exited {done.returncode} at conversation {conversation}, turn {turn}: "
            + _clean(output, [profile.key])
        )
    if not new:
        raise ClientFailed(
            f"{spec.label} sent no conversation request at conversation {conversation}, turn {turn}: "
            + _clean(output, [profile.key])
        )


def _request(conversation: int, turn: int, capture: Capture) -> ClientRequest:
    reading = capture.cache
    return ClientRequest(
        conversation,
        turn,
        capture.number,
        reading.prompt if reading else None,
        reading.cached if reading else None,
        capture.first_byte_ms,
        capture.status,
        capture.body,
    )
