"""Environment names that make a program run code, or send its traffic elsewhere: they need a yes.

A profile's env block is exported by the shell targets and written into Claude Code's settings, so
every program started from that shell or by Claude Code sees it. **The rule**: a name is dangerous when
its value can

1. make a program run code or a command the user did not type: the shell evaluates it (prompts,
   startup files) or parses differently; a program runs it as a command (``EDITOR``, ``PAGER``,
   ``BROWSER``, ``LESSOPEN``, ``GIT_SSH_COMMAND``, every ``GIT_*_COMMAND``, ``*_ASKPASS``); a program
   reads configuration from it that can run commands (``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` set
   ``core.fsmonitor``, which ``git status`` runs); an interpreter loads or runs code from it (Node for
   Claude Code, every ``PYTHON*`` setting: ``PYTHONWARNINGS`` imports a module, ``PYTHONBREAKPOINT``
   calls one; Perl, Ruby, Java); it decides which programs, libraries or files are found or loaded
   (``PATH``, ``LD_*``, ``DYLD_*``, ``GCONV_PATH``, ``LOCPATH``, ``GLIBC_TUNABLES``, ``HOSTALIASES``);
2. redirect or intercept network traffic: a proxy (every ``*_PROXY`` name, either case, and
   ``NO_PROXY``), a trust store or TLS check (``SSL_CERT_FILE``, ``SSL_CERT_DIR``,
   ``NODE_EXTRA_CA_CERTS``, ``NODE_TLS_REJECT_UNAUTHORIZED``, ``REQUESTS_CA_BUNDLE``,
   ``CURL_CA_BUNDLE``, ``GIT_SSL_*``), or a key log (``SSLKEYLOGFILE``).

Such names are only accepted when the user confirms them (``--allow-dangerous-env``, the window's
"Allow risky environment variables" box); an imported file never gets that confirmation implicitly.
Names are compared upper-cased (Windows environment names ignore case; ``http_proxy`` is read in lower
case on Unix), except fish's own lower-case ``fish_*`` variables.
"""

from __future__ import annotations

from collections.abc import Iterable

_SHELL_RUNS = "the shell runs or evaluates its value (prompt, startup file)"
_SHELL_PARSES = "changes how the shell parses commands, finds files or starts up"
_FINDS_PROGRAMS = "decides which programs and files every command finds"
_LOADER = "makes the dynamic loader load code into every program"
_LIBC = "makes the C library load files or change its behaviour in every program"
_INTERPRETER = "makes an interpreter (Node for Claude Code, Python, Perl, Ruby, Java) load or run code"
_RUNS_COMMAND = "a program runs its value as a command (editor, pager, browser, password prompt)"
_GIT_RUNS = "git runs its value as a command or reads settings from it that run commands"
_PROXY = "sends network traffic through another host (a proxy), or changes which hosts bypass it"
_TRUST = "changes which TLS certificates are trusted or whether they are checked, or logs TLS keys"

#: exact names (compared upper-cased: Windows environment names ignore case)
DANGEROUS_NAMES: dict[str, str] = {
    **dict.fromkeys(("PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT", "PROMPT2", "PROMPT3",
                     "PROMPT4", "RPROMPT", "RPROMPT2", "RPS1", "RPS2", "ENV", "BASH_ENV"), _SHELL_RUNS),
    **dict.fromkeys(("IFS", "SHELLOPTS", "BASHOPTS", "ZDOTDIR", "CDPATH", "FPATH", "GLOBIGNORE", "SHELL",
                     "HOME", "INPUTRC", "HISTFILE"), _SHELL_PARSES),
    **dict.fromkeys(("PATH", "PATHEXT", "COMSPEC", "GCONV_PATH"), _FINDS_PROGRAMS),
    **dict.fromkeys(("GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "RES_OPTIONS",
                     "LOCALDOMAIN", "MALLOC_CONF"), _LIBC),
    **dict.fromkeys(("NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "PERL5LIB", "PERL5OPT",
                     "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
                     "JDK_JAVA_OPTIONS", "CLASSPATH"), _INTERPRETER),
    **dict.fromkeys(("EDITOR", "VISUAL", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "BROWSER", "LESSOPEN",
                     "LESSCLOSE", "LESSKEY", "SSH_ASKPASS", "SUDO_ASKPASS", "TERMINAL"), _RUNS_COMMAND),
    **dict.fromkeys(("GIT_SSH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_ASKPASS",
                     "GIT_EXEC_PATH", "GIT_EXTERNAL_DIFF", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE",
                     "GIT_COMMON_DIR"), _GIT_RUNS),
    "NO_PROXY": _PROXY,
    **dict.fromkeys(("SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED",
                     "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSLKEYLOGFILE", "PYTHONHTTPSVERIFY"), _TRUST),
}
#: prefixes (upper-cased) of whole families
DANGEROUS_PREFIXES: dict[str, str] = {
    "LD_": _LOADER,
    "DYLD_": _LOADER,
    "BASH_FUNC_": "defines a bash function that replaces a command",
    "GIT_CONFIG": _GIT_RUNS,  # GIT_CONFIG, _COUNT, _KEY_n, _VALUE_n, _PARAMETERS, _GLOBAL, _SYSTEM
    "GIT_SSL_": _TRUST,
    "PYTHON": "Python reads it at startup (PYTHONWARNINGS imports a module, PYTHONBREAKPOINT calls one, "
              "PYTHONSTARTUP runs a file)",
}
#: suffixes (upper-cased) of whole families
DANGEROUS_SUFFIXES: dict[str, str] = {
    "_PROXY": _PROXY,  # HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, FTP_PROXY, GRPC_PROXY... and lower case
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
    if upper.startswith("GIT_") and upper.endswith("_COMMAND"):
        return _GIT_RUNS  # GIT_SSH_COMMAND, GIT_PROXY_COMMAND...
    for suffix, reason in DANGEROUS_SUFFIXES.items():
        if upper.endswith(suffix):
            return reason
    if name.startswith(FISH_PREFIX):
        return "a fish setting (functions, prompt, key bindings) that fish acts on"
    return None


def dangerous_env(names: Iterable[str]) -> dict[str, str]:
    """The dangerous names among ``names``, each with its reason, in the order given."""
    return {name: reason for name in names if (reason := dangerous_reason(name)) is not None}
