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
from collections.abc import Sequence

from kvswitch import __version__
from kvswitch.core.errors import KvSwitchError

#: modules that expose ``register(subparsers) -> None``; each adds parsers with ``func=handler(args) -> int``
COMMAND_MODULES = (
    "kvswitch.commands.profiles",
    "kvswitch.commands.switching",
    "kvswitch.commands.presets",
    "kvswitch.commands.log",
    "kvswitch.commands.verify",
    "kvswitch.commands.platform",
    "kvswitch.commands.gateway",
)
#: commands whose module registers nothing else and needs none of the others: ``kvswitch log scan`` on a
#: big file in a script loop should not pay for importing the switching engine, pydantic and httpx
STANDALONE_COMMANDS = {"log": "kvswitch.commands.log"}


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


def main(argv: Sequence[str] | None = None) -> int:
    parser: argparse.ArgumentParser | None = None
    args = gui_only_args(sys.argv[1:] if argv is None else argv)
    if args is None:
        parser = build_parser(command_modules(sys.argv[1:] if argv is None else argv))
        args = parser.parse_args(argv)
    try:
        if args.command is None:
            return _launch_gui(args, parser)
        result: int = args.func(args)
        return result
    except KvSwitchError as exc:
        sys.stderr.write(f"kvswitch: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("KVSWITCH_DEBUG"):
            raise
        name = type(exc).__name__
        sys.stderr.write(f"kvswitch: internal error: {name}: {exc} (KVSWITCH_DEBUG=1 shows details)\n")
        return 70


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
