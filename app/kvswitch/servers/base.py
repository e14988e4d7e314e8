"""What KV Switch knows about one server kind, as data every other package looks up.

Each server module builds one :class:`Server`; presets, process scanning, port identification, cache
evidence, log-format selection and advice all read it instead of switching on the kind, so adding a
server is one module (plus its tests and fixtures), not edits across the package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kvswitch.core.models import LogSource, ProfileKind, WireProtocol
from kvswitch.core.presets import CACHE_SAFE_ENV, Preset

#: ``GET path`` → ``(status, parsed JSON or None)``; status 0 when the request failed.
Get = Callable[[str], tuple[int, Any]]

#: Where a server logs on this machine, from the environment (HOME, LOCALAPPDATA) alone.
LogLocation = Callable[[Mapping[str, str] | None], LogSource | None]
#: Where it logs, looking at the disk too (existing log dirs, systemd units in ``unit_dirs``).
LogDiscovery = Callable[[Mapping[str, str] | None, Sequence[Path]], LogSource | None]


@dataclass(frozen=True)
class PortFacts:
    """What a server said about itself on its port."""

    version: str | None = None
    models: tuple[str, ...] = ()
    context: int | None = None
    parallel: int | None = None
    loading: bool = False


@dataclass(frozen=True)
class PortSignature:
    """How a port answer is recognised: ``route`` answers in a shape only this server uses.

    ``shape(status, payload)`` decides; ``facts(get, payload)`` may ask further routes for models and
    limits. ``fallback(get, status)`` recognises a server that is up but not ready (still loading).
    """

    route: str
    shape: Callable[[int, Any], bool]
    facts: Callable[[Get, Any], PortFacts]
    fallback: Callable[[Get, int], PortFacts | None] | None = None


@dataclass(frozen=True)
class ProcessSignature:
    """How a running process is recognised from its command line, and which flags tell what.

    Recognition is by ``argv[0]``'s name or the module of ``python -m``, never by a substring
    anywhere in the command line. Flag groups are tried in order; within a group the last wins.
    """

    programs: tuple[str, ...] = ()
    program_prefixes: tuple[str, ...] = ()
    #: when set, ``argv[1]`` must be this (``ollama serve``, ``vllm serve``)
    subcommand: str | None = None
    #: argv prefixes that mark a helper process that does not host the server (Electron ``--type=``)
    helper_arg_prefixes: tuple[str, ...] = ()
    python_modules: tuple[str, ...] = ()
    python_module_prefixes: tuple[str, ...] = ()
    #: ``python -m MODULE ... serve`` (the module's own CLI with a ``serve`` subcommand)
    python_serve_modules: tuple[str, ...] = ()
    host_flags: tuple[str, ...] = ("--host",)
    port_flags: tuple[str, ...] = ("--port",)
    model_flags: tuple[tuple[str, ...], ...] = ()
    #: ``PROGRAM serve MODEL``: the positional after the subcommand names the model
    positional_model: bool = False
    context_flags: tuple[str, ...] = ()
    parallel_flags: tuple[str, ...] = ()
    log_file_flags: tuple[str, ...] = ()
    log_file_env: str | None = None
    #: ``[scheme://]host[:port]`` in this env variable replaces the host/port flags
    address_env: str | None = None
    context_env: str | None = None
    parallel_env: str | None = None
    #: the server listens from a child process, whose sockets count as the app's
    listens_in_children: bool = False
    #: started by one of these kinds as a private runner: reached through the parent, not directly
    private_under: tuple[ProfileKind, ...] = ()


@dataclass(frozen=True)
class Reading:
    """One source's view of one request: ``cached`` tokens reused out of ``prompt`` tokens in total."""

    source: str
    cached: int | None
    prompt: int | None

    def describe(self) -> str:
        if self.cached is None:
            return f"{self.source}: prompt {self.prompt} tokens, no cache count"
        if self.prompt:
            return f"{self.source} = {self.cached} of {self.prompt} prompt tokens"
        return f"{self.source} = {self.cached}"


