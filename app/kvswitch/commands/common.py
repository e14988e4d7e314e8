"""What every command module shares: one-line output, where KV Switch keeps its data, the profile store.

Kept light on purpose (no pydantic, no engines at import time): ``kvswitch log scan`` in a script loop
loads only the log engine, and the store's models load only when a command asks for the store.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kvswitch.core.paths import AppPaths
from kvswitch.core.profile_rules import CONTEXT_WINDOW_RANGE
from kvswitch.core.text import for_terminal

#: the bounds ``Profile.context_window`` accepts
MIN_CONTEXT_WINDOW, MAX_CONTEXT_WINDOW = CONTEXT_WINDOW_RANGE

if TYPE_CHECKING:
    from kvswitch.core.models import Profile
    from kvswitch.core.store import ProfileStore


def timeout_seconds(text: str) -> float:
    """``--timeout``'s type: a finite number of seconds in (0, 86400]: ``inf`` never ends, ``nan`` never
    expires, 0 can never succeed; anything else is a usage error naming the value."""
    from kvswitch.core.http import check_timeout  # noqa: PLC0415 - light, but only when parsing

    try:
        return check_timeout(float(text), "the timeout")
    except ValueError as exc:
        message = str(exc) if "timeout" in str(exc) else f"{text!r} is not a number"
        raise argparse.ArgumentTypeError(message) from None


def out(text: str) -> None:
    """One line for the user on stdout, flushed (a caller may be reading it line by line); through
    ``core.text.for_terminal``, like every line a command prints (names and bodies are the user's or
    a server's, and may carry escapes or bidi overrides)."""
    sys.stdout.write(for_terminal(text) + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    """One line of warning on stderr (the result itself goes to stdout)."""
    sys.stderr.write(for_terminal(text) + "\n")


def paths_from(args: argparse.Namespace) -> AppPaths:
    """KV Switch's own directories: ``--config-dir`` when given, else the platform default."""
    config_dir = getattr(args, "config_dir", None)
    return AppPaths.default(Path(config_dir) if config_dir else None)


def store_from(args: argparse.Namespace) -> ProfileStore:
    """The profile store of ``paths_from(args)``; its models load only for the commands that need it."""
    from kvswitch.core.store import ProfileStore  # noqa: PLC0415 - pydantic only when profiles are used

    return ProfileStore(paths_from(args))


def print_lint(profile: Profile) -> None:
    """The profile's cache-safety warnings on stderr, each with the command that fixes it."""
    from kvswitch.targets.lint import lint_profile  # noqa: PLC0415

    for warning in lint_profile(profile):
        fix = ""
        if warning.fix_env:
            flags = " ".join(f"--env {k}={v}" for k, v in warning.fix_env.items())
            fix = f" (fix: kvswitch profile edit {profile.name!r} {flags})"
        err(f"warning [{warning.code}]: {warning.message}{fix}")
