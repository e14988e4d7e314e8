"""Identify an inference server on a port by how it answers, with short timeouts.

Each server has a route only it serves (llama-server ``/props``, Ollama ``/api/version``, SGLang
``/get_server_info``, LM Studio ``/api/v0/models``, vLLM ``/version``), so a port is named only when
one of those answers in that server's own shape. A port that is closed, or answers with anything
else, yields nothing: a web server that happens to listen on 8080 is not a llama-server. Answers are
read with ``kvswitch.core.http``'s bounds (a byte cap, one deadline per port) and every string in
them is made printable, so a hostile port can neither hang the scan nor write escapes to a terminal.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from kvswitch.core.http import MB, Deadline, NetworkLimitError, SocketCutter, read_bounded
from kvswitch.core.models import ProfileKind
from kvswitch.core.text import printable_data

DEFAULT_TIMEOUT = 0.8
#: identification answers are small JSON documents; LM Studio's model list is the largest
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
        read_timeout = client.deadline.socket_timeout(client.timeout)
        with client.http.stream(
            "GET", path, timeout=read_timeout, extensions={"trace": client.cutter.trace}
        ) as response:
            body = read_bounded(response.iter_bytes(), MAX_ANSWER, client.deadline)
            status = response.status_code
    except (httpx.TimeoutException, httpx.NetworkError, NetworkLimitError) as exc:
        raise _Unresponsive(path) from exc
    except httpx.HTTPError:
        return 0, None
    try:
        return status, printable_data(json.loads(body))
    except ValueError:
        return status, None


def _model_ids(payload: Any) -> tuple[str, ...]:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return ()
    return tuple(str(item["id"]) for item in data if isinstance(item, dict) and item.get("id"))


def _as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def identify(host: str, port: int, timeout: float = DEFAULT_TIMEOUT) -> ProbeResult | None:
    """Name the server on ``host:port``, or ``None`` when nothing known answers there."""
    if not port_open(host, port, timeout):
        return None
    base = f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"
    with (
        SocketCutter(Deadline(timeout * PORT_BUDGET_READS)) as cutter,
        httpx.Client(
            base_url=base,
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
            headers={"accept-encoding": "identity"},
        ) as http,
    ):
        client = _Client(http, cutter, timeout)
        for check in (_llama_cpp, _ollama, _sglang, _lm_studio, _vllm):
            try:
                result = check(client, host, port)
            except _Unresponsive:
                return None  # one timeout is enough: a hung port must not cost five
            if result is not None:
                return result
    return None


def _llama_cpp(client: _Client, host: str, port: int) -> ProbeResult | None:
    status, props = _get_json(client, "/props")
    if status == 200 and isinstance(props, dict) and ("default_generation_settings" in props
                                                       or "total_slots" in props):
        settings = props.get("default_generation_settings") or {}
        context = _as_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
        _, models = _get_json(client, "/v1/models")
        version = props.get("build_info")
        return ProbeResult(ProfileKind.LLAMA_CPP, host, port, str(version) if version else None,
                           _model_ids(models), context, _as_int(props.get("total_slots")))
    if status == 503:
        _, health = _get_json(client, "/health")
        error = health.get("error") if isinstance(health, dict) else None
        if isinstance(error, dict) and "loading" in str(error.get("message", "")).lower():
            return ProbeResult(ProfileKind.LLAMA_CPP, host, port, loading=True)
    return None


def _ollama(client: _Client, host: str, port: int) -> ProbeResult | None:
    status, payload = _get_json(client, "/api/version")
    if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get("version"), str):
        return None
    _, tags = _get_json(client, "/api/tags")
    entries = tags.get("models") if isinstance(tags, dict) else None
    models = tuple(str(entry["name"]) for entry in entries or ()
                   if isinstance(entry, dict) and entry.get("name"))
    return ProbeResult(ProfileKind.OLLAMA, host, port, payload["version"], models)


def _sglang(client: _Client, host: str, port: int) -> ProbeResult | None:
    status, info = _get_json(client, "/get_server_info")
    if status != 200 or not isinstance(info, dict) or not ("model_path" in info or "version" in info):
        return None
    _, models = _get_json(client, "/v1/models")
    ids = _model_ids(models) or ((str(info["model_path"]),) if info.get("model_path") else ())
    version = info.get("version")
    return ProbeResult(ProfileKind.SGLANG, host, port, str(version) if version else None, ids,
                       _as_int(info.get("context_length")), _as_int(info.get("max_running_requests")))


def _lm_studio(client: _Client, host: str, port: int) -> ProbeResult | None:
    status, payload = _get_json(client, "/api/v0/models")
    if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        return None
    entries = [item for item in payload["data"] if isinstance(item, dict) and item.get("id")]
    loaded = [item for item in entries if item.get("state") == "loaded"]
    chosen = loaded or [item for item in entries if item.get("type") in ("llm", "vlm")] or entries
    context = None
    if chosen:
        context = _as_int(chosen[0].get("loaded_context_length") or chosen[0].get("max_context_length"))
    ids = tuple(str(item["id"]) for item in chosen)
    return ProbeResult(ProfileKind.LM_STUDIO, host, port, None, ids, context)


def _vllm(client: _Client, host: str, port: int) -> ProbeResult | None:
    status, payload = _get_json(client, "/version")
    if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get("version"), str):
        return None
    _, models = _get_json(client, "/v1/models")
    context = None
    if isinstance(models, dict) and isinstance(models.get("data"), list) and models["data"]:
        first = models["data"][0]
        context = _as_int(first.get("max_model_len")) if isinstance(first, dict) else None
    return ProbeResult(ProfileKind.VLLM, host, port, payload["version"], _model_ids(models), context)


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

