"""The ``kvswitch profile add/edit`` arguments that need reading before a profile can be built: the
context window (``N`` or ``auto``), ``--env KEY=VALUE`` pairs, project targets made absolute, and the key
from standard input.

Split out of ``commands.profiles`` (the commands) so that module stays under the project's 400-line size.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from kvswitch.commands.common import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW
from kvswitch.core.errors import UsageError
from kvswitch.core.models import ENV_NAME_RE


def _context_window(text: str) -> int | None:
    """``N`` tokens, or ``auto`` (``None``: read from the server)."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens or 'auto', not {text!r}") from None
    if not MIN_CONTEXT_WINDOW <= value <= MAX_CONTEXT_WINDOW:
        raise argparse.ArgumentTypeError(
            f"{value} is out of range: give {MIN_CONTEXT_WINDOW} to {MAX_CONTEXT_WINDOW:,} tokens, or 'auto'"
        )
    return value


def parse_env_pairs(pairs: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--env {pair!r}: expected KEY=VALUE, e.g. --env API_TIMEOUT_MS=600000")
        if not ENV_NAME_RE.fullmatch(name):
            raise UsageError(
                f"--env {pair!r}: invalid variable name {name!r}; use letters, digits and '_', "
                "not starting with a digit"
            )
        env[name] = value
    return env


def normalise_target(spec: str) -> str:
    """Make ``claude-project:DIR`` absolute (the profile is used from any directory later)."""
    prefix, sep, directory = spec.partition(":")
    if sep and prefix in ("claude-project", "claude-local", "opencode-project") and directory.strip():
        project = Path(directory).expanduser().resolve()
        if not project.is_dir():
            raise UsageError(f"--target {spec}: {project} is not a directory; name an existing project")
        return f"{prefix}:{project}"
    return spec


def read_key(args: argparse.Namespace) -> str | None:
    if getattr(args, "api_key_stdin", False):
        raw = getpass.getpass("API key: ") if sys.stdin.isatty() else sys.stdin.readline()
        key = raw.strip()
        if not key:
            raise UsageError("--api-key-stdin: no key was given on standard input")
        return key
    key = getattr(args, "api_key", None)
    return key if key else None
