#!/usr/bin/env python3
"""Capture real session files of Claude Code 2.1.332, Codex 0.171 and OpenCode 1.18.33, with the server's
own numbers as the truth (fixtures ``tests/fixtures/sessions-2026-12``; issue 35).

Why: the session readers (``kvswitch.sessions``) must recover, from each client's own files, the tokens
the server counted for that client's requests. This starts the real llama-server (b11434) on the tiny
model (one slot, no prompt cache in RAM, every answer ended at once by a bias on ``<|im_end|>``), applies a
KV Switch profile to the three clients in a throw-away HOME (``kvswitch profile add`` + ``use``, as a user
does), runs each client headless, and after every run reads the server's ``/metrics``: the deltas of
``prompt_tokens_total`` (prompt tokens processed: new), ``prompt_tokens_cached_total`` (reused) and
``tokens_predicted_total`` (output) are that run's truth.

Runs: Claude Code ``say hi`` (session A, fixed ``--session-id``), ``--resume A`` in a new process,
a second session B in the same project (on one slot it takes A's cache), ``--resume A --model
tiny-other`` (a model switch after B evicted A), ``--resume A /compact`` (compaction), and, with
``--idle SECONDS``, ``--resume A`` after that long idle; Codex ``exec "say hi"`` and ``exec resume
--last``; OpenCode ``run`` and ``run --continue`` (``--title`` given, so no title request reaches the
server beside the session's own).

A second server answers 24 tokens of the random model's words (``-n 24``, no bias), for a session C that
``/compact`` really compacts (on an empty summary it fails): ``say hi``, ``--resume C /compact``,
``--resume C go on``.

usage: capture_sessions.py OUT [--idle SECONDS] [--only main|compact]
(OUT: copies of the clients' files and truth.json)
The helpers (``start_server``, ``apply_profile``, ``RUNS``, ``run_all``, ``copy_files``) are also what the
end-to-end test (``tests/e2e/test_e2e_sessions.py``) runs into its own temporary HOME.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pwd
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
CACHE = Path(os.environ.get("KVSWITCH_CACHE") or REAL_HOME / ".cache" / "kvswitch")
CONTEXT = 32768
KEY = "local-capture-key-4242"
SESSION_A = "5e5510a0-0000-4000-8000-00000000000a"
SESSION_B = "5e5510a0-0000-4000-8000-00000000000b"
_METRIC = re.compile(
    r"^(llamacpp:(?:prompt_tokens_total|prompt_tokens_cached_total|tokens_predicted_total)) (\S+)$", re.M
)


@dataclass(frozen=True)
class Run:
    client: str
    label: str
    args: tuple[str, ...]
    #: the session the run adds to: a fixed id, or "new"/"last" (found from the client's files after it)
    session: str


#: the runs, in order (``idle`` runs only when the capture is given ``--idle``)
RUNS: tuple[Run, ...] = (
    Run("claude", "new", ("-p", "say hi", "--session-id", SESSION_A), SESSION_A),
    Run("claude", "resume", ("-p", "--resume", SESSION_A, "say it again"), SESSION_A),
    Run("claude", "other", ("-p", "what is in this folder", "--session-id", SESSION_B), SESSION_B),
    Run(
        "claude",
        "model_switch",
        ("-p", "--resume", SESSION_A, "--model", "tiny-other", "once more"),
        SESSION_A,
    ),
    Run("claude", "compact", ("-p", "--resume", SESSION_A, "/compact"), SESSION_A),
    Run("codex", "new", ("exec", "--skip-git-repo-check", "say hi"), "new"),
    Run("codex", "resume", ("exec", "--skip-git-repo-check", "resume", "--last", "say more"), "last"),
    Run("opencode", "new", ("run", "--title", "fixture", "say hi"), "new"),
    Run("opencode", "continue", ("run", "--continue", "say more"), "last"),
)
SESSION_C = "5e5510a0-0000-4000-8000-00000000000c"
#: on the talkative server: a conversation compacted, then continued
COMPACT_RUNS: tuple[Run, ...] = (
    Run("claude", "talk", ("-p", "say hi", "--session-id", SESSION_C), SESSION_C),
    Run("claude", "compact_ok", ("-p", "--resume", SESSION_C, "/compact"), SESSION_C),
    Run("claude", "after_compact", ("-p", "--resume", SESSION_C, "go on"), SESSION_C),
)
IDLE_RUN = Run("claude", "idle", ("-p", "--resume", SESSION_A, "after a long pause"), SESSION_A)


@dataclass
class Measured:
    run: Run
    session: str
    returncode: int
    new: int
    cached: int
    output: int
    seconds: float
    stderr_tail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.run.client,
            "label": self.run.label,
            "args": list(self.run.args),
            "session": self.session,
            "returncode": self.returncode,
            "server_new_tokens": self.new,
            "server_cached_tokens": self.cached,
            "server_output_tokens": self.output,
            "seconds": round(self.seconds, 1),
        }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def eos_token_id() -> int:
    """The tiny model's ``<|im_end|>`` id (a logit bias on it ends every answer at once)."""
    namespace: dict[str, Any] = {"__name__": "make_tiny_model"}
    exec(
        compile((REPO / "scripts" / "make_tiny_model.py").read_text(), "make_tiny_model.py", "exec"),
        namespace,
    )
    return 256 + len(namespace["MERGES"]) + namespace["SPECIAL_TOKENS"].index("<|im_end|>")


