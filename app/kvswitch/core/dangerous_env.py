"""Environment names that change how a shell, the dynamic loader or a client's interpreter behaves.

A profile's env block is exported by the shell targets and written into Claude Code's settings, so
``PROMPT_COMMAND=...`` runs at the next bash prompt, ``LD_PRELOAD`` loads a library into every
program and ``NODE_OPTIONS=--require ...`` runs code inside Claude Code. Such names are only accepted
when the user confirms them; an imported file never gets that confirmation implicitly.
"""

from __future__ import annotations

from collections.abc import Iterable

_SHELL_RUNS = "the shell runs or evaluates its value (prompt, startup file)"
_SHELL_PARSES = "changes how the shell parses commands, finds files or starts up"
_FINDS_PROGRAMS = "decides which programs and files every command finds"
_LOADER = "makes the dynamic loader load code into every program"
_INTERPRETER = "makes an interpreter (Node for Claude Code, Python, Perl, Ruby, Java) load or run code"

#: exact names (compared upper-cased: Windows environment names ignore case)
DANGEROUS_NAMES: dict[str, str] = {
    **dict.fromkeys(
        (
            "PROMPT_COMMAND",
            "PS0",
            "PS1",
            "PS2",
            "PS3",
            "PS4",
            "PROMPT",
            "PROMPT2",
            "PROMPT3",
            "PROMPT4",
            "RPROMPT",
            "RPROMPT2",
            "RPS1",
            "RPS2",
            "ENV",
            "BASH_ENV",
        ),
        _SHELL_RUNS,
    ),
    **dict.fromkeys(
        (
            "IFS",
            "SHELLOPTS",
            "BASHOPTS",
            "ZDOTDIR",
            "CDPATH",
            "FPATH",
            "GLOBIGNORE",
            "SHELL",
            "HOME",
            "INPUTRC",
            "HISTFILE",
        ),
        _SHELL_PARSES,
    ),
    **dict.fromkeys(("PATH", "PATHEXT", "COMSPEC", "GCONV_PATH"), _FINDS_PROGRAMS),
    **dict.fromkeys(
        (
            "NODE_OPTIONS",
            "NODE_PATH",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONSTARTUP",
            "PERL5LIB",
            "PERL5OPT",
            "PERLLIB",
            "RUBYOPT",
            "RUBYLIB",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
        ),
        _INTERPRETER,
    ),
}
#: prefixes (upper-cased) of whole families
DANGEROUS_PREFIXES: dict[str, str] = {
    "LD_": _LOADER,
    "DYLD_": _LOADER,
    "BASH_FUNC_": "defines a bash function that replaces a command",
}
#: fish's own variables are lower-case and case-sensitive (fish_function_path, fish_prompt...)
FISH_PREFIX = "fish_"


def dangerous_reason(name: str) -> str | None:
    """Why ``name`` is dangerous to export, or ``None`` when it is an ordinary variable."""
    upper = name.upper()
    if upper in DANGEROUS_NAMES:
        return DANGEROUS_NAMES[upper]
    for prefix, reason in DANGEROUS_PREFIXES.items():
        if upper.startswith(prefix):
            return reason
    if name.startswith(FISH_PREFIX):
        return "a fish setting (functions, prompt, key bindings) that fish acts on"
    return None


def dangerous_env(names: Iterable[str]) -> dict[str, str]:
    """The dangerous names among ``names``, each with its reason, in the order given."""
    return {name: reason for name in names if (reason := dangerous_reason(name)) is not None}
