"""Identify an inference server on a port by how it answers, with short timeouts.

Each server has a route only it serves (its module in :mod:`kvswitch.servers` names it and the shape
of its answer), so a port is named only when one of those answers in that server's own shape. A port
that is closed, or answers with anything else, yields nothing: a web server that happens to listen on
8080 is not an inference server. Answers are read with ``kvswitch.core.http``'s bounds (a byte cap, one
deadline per port) and every string in them is made printable, so a hostile port can neither hang the
scan nor write escapes to a terminal.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from kvswitch import servers
from kvswitch.core.errors import ConfigParseError
from kvswitch.core.http import MB, Deadline, NetworkLimitError, SocketCutter
from kvswitch.core.http_client import exchange, new_client
from kvswitch.core.models import ProfileKind
from kvswitch.core.strictparse import loads_json
from kvswitch.core.text import printable_data

DEFAULT_TIMEOUT = 0.8
#: reading a profile's context window on ``profile add`` / ``use``: a server that is down costs
#: nothing (refused at once); a hung one at most this many seconds times ``PORT_BUDGET_READS``
CONTEXT_TIMEOUT = 0.5
#: identification answers are small JSON documents (the longest, a model list, is a few hundred KB)
MAX_ANSWER = 2 * MB
#: a port gets this many per-read timeouts in total, whatever it does (several GETs answer in ms)
PORT_BUDGET_READS = 5


@dataclass(frozen=True)
class ProbeResult:
    """A server identified on ``host:port``; ``loading`` means it answered but is still loading a model."""

    kind: ProfileKind
    host: str
    port: int
    version: str | None = None
    models: tuple[str, ...] = ()
    context: int | None = None
    parallel: int | None = None
    loading: bool = False


def port_open(host: str, port: int, timeout: float = DEFAULT_TIMEOUT) -> bool:
    """Whether something accepts TCP connections on ``host:port`` (a refused port costs microseconds)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class _Unresponsive(Exception):
    """The port accepted a connection but does not answer HTTP in time: stop asking it."""


class _Client:
    """An httpx client plus the port's deadline and per-read timeout."""

    def __init__(self, http: httpx.Client, cutter: SocketCutter, timeout: float):
        self.http, self.cutter, self.deadline, self.timeout = http, cutter, cutter.clock, timeout


def _get_json(client: _Client, path: str) -> tuple[int, Any]:
    """Status and parsed JSON body (``None`` when the body is not JSON); status 0 on protocol errors.

    Strings in the body are made printable: model names and versions end up on screen.
    """
    try:
        with exchange(client.http, client.cutter, "GET", path, limit=MAX_ANSWER,
                      header_timeout=client.timeout) as answer:
            body = answer.read()
            status = answer.status
    except (httpx.TimeoutException, httpx.NetworkError, NetworkLimitError) as exc:
        raise _Unresponsive(path) from exc
    except httpx.HTTPError:
        return 0, None
    try:
        return status, printable_data(loads_json(path, body.decode("utf-8", "replace")))
    except (ValueError, ConfigParseError):
        return status, None


def identify(host: str, port: int, timeout: float = DEFAULT_TIMEOUT) -> ProbeResult | None:
    """Name the server on ``host:port``, or ``None`` when nothing known answers there."""
    if not port_open(host, port, timeout):
        return None
    base = f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"
    with (
        SocketCutter(Deadline(timeout * PORT_BUDGET_READS)) as cutter,
        new_client(base, timeout, base_url=base) as http,
    ):
        client = _Client(http, cutter, timeout)
        try:
            found = servers.identify(lambda path: _get_json(client, path))
        except _Unresponsive:
            return None  # one timeout is enough: a hung port must not cost one per server kind
    if found is None:
        return None
    facts = found.facts
    return ProbeResult(found.server.kind, host, port, facts.version, facts.models, facts.context,
                       facts.parallel, facts.loading)


def identify_all(addresses: Iterable[tuple[str, int]], timeout: float = DEFAULT_TIMEOUT) -> list[ProbeResult]:
    """Probe every ``(host, port)`` concurrently; results keep the order of ``addresses``."""
    unique = list(dict.fromkeys(addresses))
    if not unique:
        return []
    results: list[ProbeResult] = []
    with ThreadPoolExecutor(max_workers=min(16, len(unique)), thread_name_prefix="kvswitch-probe") as pool:
        for result in pool.map(lambda address: identify(address[0], address[1], timeout), unique):
            if result is not None:
                results.append(result)
    return results



def server_context_window(base_url: str, timeout: float = CONTEXT_TIMEOUT) -> int | None:
    """The per-request context (tokens) the server at ``base_url`` reports, or ``None``.

    For a server that publishes ``/props``, that is its ``default_generation_settings.n_ctx``, the
    context of one slot (the total divided by ``-np``, unless the cache is unified), which is what one
    conversation gets. A server that is down, hung, or not one KV Switch knows gives ``None``: not an
    error, the client then only lacks the hint.
    """
    try:
        parts = urlsplit(base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if parts.scheme != "http" or not parts.hostname:
        return None  # local servers speak plain HTTP; identify() asks over http only
    found = identify(parts.hostname, port, timeout)
    return found.context if found is not None and not found.loading else None
