"""Errors a person can act on.

Every failure that reaches the user is a ``KvSwitchError``: the CLI prints ``str(error)`` to stderr and
exits non-zero, the GUI shows it inline. Anything else escaping is a bug and is reported as such.
"""

from __future__ import annotations

from pathlib import Path


class KvSwitchError(Exception):
    """Base class: the message is complete and safe to show (never contains a secret)."""

    exit_code = 1


class UsageError(KvSwitchError):
    """The user asked for something that cannot be done as stated (bad name, bad value)."""

    exit_code = 2


class ConfigParseError(KvSwitchError):
    """A file we must read (and would merge into) cannot be parsed; nothing gets written."""

    def __init__(self, path: Path | str, reason: str, line: int | None = None, column: int | None = None):
        self.path = Path(path)
        self.reason = reason
        self.line = line
        self.column = column
        where = str(self.path)
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {reason}")


class FileAccessError(KvSwitchError):
    """A file cannot be read or written (permissions, a directory in the way, a symlink loop)."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class ProfileError(KvSwitchError):
    """A profile is invalid, missing or duplicated."""

    exit_code = 2


class LockedError(KvSwitchError):
    """Another KV Switch process is applying a profile right now."""

    exit_code = 3
