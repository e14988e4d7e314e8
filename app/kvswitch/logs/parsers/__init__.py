"""Per-server line parsers and which of them run for a given profile kind.

Without a hint every parser runs on every line, so a log that switches format mid-way (LM Studio
swapping engines, Ollama 0.30 starting llama-server) is still understood.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from kvswitch.logs.parsers import llama_cpp, lmcache, lmstudio, ollama, sglang, vllm
from kvswitch.logs.parsers.base import Fact, Parsed, What

ParseFn = Callable[[str], Parsed | None]

_MODULES = {
    "llama.cpp": llama_cpp,
    "lm-studio": lmstudio,
    "vllm": vllm,
    "lmcache": lmcache,
    "sglang": sglang,
    "ollama": ollama,
}

#: the format the byte-level scanner (``kvswitch.logs.fastscan``) reads: its current slot-line text
FAST_FORMAT = llama_cpp.SERVER


@functools.cache
def families() -> dict[str, tuple[str, ...]]:
    """Profile kind -> the formats its logs carry, as each module in ``kvswitch.servers`` declares them
    (LM Studio and Ollama embed llama.cpp; vLLM may run LMCache); aliases name the same family.

    Read on first use: a hint-less ``kvswitch log scan`` never loads the registry (or pydantic with it).
    """
    from kvswitch import servers  # noqa: PLC0415 - see above; servers never imports the log engine

    return {
        name: server.log_formats
        for server in servers.all() if server.log_formats
        for name in (server.name, *server.aliases)
    }


#: the kinds ``--kind`` accepts: one per format (each names its family)
KINDS = tuple(_MODULES)


def family(kind_hint: str | None) -> tuple[str, ...]:
    """Parser names for a profile kind; unknown or missing kinds (``custom``, ``auto``) get all of them."""
    if kind_hint and kind_hint.lower() in families():
        return families()[kind_hint.lower()]
    return ("lm-studio", "vllm", "lmcache", "sglang", "ollama", "llama.cpp")


@dataclass(frozen=True)
class AnyPattern:
    """Several patterns searched one after another: each starts with a literal (a line start is ``\\A`` or
    ``\\n``), so the regex engine jumps between that literal's occurrences. One alternation of them all
    has no common start and tries every position (five times slower on a sample)."""

    patterns: tuple[re.Pattern[bytes], ...]

    def search(self, text: bytes) -> re.Match[bytes] | None:
        for pattern in self.patterns:
            if found := pattern.search(text):
                return found
        return None


def general_only() -> AnyPattern:
    """Text that only the general path understands, of any format: each module's ``GENERAL_ONLY``.

    One match in a sampled part of a file sends the whole file to the general path; the fast format's
    own share is its older eras and the JSON lines the byte scanner cannot read.
    """
    return AnyPattern(tuple(re.compile(part) for module in _MODULES.values() for part in module.GENERAL_ONLY))


def parsers_for(kind_hint: str | None) -> list[ParseFn]:
    return [_MODULES[name].parse for name in family(kind_hint)]


def anchors_for(kind_hint: str | None) -> tuple[str, ...]:
    """Substrings at least one of which is in every line that yields a fact (the fast scan's prefilter)."""
    found: list[str] = []
    for name in family(kind_hint):
        for anchor in _MODULES[name].ANCHORS:
            if anchor not in found:
                found.append(anchor)
    return tuple(found)


#: the formats that print the server's own relative clock in front of a line (``server_clock_ms``)
_CLOCKED = tuple(module.server_clock_ms for module in _MODULES.values() if hasattr(module, "server_clock_ms"))


def server_clock_ms(text: str) -> float | None:
    """A line's relative server clock (ms since the server started), for logs that print no wall-clock
    time, or ``None`` when no format's clock is in front of the line."""
    for read in _CLOCKED:
        if (clock := read(text)) is not None:
            return clock
    return None


def periodic_summaries(lines: list[str], kind_hint: str | None = None) -> list[str]:
    """What formats that print no per-request line still tell about a log (``periodic_summary``)."""
    found = []
    for name in family(kind_hint):
        summarize = getattr(_MODULES[name], "periodic_summary", None)
        if summarize is not None and (text := summarize(lines)) is not None:
            found.append(text)
    return found


def server_name(kind_hint: str | None) -> str:
    """Name for events assembled from llama.cpp lines: the product the user runs, when known."""
    names = family(kind_hint)
    return names[0] if kind_hint and names[0] in ("lm-studio", "ollama") else "llama.cpp"


__all__ = ["FAST_FORMAT", "Fact", "Parsed", "What", "KINDS", "family", "general_only", "parsers_for",
           "anchors_for", "periodic_summaries", "server_clock_ms", "server_name"]
