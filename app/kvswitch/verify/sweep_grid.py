"""The sweep's grid: ``--vary`` options, their cartesian product, and each setting's command lines.

A ``--vary`` names a flag of the server's command (``-np=1,4``, ``--cache-ram=0,default``) or of the
cache tier's command the sweep starts beside it, written ``TIER.FLAG`` (the tier's name, a dot, the flag
without its dashes: ``NAME.chunk-size=128,256`` sets ``--chunk-size`` on the tier's command). The two
spellings cannot be confused: a server flag starts with a dash, a tier's with a letter. Each setting is
the command with the varied flags removed and appended with the setting's values (``default`` leaves the
flag out, ``set`` passes it alone, as a switch); a tier's flags go to the tier's command only.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kvswitch.core.errors import UsageError

#: a ``--vary`` value that leaves the flag out (the server's own default)
DEFAULT = "default"
#: a ``--vary`` value that passes the flag alone (a switch such as ``--swa-full``)
SWITCH = "set"
_FLAG = re.compile(r"^--?[A-Za-z][A-Za-z0-9_.-]*$")
_TIER_FLAG = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\.(--?)?([A-Za-z][A-Za-z0-9_.-]*)$")
_LOOKS_LIKE_FLAG = re.compile(r"^--?[A-Za-z]")

#: one setting: (key, value) per ``--vary``, the key as ``Vary.key`` spells it
Assignment = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Vary:
    """A varied flag and its values; ``owner`` is the tier whose command takes it (``None``: the server)."""

    flag: str
    values: tuple[str, ...]
    owner: str | None = None

    @property
    def key(self) -> str:
        """How the setting names it: the server's flag as is, a tier's as ``TIER.flag``."""
        return f"{self.owner}.{self.flag.lstrip('-')}" if self.owner else self.flag


def parse_vary(text: str) -> Vary:
    """``FLAG=V1,V2,...`` (``--vary=-np=1,4``) or ``TIER.FLAG=V1,V2``: a usage error naming what is wrong."""
    flag, sep, values = text.partition("=")
    owner: str | None = None
    tier_flag = _TIER_FLAG.match(flag)
    if sep and tier_flag is not None:
        owner, flag = tier_flag.group(1), (tier_flag.group(2) or "--") + tier_flag.group(3)
    elif not sep or not _FLAG.match(flag):
        raise UsageError(f"--vary {text!r}: write FLAG=V1,V2 with the flag as the server spells it, "
                         "e.g. --vary=-np=1,4 or --vary=--cache-ram=0,default (a cache tier's flag: "
                         "TIER.FLAG=V1,V2, e.g. the tier's --chunk-size as TIER.chunk-size=128,256)")
    items = tuple(v.strip() for v in values.split(","))
    if not all(items):
        raise UsageError(f"--vary {text!r}: an empty value (use '{DEFAULT}' to leave {flag} out)")
    if len(set(items)) != len(items):
        raise UsageError(f"--vary {text!r}: a value is given twice")
    return Vary(flag, items, owner)


def grid(varies: Sequence[Vary]) -> list[Assignment]:
    """Every setting: the cartesian product of the values, the first ``--vary`` changing slowest."""
    keys = [v.key for v in varies]
    if len(set(keys)) != len(keys):
        raise UsageError("--vary: the same flag is varied twice; give all its values in one --vary")
    products = itertools.product(*(v.values for v in varies))
    return [tuple(zip(keys, values, strict=True)) for values in products]


def owners(varies: Sequence[Vary]) -> set[str]:
    """The tiers whose flags the grid varies."""
    return {v.owner for v in varies if v.owner}


def split_key(key: str) -> tuple[str | None, str]:
    """A setting's key as (owner, flag): ``-np`` is the server's ``-np``, ``T.chunk-size`` tier T's
    ``--chunk-size`` (``T.-x`` its ``-x``)."""
    if key.startswith("-"):
        return None, key
    owner, _, rest = key.partition(".")
    return owner, rest if rest.startswith("-") else "--" + rest


def without_flag(argv: Sequence[str], flag: str) -> list[str]:
    """``argv`` without ``flag`` (as ``flag value``, ``flag=value`` or a lone switch)."""
    kept: list[str] = []
    skip_value = False
    for word in argv:
        if skip_value:
            skip_value = False
            if not _LOOKS_LIKE_FLAG.match(word):
                continue  # the removed flag's value (``-1`` is a value, ``-c`` the next flag)
        if word == flag:
            skip_value = True
            continue
        if word.startswith(flag + "="):
            continue
        kept.append(word)
    return kept


def setting_argv(argv: Sequence[str], assignment: Assignment, owner: str | None = None) -> list[str]:
    """The command for one setting — the server's (``owner`` None) or tier ``owner``'s: each of its
    varied flags removed, then appended with its value; the other command's flags are left alone."""
    mine = [(flag, value) for key, value in assignment
            for who, flag in [split_key(key)] if who == owner]
    out = list(argv)
    for flag, _value in mine:
        out = without_flag(out, flag)
    for flag, value in mine:
        if value == SWITCH:
            out.append(flag)
        elif value != DEFAULT:
            out += [flag, value]
    return out


def label(assignment: Assignment) -> str:
    return ", ".join(f"{key} {value}" for key, value in assignment)
