"""LMCache's own counters and settings (multi-process ``lmcache server``, 0.5.6): which tier served a prompt.

vLLM counts what its connector brought in as one number (``vllm:external_prefix_cache_hits``); only
LMCache's own ``/metrics`` (its ``--http-port``) splits a lookup's hit into L1 (its DRAM) and L2 (its
adapters: disk, Redis, ...), and only its ``/config`` says the chunk size that decides how much of a
prompt that differs somewhere can be reused. The names here were read on a real 0.5.6 server's pages
(captured under ``tests/fixtures/lmcache-0.5.6/``): OTel counters exported Prometheus-style, the unit
appended to the name.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HIT = "lmcache_mp_lookup_hit_tokens_total"
REQUESTED = "lmcache_mp_lookup_requested_tokens_total"
#: of ``HIT``, the tokens L1 served and those L2 added (``l1 + l2 == hit`` per lookup)
HIT_L1 = "lmcache_mp_lookup_hit_l1_tokens_total"
HIT_L2 = "lmcache_mp_lookup_hit_l2_tokens_total"
#: load tasks each L2 adapter completed, labelled ``l2_name`` (the adapter's type name)
L2_LOADS = "lmcache_mp_l2_load_completed_requests_total"
L1_EVICTED = "lmcache_mp_l1_evicted_chunks_total"
L1_ALLOC_FAILED = "lmcache_mp_l1_allocation_failure_chunks_total"
L2_PREFETCH_FAILED = "lmcache_mp_l2_prefetch_failure_chunks_total"
L2_STORE_SUBMITTED = "lmcache_mp_l2_store_submitted_objects_chunks_total"
L2_STORE_COMPLETED = "lmcache_mp_l2_store_completed_objects_chunks_total"

#: vLLM's prompt tokens by where they came from (its own counter), and its total
VLLM_LOCAL = "vllm:prefix_cache_hits_total"
VLLM_EXTERNAL = "vllm:external_prefix_cache_hits_total"
VLLM_PROMPT = "vllm:prompt_tokens_total"

#: what an adapter's type is called for the user
ADAPTER_KINDS = {"fs": "disk", "fs_native": "disk", "resp": "Redis", "valkey": "Valkey", "s3": "S3"}

_LABELLED = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\}\s+(\S+)')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def labelled(text: str, name: str, label: str) -> dict[str, float]:
    """One counter of a Prometheus page split by one label (``{"fs": 3.0, "resp": 1.0}``)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        match = _LABELLED.match(line.strip())
        if match is None or match.group(1) != name:
            continue
        labels = dict(_LABEL.findall(match.group(2)))
        if label in labels:
            try:
                found[labels[label]] = found.get(labels[label], 0.0) + float(match.group(3))
            except ValueError:
                continue
    return found


@dataclass(frozen=True)
class Settings:
    """What the running LMCache server says about itself (``GET /config``, ``GET /config/adapters``)."""

    chunk_size: int | None
    l1_size_gb: float | None = None
    #: the L2 adapters' type names, in lookup order
    adapters: tuple[str, ...] = ()
    #: each adapter's own settings (``base_path`` of a disk adapter, ``host``/``port`` of Redis)
    adapter_settings: tuple[Mapping[str, Any], ...] = ()


