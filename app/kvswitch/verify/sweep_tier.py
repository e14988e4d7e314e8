"""The cache tier a sweep starts beside the server: which tier a command runs, its ports, its readiness,
and the tier columns of a row.

Some servers keep a second cache in a process of its own (``Server.cache_tiers``: its program and
subcommand, the flag of its HTTP port). Its settings (chunk size, the size of its memory tier) are what
people tune next, so ``kvswitch sweep --tier-cmd CMD`` starts that process first for every setting,
waits until its own ``/metrics`` answers, then starts the server, measures, and stops both (the server
first). ``TIER.FLAG`` in ``--vary`` goes to this command. Every port the command names (and the default
metrics port when it names none) must be free before anything starts: the sweep never restarts a tier
it did not start, as it never restarts a server.

The row's tier columns come from verify's own per-tier account of the warm request (``tiers``), whose
keys name the tiers; only their suffixes are read here (``_l1`` the memory tier, ``_l2`` the tiers behind
it, ``_prefix_cache`` the server's own cache), so no tier is named in this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kvswitch import servers
from kvswitch.core.errors import UsageError
from kvswitch.servers.base import CacheTier
from kvswitch.servers.process_match import program_name, script_argv
from kvswitch.servers.tier_sources import tier_metrics_url

_PORT_FLAG = re.compile(r"^--?[\w-]*port$")
_ANY_HOST = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class TierCommand:
    """The tier's command as the user gave it and the tier it runs."""

    tier: CacheTier
    argv: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """What ``TIER.`` may be in ``--vary`` (the tier's name, its program's name)."""
        return tuple(dict.fromkeys((self.tier.name, self.tier.program)))


def known_tiers() -> list[CacheTier]:
    return [tier for server in servers.all() for tier in server.cache_tiers if tier.program]


def tier_command(argv: Sequence[str]) -> TierCommand:
    """The tier ``argv`` runs (``PROGRAM SUBCOMMAND ...``); a usage error naming the known ones."""
    words = list(script_argv(list(argv)))
    for tier in known_tiers():
        if program_name(words) == tier.program and words[1:2] == [tier.subcommand]:
            return TierCommand(tier, tuple(argv))
    known = ", ".join(f"'{t.program} {t.subcommand} ...'" for t in known_tiers()) or "none"
    raise UsageError(f"--tier-cmd {program_name(words) or '(empty)'}: not a cache tier's server command "
                     f"(known: {known})")


def check_owners(command: TierCommand | None, owners: set[str]) -> None:
    """Every ``TIER.FLAG`` in ``--vary`` names the tier whose command was given."""
    if not owners:
        return
    if command is None:
        raise UsageError(f"--vary {sorted(owners)[0]}.FLAG varies a cache tier's setting: give the tier's "
                         "command with --tier-cmd \"PROGRAM SUBCOMMAND ...\"; the sweep starts it first")
    unknown = owners - set(command.names)
    if unknown:
        raise UsageError(f"--vary {sorted(unknown)[0]}.FLAG: the tier command runs {command.tier.label}; "
                         f"write its flags as {command.names[0]}.FLAG")


def tier_host(argv: Sequence[str], fallback: str) -> str:
    """Where the tier listens: its host flag's address, the server's host when it binds every address."""
    bound = _flag_value(argv, "--host")
    return fallback if bound is None or bound in _ANY_HOST else bound


def ready_url(command: TierCommand, argv: Sequence[str], host: str) -> str:
    """The tier's own ``/metrics`` for this setting's command: 200 there means it is up."""
    return tier_metrics_url(command.tier, tier_host(argv, host), [list(argv)])


def ports(command: TierCommand, argv: Sequence[str], host: str) -> list[tuple[str, int]]:
    """Every port the tier's command listens on (each ``--*port N``), its metrics port included."""
    where = tier_host(argv, host)
    found = [int(value) for flag, value in _flags(argv) if _PORT_FLAG.match(flag) and value.isdigit()]
    metrics = urlsplit(ready_url(command, argv, host)).port
    if metrics is not None:
        found.append(metrics)
    return [(where, port) for port in dict.fromkeys(found)]


def _flags(argv: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for index, word in enumerate(argv):
        if word.startswith("-") and "=" in word:
            flag, _, value = word.partition("=")
            pairs.append((flag, value))
        elif word.startswith("-") and index + 1 < len(argv):
            pairs.append((word, argv[index + 1]))
    return pairs


def _flag_value(argv: Sequence[str], flag: str) -> str | None:
    return next((value for name, value in _flags(argv) if name == flag), None)


@dataclass(frozen=True)
class TierColumns:
    """The warm request's prompt tokens by where they came from (the tiers' own counters)."""

    l1_hit_tokens: int | None = None
    l2_hit_tokens: int | None = None
    server_cache_tokens: int | None = None
    computed_tokens: int | None = None
    chunk_size: int | None = None


def tier_columns(tiers: Mapping[str, Any] | None) -> TierColumns:
    """The columns from verify's ``tiers`` account (keys ``*_l1``, ``*_l2``, ``*_prefix_cache``,
    ``computed``, ``chunk_size``); all ``None`` when verify had none."""
    if not isinstance(tiers, Mapping):
        return TierColumns()

    def count(suffix: str) -> int | None:
        values = [v for k, v in tiers.items() if k.endswith(suffix) and isinstance(v, int)
                  and not isinstance(v, bool)]
        return sum(values) if values else None

    return TierColumns(l1_hit_tokens=count("_l1"), l2_hit_tokens=count("_l2"),
                       server_cache_tokens=count("_prefix_cache"), computed_tokens=count("computed"),
                       chunk_size=count("chunk_size"))