def tiny_model() -> Path:
    model = CACHE / "models" / f"kvswitch-tiny-{CONTEXT}.gguf"
    if not model.is_file():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "scripts" / "make_tiny_model.py"),
                str(model),
                "--context",
                str(CONTEXT),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return model


@contextlib.contextmanager
def start_server(binary: Path, workdir: Path, talkative: bool = False) -> Iterator[str]:
    """The real llama-server on one slot with its metrics on; its URL. Always stopped. Every answer is
    ended at once (a bias on ``<|im_end|>``), or, ``talkative``, is 24 tokens of the random model's words
    (Claude Code's ``/compact`` fails on an empty summary)."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [
        str(binary),
        "-m",
        str(tiny_model()),
        "-a",
        "tiny",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(CONTEXT),
        "-np",
        "1",
        "--metrics",
        "--cache-ram",
        "0",
        *(["-n", "24"] if talkative else ["-l", f"{eos_token_id()}+100"]),
        "--log-file",
        str(workdir / "llama-server.log"),
    ]
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"llama-server exited with {proc.returncode}; see {workdir}/llama-server.log"
                )
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/health", timeout=1) as answer:
                if answer.status == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("llama-server did not become healthy in 90 s")
            time.sleep(0.2)  # polling a child process's port
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def metrics(url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {name: float(value) for name, value in _METRIC.findall(text)}


def client_env(home: Path) -> dict[str, str]:
    """What the clients see: the throw-away HOME, the key the profile's targets read, nothing else."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "KVSWITCH_API_KEY": KEY,
        "CODEX_HOME": str(home / ".codex"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }


def apply_profile(home: Path, url: str, name: str = "local") -> None:
    """``kvswitch profile add`` + ``kvswitch use`` for the three clients, as a user runs them."""
    env = {**client_env(home), "KVSWITCH_CONFIG_DIR": str(home / ".kvswitch")}
    for argv in (
        [
            "profile",
            "add",
            name,
            "--kind",
            "llama.cpp",
            "--base-url",
            url,
            "--model",
            "tiny",
            "--small-fast-model",
            "tiny",
            "--context-window",
            str(CONTEXT),
            "--api-key",
            KEY,
            "--target",
            "claude",
            "--target",
            "codex",
            "--target",
            "opencode",
        ],
        ["use", name],
    ):
        subprocess.run(
            [sys.executable, "-m", "kvswitch", *argv],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )


def _newest(folder: Path, pattern: str) -> Path | None:
    found = sorted(folder.rglob(pattern), key=lambda path: path.stat().st_mtime) if folder.is_dir() else []
    return found[-1] if found else None


def session_after(run: Run, home: Path) -> str:
    """The session id the run wrote to (a fixed one, else read from the client's newest session)."""
    if run.session not in ("new", "last"):
        return run.session
    if run.client == "codex":
        newest = _newest(home / ".codex" / "sessions", "rollout-*.jsonl")
        return newest.stem[-36:] if newest else ""
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    if not db.is_file():
        return ""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as source:
        row = source.execute("SELECT id FROM session ORDER BY time_updated DESC LIMIT 1").fetchone()
    return str(row[0]) if row else ""