#: ``(cold readings, warm readings)`` → the inferred reading and why it is trusted, or ``None``.
ReuseInference = Callable[[list["Reading"], list["Reading"]], "tuple[Reading, str] | None"]

#: Reads the cache numbers of one answer object (a full answer or one stream event).
AnswerReader = Callable[[Mapping[str, Any]], list[Reading]]


@dataclass(frozen=True)
class CacheSource:
    """A named place a cache number comes from; lower ``trust`` ranks first when sources disagree."""

    name: str
    trust: int


@dataclass(frozen=True)
class CacheCounter:
    """A Prometheus counter of cached prompt tokens and the counter that gives the prompt size.

    ``trust`` 95 ranks it after every other source (where the verdict has always put these counters).
    ``total_excludes_cached``: the total counts only freshly processed tokens, so the prompt is
    cached + total (otherwise the total already includes the cached ones).
    """

    cached: str
    total: str
    trust: int
    total_excludes_cached: bool = False


@dataclass(frozen=True)
class CacheTier:
    """A second cache behind the server (LMCache behind vLLM), known from the server's own counters.

    ``external_hits`` / ``external_queries``: the server's counters of prompt tokens this tier served /
    was asked for; ``hit_tokens`` / ``requested_tokens``: the tier's own counters on its own
    ``/metrics`` (another port, found from the tier's process or its default port).
    """

    name: str
    label: str
    external_hits: str
    external_queries: str
    #: a ``/metrics`` substring of the server that shows the tier is connected (detection)
    metrics_marker: str
    hit_tokens: str
    requested_tokens: str
    #: the server's own count of prompt tokens (a split is one request's only when it moved by that request's)
    server_prompt_tokens: str = ""
    read_chunks: str = ""
    #: the tier's own process (``PROGRAM SUBCOMMAND ... PORT_FLAG N``) and its metrics port's default
    program: str = ""
    subcommand: str = ""
    port_flag: str = ""
    host_flag: str = "--host"
    default_port: int = 0
    #: which tier process a server process uses: ``linked_port(server_argv, server_http_port)`` gives the
    #: value of the tier's own ``link_flag`` (``None``: not that server, or no link in its arguments)
    linked_port: Callable[[Sequence[str], int], int | None] | None = None
    link_flag: str = "--port"
    #: the tier's own settings pages beside its ``/metrics`` (its chunk size, its lower tiers), read by
    #: ``settings(pages) -> object`` whose ``chunk_size`` verify reports
    settings_routes: tuple[str, ...] = ()
    settings: Callable[..., Any] | None = None
    #: one request's prompt by tier: ``split(before, after, tier_before, tier_after, tier_before_text,
    #: tier_after_text, settings)`` -> an object with ``to_json()`` and ``describe()``, or ``None``
    split: Callable[..., Any] | None = None
    #: why a prompt that first differs at token N reused what the split says: ``boundary(N, split_json)``
    boundary: Callable[[int, Mapping[str, Any]], str | None] | None = None
    #: what the tier's settings and counters say went wrong around one request, each with its fix:
    #: ``check(server_page_text, settings, tier_before, tier_after, tier_before_text, tier_after_text)``
    check: Callable[..., list[str]] | None = None
    #: why a request got no answer, from the tier's settings and its page read after the time ran out:
    #: ``stalled(settings, tier_values) -> list[str]``
    stalled: Callable[..., list[str]] | None = None
    #: the server's route that tokenizes a chat body (``{"tokens": [...]}``), to find that N
    tokenize_route: str = ""


@dataclass(frozen=True)
class Router:
    """A router people put in front of several instances of this server, as verify finds and reads it.

    The router answers ``route`` with a JSON object whose ``field`` lists its instances' base URLs (its
    own configuration, read over HTTP: the router may rename its process, so its argv says nothing).
    ``ran_counter`` is the counter on each instance's ``/metrics`` that moves when that instance runs a
    request: the one whose counter moved is the one the router chose.
    """

    label: str
    route: str
    field: str
    ran_counter: str


