"""One home per server kind: the registry every other package asks instead of switching on the kind.

``get(kind)`` gives a kind's :class:`~kvswitch.servers.base.Server`; ``all()`` every one, in the order
port answers are tried (the most specific routes first). The lookups below (by process, by port answer,
by cache source, by metric) are what presets, detection, verification and log-format selection use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from kvswitch.core.models import ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV, Preset
from kvswitch.servers import anthropic, custom, llama_cpp, lm_studio, ollama, openai_compatible, sglang, vllm
from kvswitch.servers.anthropic import (
    API_VERSION_HEADER,
    MESSAGES_API,
    MESSAGES_API_LABEL,
    VENDOR_MESSAGES_SEGMENT,
)
from kvswitch.servers.base import AnswerReader, CacheCounter, PortFacts, Reading, Server
from kvswitch.servers.identify import LOOPBACK_HOSTS, Get, Identified, identify_among, server_for_url_among
from kvswitch.servers.process_match import process_kind_among

#: API ids other packages speak without naming the server that defines them: the Messages API, and
#: the native prompt and chat APIs of the servers that have one
NATIVE_COMPLETION_API = llama_cpp.COMPLETION_API
NATIVE_CHAT_API = ollama.CHAT_API
#: the kind a new profile, the log tracker and the GUI smoke test start from (the most common local server)
DEFAULT_LOCAL_KIND = llama_cpp.SERVER.kind
#: an example server command for a settings sweep (the default local kind's)
SWEEP_EXAMPLE = llama_cpp.SWEEP_EXAMPLE
#: the kind Claude Code talks to when nothing sets its base URL (its own vendor's API)
CLAUDE_DEFAULT_KIND = anthropic.SERVER.kind
#: the lint code of a Codex target on a kind that does not serve the Responses API (a stable id)
NO_RESPONSES_API_LINT = anthropic.CODEX_LINT_CODE

#: Port answers are tried in this order: llama-server's /props first (it is the most common and its
#: shape the most specific), vLLM's bare /version last.
_SERVERS: tuple[Server, ...] = (
    llama_cpp.SERVER,
    ollama.SERVER,
    sglang.SERVER,
    lm_studio.SERVER,
    vllm.SERVER,
    anthropic.SERVER,
    openai_compatible.SERVER,
    custom.SERVER,
)
_BY_KIND: dict[ProfileKind, Server] = {server.kind: server for server in _SERVERS}
_BY_NAME: dict[str, Server] = {
    name.lower(): server for server in _SERVERS for name in (server.name, *server.aliases)
}

#: where a local log line or the log engine's share came from (ranked after the server's own numbers)
LOG_SOURCE = "log"
LOG_TRUST = 80


def all() -> tuple[Server, ...]:  # noqa: A001 - the registry's natural name
    """Every known server, in the order port answers are tried."""
    return _SERVERS


def identify(get: Get, servers: Iterable[Server] | None = None) -> Identified | None:
    """The first server (of ``servers``, default every known one) whose route answers in its shape."""
    return identify_among(get, _SERVERS if servers is None else servers)


def kind_for_url(url: str) -> ProfileKind:
    """The kind ``url`` most likely is, from the address alone (a hosted API's host, a local server's
    default port on loopback); ``custom`` when neither says."""
    found = server_for_url_among(url, _SERVERS)
    return found.kind if found is not None else custom.SERVER.kind


def process_kind(argv: Sequence[str], servers: Iterable[Server] | None = None) -> ProfileKind | None:
    """Which known server ``argv`` runs, or ``None`` for anything else."""
    return process_kind_among(argv, _SERVERS if servers is None else servers)


def renderers() -> tuple[Server, ...]:
    """Servers that can render a request into their prompt tokens, for the token-level diagnosis."""
    return tuple(server for server in _SERVERS if server.rendering is not None)


def get(kind: ProfileKind | str) -> Server:
    """The server of ``kind`` (a :class:`ProfileKind`, its value or an alias); ``KeyError`` if unknown."""
    if isinstance(kind, ProfileKind):
        return _BY_KIND[kind]
    found = _BY_NAME.get(str(kind).lower())
    if found is None:
        raise KeyError(kind)
    return found


def find(name: str | None) -> Server | None:
    """Like :func:`get`, but ``None`` for a missing or unknown name (``auto``, ``unknown``)."""
    if not name:
        return None
    try:
        return get(name)
    except KeyError:
        return None


def local() -> tuple[Server, ...]:
    """Servers that run on the user's machine, keep a KV cache and have a default port."""
    return tuple(server for server in _SERVERS if server.local)


def default_ports() -> dict[ProfileKind, int]:
    return {server.kind: server.port for server in local() if server.port is not None}