def run_all(
    binaries: dict[str, Path],
    home: Path,
    project: Path,
    url: str,
    idle: float = 0.0,
    runs: tuple[Run, ...] = RUNS,
) -> list[Measured]:
    """Each run with its server-side truth (the /metrics deltas around it)."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "notes.txt").write_text("kvswitch sessions fixture: the answer is 42\n")
    chosen = list(runs)
    if idle:
        chosen.append(IDLE_RUN)
    measured = []
    for run in chosen:
        if run is IDLE_RUN:
            time.sleep(idle)
        before, started = metrics(url), time.monotonic()
        done = subprocess.run(
            [str(binaries[run.client]), *run.args],
            cwd=project,
            env=client_env(home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        time.sleep(0.5)  # let the server finish the answer's bookkeeping before the counters are read
        after = metrics(url)

        def delta(name: str, before: dict[str, float] = before, after: dict[str, float] = after) -> int:
            return round(after.get(f"llamacpp:{name}", 0) - before.get(f"llamacpp:{name}", 0))

        measured.append(
            Measured(
                run,
                session_after(run, home),
                done.returncode,
                delta("prompt_tokens_total"),
                delta("prompt_tokens_cached_total"),
                delta("tokens_predicted_total"),
                time.monotonic() - started,
                done.stderr[-600:],
            )
        )
    return measured


def copy_files(home: Path, out: Path) -> None:
    """The clients' files as they wrote them (OpenCode's database through SQLite's backup, read-only)."""
    for source, target in (
        (home / ".claude" / "projects", out / "claude" / "projects"),
        (home / ".codex" / "sessions", out / "codex" / "sessions"),
    ):
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("memory"))
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    if db.is_file():
        (out / "opencode").mkdir(parents=True, exist_ok=True)
        copy = out / "opencode" / "opencode.db"
        copy.unlink(missing_ok=True)
        with (
            contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as source,
            contextlib.closing(sqlite3.connect(copy)) as target,
        ):
            source.backup(target)


def binaries() -> dict[str, Path]:
    claude = (
        CACHE
        / "claude-code"
        / "2.1.332"
        / "node_modules"
        / "@anthropic-ai"
        / "claude-code-linux-x64"
        / "claude"
    )
    codex = next(
        iter(
            sorted(
                (CACHE / "codex" / "0.171.0" / "node_modules").glob(
                    "@openai/codex-linux-*/vendor/*/bin/codex"
                )
            )
        ),
        Path("codex"),
    )
    opencode = CACHE / "opencode" / "1.18.33" / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
    return {
        "claude": Path(os.environ.get("KVSWITCH_CLAUDE_BIN") or claude),
        "codex": Path(
            os.environ.get("KVSWITCH_CODEX_NEW_BIN") or os.environ.get("KVSWITCH_CODEX_BIN") or codex
        ),
        "opencode": Path(os.environ.get("KVSWITCH_OPENCODE_BIN") or opencode),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--idle", type=float, default=0.0, help="seconds to wait before the idle run (0: none)"
    )
    parser.add_argument("--only", choices=("main", "compact"), help="only the main runs, or only session C's")
    args = parser.parse_args(argv)
    server = Path(
        os.environ.get("KVSWITCH_LLAMA_SERVER") or CACHE / "llama-server" / "11434" / "llama-server"
    )
    found = binaries()
    for needed in (server, *found.values()):
        if not needed.is_file():
            print(
                f"capture_sessions: missing {needed} (scripts/dev.sh components installs it)", file=sys.stderr
            )
            return 2
    root = Path("/tmp/kvswitch-sessions-capture")
    shutil.rmtree(root, ignore_errors=True)
    home, project = root / "home", Path("/tmp/kvswitch-sessions-project")
    shutil.rmtree(project, ignore_errors=True)
    home.mkdir(parents=True)
    measured: list[Measured] = []
    if args.only in (None, "main"):
        with start_server(server, root / "server") as url:
            apply_profile(home, url)
            measured += run_all(found, home, project, url, args.idle)
    if args.only in (None, "compact"):
        with start_server(server, root / "server-talkative", talkative=True) as url:
            apply_profile(home, url, "talkative")
            measured += run_all(found, home, project, url, runs=COMPACT_RUNS)
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    copy_files(home, args.out)
    truth = {
        "server": "llama.cpp b11434, tiny model, -np 1 --cache-ram 0 --metrics",
        "clients": {"claude": "2.1.332", "codex": "0.171.0", "opencode": "1.18.33"},
        "project": str(project),
        "runs": [item.to_json() for item in measured],
    }
    (args.out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    for item in measured:
        print(
            item.run.client,
            item.run.label,
            item.returncode,
            item.session,
            item.new,
            item.cached,
            item.output,
            item.stderr_tail.strip()[-200:] if item.returncode else "",
        )
    return 0 if all(item.returncode == 0 for item in measured) else 1


if __name__ == "__main__":
    raise SystemExit(main())