@dataclass(frozen=True)
class Metrics:
    """The server's ``/metrics``: substrings that show cache counters are there, and the counters."""

    markers: tuple[str, ...] = ()
    counters: tuple[CacheCounter, ...] = ()
    #: its log has no per-request cache line at default verbosity: the live panel follows these
    #: counters instead (``logs.parsers.request_counters``), one event per finished request
    live_events: bool = False
    #: gauges that are 0 only while the server runs no request (running, queued): a difference of the
    #: counters between two idle readings holds whole requests only (the gateway's fallback for an
    #: answer that carried no counts, ``gateway.counts_fallback``)
    in_flight: tuple[str, ...] = ()


@dataclass(frozen=True)
class Advice:
    """What to tell the user when this server's cache missed, reused only part, or gave no number."""

    miss: str | None = None
    partial: str | None = None
    unknown: str | None = None
    #: how to avoid a full re-processing the model's memory forced (SWA or hybrid/recurrent models): the
    #: server's own switches, told by the log diagnosis; ``None`` when it has none to name
    forced_reprocess: str | None = None


@dataclass(frozen=True)
class ClientNeed:
    """Something a client needs from this server that the server does not do by default.

    ``lint`` is the profile lint's warning (code, message) for a profile that targets ``client``;
    ``probe`` is merged into the connection test's request so a server started without it fails the
    test instead of the client; ``refusal`` is a phrase of the server's own error that shows this need
    is unmet, and ``fix`` what to change.
    """

    client: str
    code: str
    message: str
    fix: str
    refusal: str
    probe: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PromptRendering:
    """The routes that render a request the way a completion would, and count it.

    ``template_route`` takes a Chat Completions body and answers ``{"prompt": text}``; ``tokenize_route``
    takes ``{"content": text}`` and answers its tokens with their pieces; ``count_routes`` (``messages``
    or ``chat`` -> route) count an original body, to check the rendering; ``chat_body`` turns a body into
    the Chat Completions body the server itself would build from it (and says if it was a Messages body).
    """

    template_route: str
    tokenize_route: str
    count_routes: Mapping[str, str]
    chat_body: Callable[[dict[str, Any]], tuple[dict[str, Any], bool]]


