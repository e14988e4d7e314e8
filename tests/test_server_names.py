"""Server knowledge lives in ``kvswitch.servers``: a bound on the modules elsewhere that name a server.

Counting rule: a module *names a server* when its text (code, comments and docstrings alike) matches
``SERVER_NAMES`` case-insensitively, after removing the Claude Code client's own vocabulary
(``ANTHROPIC_*`` environment variables, the ``@anthropic-ai/`` npm scope, the
``x-anthropic-billing-header`` block), which describes the client, not a server, and the wire protocol
``"anthropic"`` (Anthropic Messages), which many servers and vendors speak. Not counted:
``kvswitch/servers/`` itself, the modules that implement a log format (``logs/parsers/*``, and
``logs/blocks.py`` / ``logs/fastscan.py``, the byte-level scanner of llama.cpp's text format): a
format is named after the program that prints it, and several servers print the same one; and the
protocol bridges (``gateway/bridges/``), which implement wire protocols named after their authors.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "app" / "kvswitch"

SERVER_NAMES = re.compile(
    r"ollama|lm[ _-]?studio|vllm|lmcache|sglang|llama[._-]cpp|llamacpp|llama-server|anthropic", re.IGNORECASE)
CLIENT_VOCABULARY = re.compile(
    r"ANTHROPIC_[A-Z_]+|@anthropic-ai/|x-anthropic-billing-header|[\"']anthropic[\"']|Anthropic Messages")
FORMAT_MODULES = ("logs/parsers/", "logs/blocks.py", "logs/fastscan.py", "gateway/bridges/")

#: Modules outside ``servers/`` that still name a server, and why. The set may only shrink: a new
#: module that needs to know about a server asks ``kvswitch.servers`` instead (a kind from a URL:
#: ``kind_for_url``; what a kind serves: ``Server`` fields; what to tell the user: ``Server.advice``),
#: or, for log text, the format modules (``logs.parsers``: each format's ``GENERAL_ONLY`` text).
STILL_NAMING = {
    "core/profile_rules.py",  # ProfileKind: the kinds themselves (core cannot import servers)
    # the logo set's file names, keyed by catalog id and kind; read after the first paint, where the
    # window may not import the registry yet (the logo belongs in each server module and catalog entry)
    "ui/widgets/icons.py",
    # the kinds' and APIs' display names in both languages: lupdate collects only literal strings
    "ui/profiles/identity.py",
}


def naming_modules() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("servers/") or rel.startswith(FORMAT_MODULES):
            continue
        text = CLIENT_VOCABULARY.sub("", path.read_text(encoding="utf-8"))
        if SERVER_NAMES.search(text):
            found.add(rel)
    return found


def test_no_new_module_names_a_server() -> None:
    assert naming_modules() - STILL_NAMING == set()


def test_the_list_of_exceptions_is_current() -> None:
    """A module that stopped naming servers leaves the list, so the bound keeps tightening."""
    assert STILL_NAMING - naming_modules() == set()
