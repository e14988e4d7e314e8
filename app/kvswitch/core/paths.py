"""Where KV Switch keeps its own data, and where the tools it configures keep theirs.

Resolved once at start-up and passed in, never read from globals, so tests (and ``--config-dir``)
can point everything at a temporary HOME.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "kvswitch"
APP_ID = "io.github.kvswitch.KVSwitch"


@dataclass(frozen=True)
class AppPaths:
    """KV Switch's own directories.

    ``config_dir`` holds ``profiles.json`` (0600, it holds keys) and the ownership ledger;
    ``data_dir`` holds backups and undo records; ``log_dir`` holds KV Switch's own rotating log.
    """

    config_dir: Path
    data_dir: Path
    log_dir: Path

    @property
    def profiles_file(self) -> Path:
        return self.config_dir / "profiles.json"

    @property
    def state_file(self) -> Path:
        return self.config_dir / "state.json"

    @property
    def backups_dir(self) -> Path:
        return self.data_dir / "backups"

    @property
    def lock_file(self) -> Path:
        return self.config_dir / "apply.lock"

    @classmethod
    def default(cls, config_dir: Path | None = None, env: Mapping[str, str] | None = None) -> AppPaths:
        """Platform locations, or everything under ``config_dir`` / ``$KVSWITCH_CONFIG_DIR`` when given."""
        env = os.environ if env is None else env
        from_env = env.get("KVSWITCH_CONFIG_DIR")
        override = config_dir or (Path(from_env) if from_env else None)
        if override is not None:
            root = Path(override).expanduser()
            return cls(config_dir=root, data_dir=root / "data", log_dir=root / "logs")
        return cls(
            config_dir=platformdirs.user_config_path(APP_NAME, appauthor=False),
            data_dir=platformdirs.user_data_path(APP_NAME, appauthor=False),
            log_dir=platformdirs.user_log_path(APP_NAME, appauthor=False),
        )


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's home, honouring ``$HOME`` (tests run with a temporary one)."""
    env = os.environ if env is None else env
    return Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())


def claude_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    env = os.environ if env is None else env
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return home_dir(env) / ".claude"


def opencode_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/opencode`` or ``~/.config/opencode``: OpenCode uses it on every system."""
    env = os.environ if env is None else env
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / "opencode"
    return home_dir(env) / ".config" / "opencode"


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    env = os.environ if env is None else env
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"]).expanduser()
    return home_dir(env) / ".codex"
