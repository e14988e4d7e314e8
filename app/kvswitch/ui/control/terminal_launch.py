"""Open the user's terminal in a project directory, running a command (the Sessions view's Resume).

Which terminal: ``$TERMINAL`` (as i3, sway and many dotfiles set it), then Debian's
``x-terminal-emulator`` alternative, then the common ones by name. Each takes "run this" differently, so
the argv is built per terminal; the command runs in ``sh -c`` followed by the user's shell, so the
terminal stays open when the client exits. The terminal is started detached (``QProcess.startDetached``:
no child to reap, no thread to wait for); when none is found the caller copies the command instead.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

#: tried in this order after ``$TERMINAL``
TERMINALS = ("x-terminal-emulator", "gnome-terminal", "konsole", "xfce4-terminal", "kitty", "alacritty",
             "xterm")


def find_terminal(env: Mapping[str, str] | None = None) -> list[str] | None:
    """The terminal to use as an argv prefix (``$TERMINAL`` may carry its own options), or None."""
    env = os.environ if env is None else env
    search = env.get("PATH")
    wanted = env.get("TERMINAL", "").strip()
    if wanted:
        try:
            parts = shlex.split(wanted)
        except ValueError:
            parts = []
        found = shutil.which(parts[0], path=search) if parts else None
        if found:
            return [found, *parts[1:]]
    for name in TERMINALS:
        found = shutil.which(name, path=search)
        if found:
            return [found]
    return None


def terminal_argv(terminal: list[str], directory: str, command: str) -> list[str]:
    """The full argv that opens ``terminal`` in ``directory`` running ``command`` then a shell."""
    script = f'{command}; exec "${{SHELL:-sh}}"'
    run = ["sh", "-c", script]
    name = Path(terminal[0]).name
    if name == "gnome-terminal":
        return [*terminal, f"--working-directory={directory}", "--", *run]
    if name == "konsole":
        return [*terminal, "--workdir", directory, "-e", *run]
    if name == "xfce4-terminal":
        return [*terminal, f"--working-directory={directory}", "-x", *run]
    if name == "kitty":
        return [*terminal, "--directory", directory, *run]
    if name == "alacritty":
        return [*terminal, "--working-directory", directory, "-e", *run]
    return [*terminal, "-e", *run]  # xterm, x-terminal-emulator and most others


def working_directory(project: str) -> str:
    """The session's project directory when it still exists, else the home directory."""
    if project and Path(project).is_dir():
        return project
    return str(Path.home())


def open_in_terminal(command: str, project: str, env: Mapping[str, str] | None = None) -> str | None:
    """Start a terminal running ``command`` in the project directory; the terminal's path, or None when
    no terminal was found or it could not be started."""
    from PySide6.QtCore import QProcess  # noqa: PLC0415

    terminal = find_terminal(env)
    if terminal is None:
        return None
    directory = working_directory(project)
    argv = terminal_argv(terminal, directory, command)
    started, _pid = QProcess.startDetached(argv[0], argv[1:], directory)
    return terminal[0] if started else None