def _find(data: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in a nested JSON object (the page nests by config class)."""
    if isinstance(data, Mapping):
        if key in data:
            return data[key]
        for value in data.values():
            found = _find(value, key)
            if found is not None:
                return found
    elif isinstance(data, list):
        for value in data:
            found = _find(value, key)
            if found is not None:
                return found
    return None


def settings_from(config: Any, adapters: Any = None) -> Settings:
    """``/config`` (and ``/config/adapters``) of a 0.5.6 server; unknown shapes give ``None`` fields."""
    chunk = _find(config, "chunk_size")
    size = _find(config, "size_in_bytes")
    listed = adapters.get("adapters") if isinstance(adapters, Mapping) else None
    names = tuple(str(a["type_name"]) for a in listed or () if isinstance(a, Mapping) and "type_name" in a)
    configured = _find(config, "adapters")
    own = tuple(a for a in configured if isinstance(a, Mapping)) if isinstance(configured, list) else ()
    return Settings(
        chunk_size=chunk if isinstance(chunk, int) and not isinstance(chunk, bool) and chunk > 0 else None,
        l1_size_gb=size / 2**30 if isinstance(size, int | float) and not isinstance(size, bool) else None,
        adapters=names,
        # where each adapter keeps its data; never its credentials
        adapter_settings=tuple({k: v for k, v in a.items() if k in ("base_path", "host", "port")}
                               for a in own),
    )


def _delta(before: Mapping[str, float] | None, after: Mapping[str, float] | None, name: str) -> int:
    if after is None or name not in after:
        return 0
    return int(after[name] - (before or {}).get(name, 0.0))


@dataclass(frozen=True)
class TierSplit:
    """Where one request's prompt tokens came from, each figure a counter's delta around the request.

    ``vllm_prefix_cache``: vLLM's own prefix cache; ``lmcache_l1`` / ``lmcache_l2``: LMCache's lookup hit
    split by tier (LMCache's tokens, chunk-aligned); ``computed``: the prompt tokens vLLM neither found
    in its own cache nor received from LMCache; ``lmcache_l2_adapters``: load tasks per L2 adapter.
    """

    vllm_prefix_cache: int
    lmcache_l1: int
    lmcache_l2: int
    computed: int
    lmcache_l2_adapters: dict[str, int] = field(default_factory=dict)
    chunk_size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"vllm_prefix_cache": self.vllm_prefix_cache, "lmcache_l1": self.lmcache_l1,
                "lmcache_l2": self.lmcache_l2, "computed": self.computed,
                "lmcache_l2_adapters": dict(self.lmcache_l2_adapters), "chunk_size": self.chunk_size}

    def describe(self) -> str:
        parts = [f"vLLM's prefix cache {self.vllm_prefix_cache}", f"LMCache L1 (CPU) {self.lmcache_l1}"]
        loads = ", ".join(f"{ADAPTER_KINDS.get(name, name)} ({name}) {count} load{'s' * (count != 1)}"
                          for name, count in sorted(self.lmcache_l2_adapters.items()) if count)
        parts.append(f"LMCache L2 {self.lmcache_l2}" + (f" [{loads}]" if loads else ""))
        parts.append(f"computed {self.computed}")
        chunk = f" (LMCache chunk size {self.chunk_size})" if self.chunk_size else ""
        return "prompt tokens by tier: " + ", ".join(parts) + chunk


def tier_split(before: Mapping[str, float], after: Mapping[str, float],
               lm_before: Mapping[str, float] | None, lm_after: Mapping[str, float] | None,
               loads: Mapping[str, int] | None = None, chunk_size: int | None = None) -> TierSplit | None:
    """The split of one request's prompt from vLLM's and LMCache's counters (``None``: LMCache's page
    did not answer or lacks the per-tier counters)."""
    if lm_after is None or HIT_L1 not in lm_after or VLLM_LOCAL not in after:
        return None
    local = _delta(before, after, VLLM_LOCAL)
    external = _delta(before, after, VLLM_EXTERNAL)
    prompt = _delta(before, after, VLLM_PROMPT)
    return TierSplit(
        vllm_prefix_cache=local,
        lmcache_l1=_delta(lm_before, lm_after, HIT_L1),
        lmcache_l2=_delta(lm_before, lm_after, HIT_L2),
        computed=max(prompt - local - external, 0),
        lmcache_l2_adapters={k: v for k, v in (loads or {}).items() if v},
        chunk_size=chunk_size,
    )


def load_deltas(before_text: str | None, after_text: str | None) -> dict[str, int]:
    """Each L2 adapter's completed loads between two raw ``/metrics`` pages."""
    if after_text is None:
        return {}
    was = labelled(before_text or "", L2_LOADS, "l2_name")
    now = labelled(after_text, L2_LOADS, "l2_name")
    return {name: int(value - was.get(name, 0.0)) for name, value in now.items()}


def boundary(first_diff: int, chunk_size: int, reused: int) -> str:
    """Why a prompt that differs at token ``first_diff`` reused ``reused`` tokens (LMCache's count)."""
    whole = first_diff // chunk_size * chunk_size
    head = (f"the prompt first differs at token {first_diff}; LMCache reuses whole chunks of {chunk_size} "
            "tokens")
    if reused == whole:
        return f"{head}, so {reused} were reused and {first_diff - reused} lost to the boundary"
    return (f"{head}, so at most {whole} could be reused ({first_diff - whole} lost to the boundary); "
            f"LMCache's counters say {reused} were reused, so {whole - reused} more were not in its "
            "tiers (evicted or never stored)" if reused < whole else
            f"{head}; LMCache's counters say {reused} were reused")


def boundary_of(first_diff: int, split: Mapping[str, Any]) -> str | None:
    """``boundary`` for a request's split (``TierSplit.to_json``): LMCache's hit is its L1 plus L2."""
    chunk = split.get("chunk_size")
    if not isinstance(chunk, int) or chunk <= 0:
        return None
    return boundary(first_diff, chunk, int(split.get("lmcache_l1", 0)) + int(split.get("lmcache_l2", 0)))


#: vLLM's block size, a label of its ``cache_config_info`` gauge (``block_size="32"``)
_BLOCK_SIZE = re.compile(r'^vllm:cache_config_info\{[^}]*\bblock_size="(\d+)"', re.MULTILINE)


def block_size(vllm_page: str) -> int | None:
    """vLLM's KV block size from its own ``/metrics`` page."""
    match = _BLOCK_SIZE.search(vllm_page)
    return int(match.group(1)) if match else None


def troubles(settings: Settings | None, blocks: int | None, lm_before: Mapping[str, float] | None,
             lm_after: Mapping[str, float] | None, before_text: str | None = None,
             after_text: str | None = None) -> list[str]:
    """What LMCache's own settings and counters say went wrong around one request, each with its fix.

    Evictions are a trouble only when no L2 adapter keeps what L1 lets go: with one, LMCache stores every
    chunk to L2 as it stores it to L1, and an evicted chunk is read back from L2 (measured on 0.5.6: a
    prompt pushed out of a 0.0015 GB L1 came back as L1 512 + disk 1024 tokens). With no earlier page
    (``lm_before`` is ``None``: ``doctor`` looking at a server at rest) the counters are LMCache's totals
    since it started: evictions are then its LRU at work, and each L2 adapter is checked where it keeps
    its data instead of by stores that failed in the past."""
    found = []
    at_rest = lm_before is None
    kept = bool(settings and settings.adapters)
    chunk = settings.chunk_size if settings is not None else None
    if chunk and blocks and chunk % blocks:
        fixed = max(blocks, chunk // blocks * blocks)
        found.append(f"LMCache's chunk size {chunk} is not a multiple of vLLM's block size {blocks}: restart "
                     f"`lmcache server` with --chunk-size {fixed} (a multiple of {blocks}).")
    counts_evictions = not at_rest and not kept
    evicted = _delta(lm_before, lm_after, L1_EVICTED) if counts_evictions else 0
    failed = _delta(lm_before, lm_after, L1_ALLOC_FAILED)
    oom = int(labelled(after_text or "", L2_PREFETCH_FAILED, "reason").get("l1_oom", 0.0)
              - labelled(before_text or "", L2_PREFETCH_FAILED, "reason").get("l1_oom", 0.0))
    if evicted or failed or oom:
        size = f" ({settings.l1_size_gb:.3g} GB)" if settings and settings.l1_size_gb else ""
        what, span = ("the prompts it was given", "since it started") if at_rest else ("this prompt",
                                                                                       "during the request")
        counted = (f"{evicted} chunks were evicted, " if counts_evictions else "") + (
            f"{failed} could not be allocated and {oom} L2 loads found no room (")
        names = "lmcache_mp_l1_evicted, " if counts_evictions else ""
        found.append(f"LMCache's L1{size} is too small for {what}: {span} {counted}{names}"
                     "l1_allocation_failure, l2_prefetch_failure l1_oom): restart `lmcache server` with a "
                     "larger --l1-size-gb.")
    submitted = _delta(lm_before, lm_after, L2_STORE_SUBMITTED)
    completed = _delta(lm_before, lm_after, L2_STORE_COMPLETED)
    if at_rest:
        found += adapter_troubles(settings, completed, submitted)
    elif submitted > completed and settings is not None and settings.adapters:
        silent = _silent_adapters(settings)
        where = ("; nothing answers at " + ", ".join(silent)) if silent else ""
        found.append(f"LMCache's L2 stored {completed} of {submitted} chunks it was given "
                     f"({', '.join(settings.adapters)}){where}: start that server (Redis: redis-server, "
                     "check with redis-cli -p PORT ping) or make the adapter's folder writable, or restart "
                     "`lmcache server` without that --l2-adapter; until then its L2 keeps nothing.")
    return found


def _folder_trouble(base_path: str) -> str | None:
    """Why an fs adapter's folder cannot take LMCache's chunks now (``None``: it can, as far as this
    process can tell; the server may run as another user)."""
    path = Path(base_path)
    if not path.exists():
        return f"its folder {base_path} is gone"
    if not path.is_dir():
        return f"its base_path {base_path} is not a folder"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"its folder {base_path} is not writable"
    return None


def adapter_troubles(settings: Settings | None, completed: int = 0, submitted: int = 0) -> list[str]:
    """Each L2 adapter checked where it keeps its data, now: a server (Redis) where nothing answers, a
    disk folder that is gone or not writable; each with its fix and LMCache's own store counts."""
    if settings is None:
        return []
    stored = (f" (LMCache's L2 stored {completed} of {submitted} chunks since it started)"
              if submitted > completed else "")
    found = []
    for name, own in zip(settings.adapters, settings.adapter_settings, strict=False):
        kind = ADAPTER_KINDS.get(name, name)
        host, port, base = own.get("host"), own.get("port"), own.get("base_path")
        if isinstance(host, str) and isinstance(port, int) and not _answers(host, port):
            found.append(f"LMCache's {kind} L2 adapter ({name}): nothing answers at {host}:{port}{stored}, "
                         "so every store to it fails and a lookup in it waits: start that server (Redis: "
                         f"redis-server --port {port}, check with redis-cli -p {port} ping), or restart "
                         "`lmcache server` without that --l2-adapter.")
        elif isinstance(base, str) and (why := _folder_trouble(base)) is not None:
            found.append(f"LMCache's {kind} L2 adapter ({name}): {why}{stored}, so nothing more is kept on "
                         f"disk: create it and let the server write there (mkdir -p {base}), or restart "
                         "`lmcache server` with another base_path.")
    return found


#: lines of ``lmcache server``'s log (or vLLM's, when its connector refuses LMCache) that end a start, and
#: what they mean (measured on 0.5.6: a chunk size of 48 with vLLM's block size 32, an fs base_path under a
#: file)
_START_FAILURES = (
    (re.compile(r"LMCache chunk size \d+ must be a multiple of \d+[^'\n]*"),
     "vLLM refused LMCache's chunk size",
     "restart `lmcache server` with a --chunk-size that is a multiple of vLLM's --block-size"),
    (re.compile(r"(NotADirectoryError|PermissionError|FileExistsError|Read-only file system).*", re.I),
     "an fs L2 adapter's base_path is not a writable folder",
     'give --l2-adapter \'{"type": "fs", "base_path": ...}\' a folder the server may write'),
    (re.compile(r"address already in use.*", re.I), "its --port or --http-port is taken by another process",
     "choose free ports (and the same --port in vLLM's kv_connector_extra_config)"),
)


def start_failure(log_text: str) -> str | None:
    """Why ``lmcache server`` exited at start, named from its own log, with the fix."""
    for pattern, cause, fix in _START_FAILURES:
        match = pattern.search(log_text)
        if match:
            return f"LMCache's set-up did not start: {cause} ({match.group(0).strip()[:160]}); fix: {fix}."
    return None


#: L2 lookups LMCache has started and not finished (a gauge): one that stays up holds vLLM's request
ACTIVE_PREFETCH = "lmcache_mp_active_prefetch_jobs"


def _answers(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1.0):
        return True
    return False


def _silent_adapters(settings: Settings) -> list[str]:
    """The adapters with a host and port where nothing answers (``Redis (resp) 127.0.0.1:6379``)."""
    found = []
    for name, own in zip(settings.adapters, settings.adapter_settings, strict=False):
        host, port = own.get("host"), own.get("port")
        if isinstance(host, str) and isinstance(port, int) and not _answers(host, port):
            found.append(f"{ADAPTER_KINDS.get(name, name)} ({name}) {host}:{port}")
    return found


def stalled(settings: Settings | None, values: Mapping[str, float] | None) -> list[str]:
    """Why a request behind LMCache got no answer: measured on 0.5.6 with its Redis adapter pointing at a
    port nothing listens on, the lookup waits on the adapter (``active_prefetch_jobs`` stays 1, its log
    repeats "connection failed") and vLLM's request never ends."""
    if not values or values.get(ACTIVE_PREFETCH, 0.0) <= 0:
        return []
    found = []
    names = settings.adapters if settings else ()
    for name, own in zip(names, settings.adapter_settings if settings else (), strict=False):
        host, port = own.get("host"), own.get("port")
        if isinstance(host, str) and isinstance(port, int) and not _answers(host, port):
            kind = ADAPTER_KINDS.get(name, name)
            found.append(f"LMCache is waiting on its {kind} L2 adapter ({name}), and nothing answers"
                         f" at {host}:{port} ({ACTIVE_PREFETCH} "
                         f"{values[ACTIVE_PREFETCH]:g}): start that server, or restart `lmcache server` "
                         "without that --l2-adapter.")
    if not found:
        found.append(f"LMCache has {values[ACTIVE_PREFETCH]:g} L2 lookups in flight ({ACTIVE_PREFETCH}): "
                     "an L2 adapter is not answering; its log says which.")
    return found