@dataclass(frozen=True)
class Server:
    """Everything KV Switch knows about one server kind.

    Args:
        kind: the profile kind this server is.
        label: its product name, as shown to the user.
        short_label: the name in detected-profile names (``llama.cpp :8080``).
        base_url: the preset URL; a local server's default port is the one it names (``port``).
        description: one line for the profile editor.
        local: runs on the user's machine and keeps a KV cache (gets the cache-safe env).
        needs_key: the preset asks for an API key.
        aliases: other spellings of the kind (log hints, CLI flags).
        log: where it usually logs; ``discover_log`` also looks at the disk.
        log_formats: ids of the log formats it prints, as ``kvswitch.logs.parsers`` names them.
        process / port_answer: how a running instance is recognised.
        owned_by: the ``owned_by`` its ``/v1/models`` entries carry (a weak hint when nothing else said).
        routes: API routes only it serves (``api id -> path``), besides the common ones.
        preferred_apis / fallback_apis: APIs to try before / after the client's own.
        only_apis: the only APIs it speaks (nothing else is tried).
        specific: a profile of this kind names this server (a gateway or custom one could be anything).
        vendor_api: the vendor's own hosted API: it serves no discovery route, and every request is
            billed, so it is neither asked the discovery GETs nor sent the Claude Code replay.
        serves_responses_api: it serves the OpenAI Responses API, the only one Codex speaks (``False``:
            Codex reaches it only through the gateway's bridge, when it serves chat completions).
        serves_messages_api / serves_chat_api: it serves Anthropic Messages (``/v1/messages``, Claude
            Code's only protocol) / OpenAI Chat Completions (what the bridges speak upstream).
        key_header: how an API key is sent: header name and value prefix.
        answer_sources / answer_reader: where its answers carry cache numbers and how to read them.
        metrics: its ``/metrics`` cache counters.
        advice: what to do when its cache misses.
        infer_reuse: when no answer counts cached tokens, infer the reuse from the cold and warm
            readings (returns the reading and a note saying why it is trusted).
        rendering: how it renders a request into its prompt and tokens (token-level diagnosis).
    """

    kind: ProfileKind
    label: str
    short_label: str
    base_url: str
    #: two letters for the kind's glyph in the profile list
    badge: str = "•"
    description: str = ""
    local: bool = False
    needs_key: bool = False
    aliases: tuple[str, ...] = ()
    log: LogLocation | None = None
    discover_log: LogDiscovery | None = None
    log_formats: tuple[str, ...] = ()
    process: ProcessSignature | None = None
    port_answer: PortSignature | None = None
    owned_by: tuple[str, ...] = ()
    routes: tuple[tuple[str, str], ...] = ()
    preferred_apis: tuple[str, ...] = ()
    only_apis: tuple[str, ...] = ()
    fallback_apis: tuple[str, ...] = ()
    answer_sources: tuple[CacheSource, ...] = ()
    answer_reader: AnswerReader | None = None
    specific: bool = True
    vendor_api: bool = False
    serves_responses_api: bool = True
    serves_messages_api: bool = True
    serves_chat_api: bool = True
    key_header: tuple[str, str] = ("authorization", "Bearer ")
    metrics: Metrics = field(default_factory=Metrics)
    advice: Advice = field(default_factory=Advice)
    infer_reuse: ReuseInference | None = None
    rendering: PromptRendering | None = None
    #: what each client needs from this server beyond its defaults (checked by lint and ``kvswitch test``)
    client_needs: tuple[ClientNeed, ...] = ()
    #: other servers that can sit behind it and keep their own cache (vLLM's LMCache): how verify reads them
    cache_tiers: tuple[CacheTier, ...] = ()
    #: routers that spread requests over several instances of this server (verify reads every instance)
    routers: tuple[Router, ...] = ()
    #: ``(server before, after, tier before, after)`` -> which tier served the prefix (has ``describe()``)
    served_by: Callable[..., Any] | None = None
    #: the server's name in verify results and log events (the kind's value)
    name: str = ""

    @property
    def protocols(self) -> tuple[WireProtocol, ...]:
        """The wire protocols it serves, in the order a bridge prefers them upstream."""
        served = (
            ("anthropic", self.serves_messages_api),
            ("openai_chat", self.serves_chat_api),
            ("openai_responses", self.serves_responses_api),
        )
        return tuple(protocol for protocol, serves in served if serves)  # type: ignore[misc]

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.kind.value)

    @property
    def port(self) -> int | None:
        """The port a local server listens on by default (its preset URL's), ``None`` for the others."""
        return urlsplit(self.base_url).port if self.local else None

    def preset(self, env: Mapping[str, str] | None = None) -> Preset:
        """The profile defaults; log locations are resolved against ``env``'s HOME."""
        return Preset(
            self.kind,
            self.label,
            self.base_url,
            dict(CACHE_SAFE_ENV) if self.local else {},
            self.log(env) if self.log else None,
            self.needs_key,
            self.description,
        )

    def find_log(self, env: Mapping[str, str] | None, unit_dirs: Sequence[Path]) -> LogSource | None:
        """Where this server logs, judged from the disk when it can be (else the preset's location)."""
        if self.discover_log is not None:
            return self.discover_log(env, unit_dirs)
        return self.log(env) if self.log is not None else None


def as_int(value: Any) -> int | None:
    """A JSON integer (``True`` and non-integral floats are not)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def positive_int(value: Any) -> int | None:
    """A JSON integer above zero (servers report 0 or -1 for 'not set')."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def model_ids(payload: Any) -> tuple[str, ...]:
    """The ids of an OpenAI ``/v1/models`` answer."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return ()
    return tuple(str(item["id"]) for item in data if isinstance(item, dict) and item.get("id"))
