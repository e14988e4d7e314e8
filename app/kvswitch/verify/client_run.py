"""Verify with the user's own Claude Code: a scripted headless session through the recorder.

A synthetic probe proves that a server *can* reuse a prefix; what users need to know is whether their
installed Claude Code, configured as the profile configures it, keeps the cache across the turns of a
session. So the installed ``claude`` runs headless (``-p``) in a throw-away project and a throw-away HOME
whose ``settings.json`` carries exactly the env the profile applies (only the base URL points at the
recorder, which forwards to the profile's backend unchanged): conversation 1 turns 1-3 (``--continue``)
and conversation 2 turn 1. Every request the client sends is counted with the server's own numbers from
its answer. ``--max-turns 1`` keeps each run to one model answer, so no tool the model asks for runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.envmap import claude_env
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import Profile
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
#: Claude Code's own text when it cannot authenticate; a verify must say so, not wait
LOGIN_HINTS = ("/login", "Invalid API key", "Please run", "not logged in")
#: how often a running client checks for Cancel
CANCEL_POLL_S = 0.1


class ClientMissing(KvSwitchError):
    """No ``claude`` binary to run: nothing was verified."""

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
    env_names: list[str]


def find_claude(explicit: str | None) -> Path:
    """The ``claude`` to run: ``--claude-bin``, else the one on PATH; a clear error when there is none."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ClientMissing(f"--claude-bin {explicit}: not an executable file")
        return path
    found = shutil.which("claude")
    if found is None:
        raise ClientMissing(
            "Claude Code is not installed here (no 'claude' on PATH): install it, or give --claude-bin PATH"
        )
    return Path(found)


def _run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    cancel: threading.Event | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the client in its own process group; on time-out or cancel the whole group is killed and reaped.

    The cancel event is polled every ``CANCEL_POLL_S`` while the client runs, so Cancel in the window
    stops a running ``claude`` within a fraction of a second instead of after its turn.
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


def client_version(binary: Path, timeout: float = 20.0) -> str:
    with tempfile.TemporaryDirectory(prefix="kvswitch-claude-") as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
        done = _run([str(binary), "--version"], Path(home), env, timeout)
    if done.returncode != 0:
        raise ClientFailed(f"{binary} --version failed (exit {done.returncode})")
    return done.stdout.strip().split(" ")[0] or "unknown"


def _settings_env(profile: Profile, recorder_url: str) -> dict[str, str]:
    env = claude_env(profile)
    env["ANTHROPIC_BASE_URL"] = recorder_url
    return env


def _clean(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "••••")
    return "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")[-600:]


def run_session(
    profile: Profile,
    binary: Path,
    *,
    timeout: float,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> ClientSession:
    """Run the scripted session against the profile's backend; every request with the server's numbers."""
    deadline = time.monotonic() + timeout
    version = client_version(binary, min(20.0, timeout))
    step = on_step or (lambda _text: None)
    requests: list[ClientRequest] = []
    with tempfile.TemporaryDirectory(prefix="kvswitch-verify-client-") as scratch:
        root = Path(scratch)
        home, project = root / "home", root / "project"
        (home / ".claude").mkdir(parents=True)
        project.mkdir()
        captures: list[Capture] = []
        with Recorder(profile.base_url, root / "captures", on_capture=captures.append) as recorder:
            env_file = _settings_env(profile, recorder.url)
            settings = home / ".claude" / "settings.json"
            settings.write_text(json.dumps({"env": env_file}, indent=2))
            settings.chmod(0o600)
            run_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
            for conversation, turn, prompt in SCRIPT:
                if cancel is not None and cancel.is_set():
                    raise ClientCancelled("cancelled")
                step(f"conversation {conversation}, turn {turn}")
                seen = len(captures)
                argv = [str(binary), "-p", prompt, "--max-turns", "1"]
                if turn > 1:
                    argv.insert(2, "--continue")
                done = _run(argv, project, run_env, deadline - time.monotonic(), cancel)
                output = done.stdout + done.stderr
                if done.returncode != 0 and any(hint in output for hint in LOGIN_HINTS):
                    raise ClientFailed(f"Claude Code asks to log in: {_clean(output, [profile.key])}")
                new = [c for c in captures[seen:] if c.method == "POST" and "/messages" in c.path]
                if done.returncode != 0 and not new:
                    raise ClientFailed(
                        f"Claude Code exited {done.returncode} at conversation {conversation}, turn {turn}: "
                        + _clean(output, [profile.key])
                    )
                requests.extend(_request(conversation, turn, capture) for capture in new)
    return ClientSession("claude", version, requests, sorted(env_file))


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
