"""``kvswitch``: the same engine as the window, headless.

Each area registers its own sub-commands (``register(subparsers)``) so this module stays a dispatcher.
Errors a person can act on (``KvSwitchError``) print one line to stderr and exit non-zero; nothing
prints a traceback unless ``KVSWITCH_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Mapping, Sequence

from kvswitch import __version__
from kvswitch.core.errors import KvSwitchError, UsageError

#: modules that expose ``register(subparsers) -> None``; each adds parsers with ``func=handler(args) -> int``
COMMAND_MODULES = (
    "kvswitch.commands.profiles",
    "kvswitch.commands.switching",
    "kvswitch.commands.presets",
    "kvswitch.commands.log",
    "kvswitch.commands.verify",
    "kvswitch.commands.record",
    "kvswitch.commands.platform",
    "kvswitch.commands.gateway",
    "kvswitch.commands.sweep",
    "kvswitch.commands.usage",
    "kvswitch.commands.sessions",
    "kvswitch.commands.mcp",
    "kvswitch.commands.prompts",
    "kvswitch.commands.skills",
)
#: commands whose module registers nothing else and needs none of the others: ``kvswitch log scan`` on a
#: big file in a script loop should not pay for importing the switching engine, pydantic and httpx
STANDALONE_COMMANDS = {"log": "kvswitch.commands.log", "usage": "kvswitch.commands.usage",
                       "sessions": "kvswitch.commands.sessions", "session": "kvswitch.commands.sessions"}


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kvswitch",
        description="Switch Claude Code and Codex between backends; see and verify prompt-cache reuse.",
    )
    parser.add_argument("--version", action="version", version=f"kvswitch {__version__}")
    parser.add_argument("--config-dir", help="keep KV Switch's own data here instead of the platform default")
    parser.add_argument("--show-secrets", action="store_true", help="print API keys in clear")
    parser.add_argument("--minimized", action="store_true", help="start the app in the system tray only")
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # area not present in this build
            raise
        module.register(subparsers)
    return parser


GUI_SWITCHES = ("--show-secrets", "--minimized", "--smoke-test")


def gui_only_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The root flags when ``argv`` only opens the window (no sub-command, no help); None otherwise.

    Building the full parser imports every command module (the engines, pydantic models: ~300 ms),
    which the window does not need before its first paint; anything unusual takes the full parser.
    """
    args = argparse.Namespace(command=None, config_dir=None, show_secrets=False, minimized=False,
                              smoke_test=False)
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in GUI_SWITCHES:
            setattr(args, arg[2:].replace("-", "_"), True)
        elif arg == "--config-dir" and rest and not rest[0].startswith("-"):
            args.config_dir = rest.pop(0)
        elif arg.startswith("--config-dir=") and len(arg) > len("--config-dir="):
            args.config_dir = arg.split("=", 1)[1]
        else:
            return None
    return args


def command_modules(argv: Sequence[str]) -> Sequence[str]:
    """The command modules the parser needs for ``argv``: one for a standalone command, else all."""
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--config-dir":
            rest = rest[1:]
        elif not arg.startswith("-"):
            module = STANDALONE_COMMANDS.get(arg)
            return (module,) if module else COMMAND_MODULES
    return COMMAND_MODULES


#: the environment variables KV Switch reads (directly, or through ``Path.home``/platformdirs)
READ_ENVIRONMENT = (
    "HOME", "USERPROFILE", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "KVSWITCH_CONFIG_DIR", "KVSWITCH_CLAUDE_BIN",
    "KVSWITCH_LANG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR", "APPDATA", "LOCALAPPDATA", "ZDOTDIR", "SHELL", "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL", "CLAUDE_CODE_ATTRIBUTION_HEADER",
)


def _not_text(value: str) -> str | None:
    """What is wrong with ``value`` as text ("(b'\\xff') is not UTF-8"), None when nothing is.

    Bytes that are not UTF-8 reach Python as lone surrogates; they are shown as the bytes they were.
    """
    if "\x00" in value:  # no OS command line carries one, but a caller of ``main`` can
        return f"({value[:60]!r}) holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate from a UTF-16 command line (Windows)
            raw = value.encode("utf-8", "backslashreplace")
        return f"({raw[:60]!r}{'...' if len(raw) > 60 else ''}) is not UTF-8 text"
    return None


def check_text_input(argv: Sequence[str], environ: Mapping[str, str]) -> None:
    """Refuse, naming it, an argument or a read environment variable that is not UTF-8 text.

    The OS hands Python bytes; what is not UTF-8 becomes lone surrogates, which every later write
    (a profile, a settings file, the terminal) refuses with a ``UnicodeEncodeError`` deep in the code.
    Decoding everything once here turns that into one line naming the argument (exit 2).
    """
    for index, arg in enumerate(argv):
        where = _not_text(arg)
        if where is None:
            continue
        previous = argv[index - 1] if index else ""
        if arg.startswith("--") and "=" in arg:
            name = f"the value of {arg.split('=', 1)[0]}"
        elif previous.startswith("-") and "=" not in previous and not _not_text(previous):
            name = f"the value of {previous}"
        else:
            name = f"argument {index + 1}"
        raise UsageError(f"{name} {where}; pass UTF-8 text")
    for variable in READ_ENVIRONMENT:
        where = _not_text(environ.get(variable, ""))
        if where is not None:
            raise UsageError(f"the environment variable {variable} {where}; set it to UTF-8 text or "
                             "unset it")


def main(argv: Sequence[str] | None = None) -> int:
    parser: argparse.ArgumentParser | None = None
    given = sys.argv[1:] if argv is None else list(argv)
    try:
        check_text_input(given, os.environ)
    except UsageError as exc:
        sys.stderr.write(f"kvswitch: {exc}\n")
        return exc.exit_code
    args = gui_only_args(given)
    if args is None:
        parser = build_parser(command_modules(given))
        if "sweep" in given:  # its --vary values start with '-' as people type them (--vary -np=1,4)
            from kvswitch.commands.sweep import joined_vary_values  # noqa: PLC0415 - loaded by the parser

            given = joined_vary_values(given)
        args = parser.parse_args(given)
    try:
        if args.command is None:
            return _launch_gui(args, parser)
        result: int = args.func(args)
        return result
    except KvSwitchError as exc:
        sys.stderr.write(f"kvswitch: {shown(str(exc))}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("KVSWITCH_DEBUG"):
            raise
        name = type(exc).__name__
        sys.stderr.write(f"kvswitch: internal error: {name}: {shown(str(exc))} (KVSWITCH_DEBUG=1 shows "
                         "details)\n")
        return 70


def shown(message: str) -> str:
    """An error message as it may reach the terminal: secrets masked (``core.redact``)."""
    from kvswitch.core.knownsecrets import hide_known  # noqa: PLC0415 - only on an error: log scan stays lean
    from kvswitch.core.redact import mask_text  # noqa: PLC0415
    from kvswitch.core.text import for_terminal  # noqa: PLC0415

    return for_terminal(mask_text(hide_known(message)))


def gui_main(argv: Sequence[str] | None = None) -> int:
    """``kvswitch-gui`` (no console on Windows): the same parser and the same one-line errors as
    ``kvswitch``, so ``kvswitch-gui use nosuch`` says what is wrong instead of printing a traceback."""
    return main(argv)


def _launch_gui(args: argparse.Namespace, parser: argparse.ArgumentParser | None) -> int:
    try:
        from kvswitch.ui.app import run_app  # noqa: PLC0415 - Qt is imported only when the window is wanted
    except ImportError:
        (parser or build_parser()).print_help()
        return 0
    return run_app(args)
