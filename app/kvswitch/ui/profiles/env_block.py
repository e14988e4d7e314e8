"""The editor's environment block: ``KEY=value`` lines as a dict and back.

Kept apart from the form so its parsing rules (comments, blank lines, per-line errors) are one small unit.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def parse_env_block(text: str) -> tuple[dict[str, str], list[str]]:
    """``KEY=value`` per line (``#`` comments and blank lines skipped); returns env and line errors."""
    env: dict[str, str] = {}
    errors: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            errors.append(QCoreApplication.translate("ProfileEditor", "line %1: expected KEY=value")
                          .replace("%1", str(number)))
            continue
        env[key.strip()] = value.strip()
    return env, errors


def format_env_block(env: dict[str, str]) -> str:
    return "\n".join(f"{key}={value}" for key, value in env.items())