def preset(kind: ProfileKind | str, env: Mapping[str, str] | None = None) -> Preset:
    """The preset for ``kind``; log locations are resolved against ``env``'s HOME (default: os.environ)."""
    return get(ProfileKind(kind)).preset(env)


class _Presets(Mapping[ProfileKind, Preset]):
    """Every kind's preset, resolved on each access so a changed HOME (tests, ``--config-dir``) is seen."""

    def __getitem__(self, kind: ProfileKind | str) -> Preset:
        try:
            return preset(kind)
        except ValueError:
            raise KeyError(kind) from None

    def __iter__(self) -> Iterator[ProfileKind]:
        return iter(ProfileKind)

    def __len__(self) -> int:
        return len(ProfileKind)


#: Every kind's preset (a read-only mapping ``ProfileKind -> Preset``).
PRESETS: Mapping[ProfileKind, Preset] = _Presets()


def answer_readers() -> tuple[AnswerReader, ...]:
    """Every way an answer carries cache numbers, most trusted first (each reader runs once)."""
    ranked = sorted((min(s.trust for s in server.answer_sources), server.answer_reader)
                    for server in _SERVERS if server.answer_reader and server.answer_sources)
    return tuple(dict.fromkeys(reader for _, reader in ranked))


def cache_counters() -> tuple[CacheCounter, ...]:
    """Every ``/metrics`` cache counter any server exposes."""
    return tuple(counter for server in _SERVERS for counter in server.metrics.counters)


def request_meters() -> tuple[tuple[CacheCounter, tuple[str, ...]], ...]:
    """Each server's ``/metrics`` counter pair with the gauges that show it idle: the counters'
    difference between two idle readings is the prompt of the requests that ran in between."""
    return tuple((counter, server.metrics.in_flight) for server in _SERVERS if server.metrics.in_flight
                 for counter in server.metrics.counters)


def metrics_markers() -> tuple[str, ...]:
    """Substrings of a ``/metrics`` page showing that the server counts cache reuse there."""
    return tuple(marker for server in _SERVERS for marker in server.metrics.markers)


def source_priority() -> tuple[str, ...]:
    """Cache-number sources, most trusted first: a per-request number beats a shared counter or a log."""
    ranked = [(source.trust, source.name) for server in _SERVERS for source in server.answer_sources]
    ranked += [(counter.trust, "metrics " + counter.cached.removesuffix("_total"))
               for counter in cache_counters()]
    ranked.append((LOG_TRUST, LOG_SOURCE))
    return tuple(dict.fromkeys(name for _, name in sorted(ranked)))


def infer_reuse(cold: list[Reading], warm: list[Reading]) -> tuple[Reading, str] | None:
    """The first server-specific inference of reuse from readings that count no cached tokens."""
    for server in _SERVERS:
        if server.infer_reuse is not None:
            inferred = server.infer_reuse(cold, warm)
            if inferred is not None:
                return inferred
    return None


def by_owner(owned_by: str) -> Server | None:
    """The server whose ``/v1/models`` entries say ``owned_by``."""
    for server in _SERVERS:
        if owned_by in server.owned_by:
            return server
    return None


def native_model_list(kind: ProfileKind | str) -> tuple[str, str, str] | None:
    """A server's own model list (route, list key, id key) when it has one instead of ``/v1/models``."""
    found = find(kind.value if isinstance(kind, ProfileKind) else kind)
    return ollama.MODEL_LIST if found is not None and found.kind == ollama.SERVER.kind else None


def codex_provider_ids() -> frozenset[str]:
    """The provider ids Codex has built in for local servers."""
    return frozenset({ollama.CODEX_PROVIDER_ID, lm_studio.CODEX_PROVIDER_ID})


def routes() -> dict[str, str]:
    """API routes particular servers serve (``api id -> path``)."""
    return {api: path for server in _SERVERS for api, path in server.routes}


__all__ = [
    "API_VERSION_HEADER", "CACHE_SAFE_ENV", "CLAUDE_DEFAULT_KIND", "DEFAULT_LOCAL_KIND", "LOOPBACK_HOSTS",
    "SWEEP_EXAMPLE",
    "MESSAGES_API", "MESSAGES_API_LABEL", "NATIVE_CHAT_API", "NATIVE_COMPLETION_API", "NO_RESPONSES_API_LINT",
    "PRESETS", "VENDOR_MESSAGES_SEGMENT", "Identified", "PortFacts", "Preset", "Reading", "Server", "all",
    "answer_readers", "by_owner", "cache_counters", "codex_provider_ids", "default_ports", "find", "get",
    "identify", "infer_reuse", "kind_for_url", "local", "metrics_markers", "native_model_list", "preset",
    "process_kind", "renderers", "request_meters", "routes", "source_priority",
]
