"""A prompt's split by cache tier in words: the Cache log row's tooltip (``describe_tiers``, a live event's
``CacheEvent.tiers``) and the usage record's column (``tiers_line``, the gateway's stored JSON text).

The figures are the counters' own (vLLM's and LMCache's, over the event's scrapes); the words only say
what each is. LMCache counts L2 hit tokens for all its adapters together, and per adapter only the loads
it completed, so the text gives L2's tokens once and each adapter's loads beside them, never a per-adapter
token count it does not have. When an event sums several requests, the text says the split is theirs
together; when LMCache's lookups found another number than vLLM took from it (another instance sharing
LMCache, or tokens vLLM already held), it gives both numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.lmcache import ADAPTER_KINDS

SEP = " · "


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _loads(adapters: Any) -> str:
    if not isinstance(adapters, Mapping):
        return ""
    parts = []
    for name, count in sorted(adapters.items()):
        n = _count(count)
        if n:
            parts.append(f"{ADAPTER_KINDS.get(str(name), str(name))} ({name}) {n:,} load{'s' * (n != 1)}")
    return f" ({', '.join(parts)})" if parts else ""


def describe_tiers(tiers: Mapping[str, Any] | None) -> str:
    """``"vLLM prefix cache 0 · LMCache L1 (CPU) 4,864 · LMCache L2 0 · computed 225 · LMCache chunk size
    256"``; figures the split lacks are left out, never shown as 0 (``""`` for no split)."""
    if not isinstance(tiers, Mapping):
        return ""
    parts = []
    for key, label in (("vllm_prefix_cache", "vLLM prefix cache"), ("lmcache_l1", "LMCache L1 (CPU)"),
                       ("lmcache_l2", "LMCache L2")):
        n = _count(tiers.get(key))
        if n is not None:
            parts.append(f"{label} {n:,}" + (_loads(tiers.get("lmcache_l2_adapters")) if key == "lmcache_l2"
                                              else ""))
    computed = _count(tiers.get("computed"))
    if computed is not None:
        parts.append(f"computed {computed:,}")
    chunk = _count(tiers.get("chunk_size"))
    if chunk:
        parts.append(f"LMCache chunk size {chunk:,}")
    if not parts:
        return ""
    text = SEP.join(parts)
    requests = _count(tiers.get("requests"))
    if requests is not None and requests > 1:
        text = (f"{requests} requests together (the counters moved once for all of them, not split per "
                f"request): {text}")
    l1, l2, external = (_count(tiers.get(k)) for k in ("lmcache_l1", "lmcache_l2", "vllm_external"))
    if l1 is not None and l2 is not None and external is not None and l1 + l2 != external:
        text += (f"{SEP}LMCache's lookups found {l1 + l2:,} tokens in this time, vLLM counted {external:,} "
                 "as brought in by LMCache (LMCache's counters also count other lookups: another vLLM "
                 "sharing it, or tokens vLLM already had)")
    return text


# -- the usage record's column ---------------------------------------------------------------------
# The gateway stores the split as vLLM's and LMCache's own counters gave it (``servers.lmcache.TierSplit``);
# the command line and the Usage tab show the same short line from it, so the two never word it apart.
# The column is text another program may have changed: anything that is not the split's shape reads as
# unknown (``None``), never as an error.

_KEYS = ("vllm_prefix_cache", "lmcache_l1", "lmcache_l2", "computed")


def parsed(text: str | None) -> dict[str, Any] | None:
    """The stored split as an object, or None when there is none or it is not the split's shape."""
    if not isinstance(text, str) or not text:
        return None
    try:
        data = strict_json(text)  # depth- and size-capped: the file is not only ours
    except ValueError:
        return None
    if not isinstance(data, dict) or not all(_is_count(data.get(key)) for key in _KEYS):
        return None
    return data


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def tiers_line(text: str | None) -> str | None:
    """``vLLM 0 · L1 1024 · L2 256 (disk fs 1 load) · computed 57``, or None when not known."""
    data = parsed(text)
    if data is None:
        return None
    loads = data.get("lmcache_l2_adapters")
    shown = []
    if isinstance(loads, dict):
        for name, count in sorted(loads.items()):
            if _is_count(count) and count:
                shown.append(f"{ADAPTER_KINDS.get(name, name)} {name} {count} load{'s' * (count != 1)}")
    l2 = f"L2 {data['lmcache_l2']}" + (f" ({', '.join(shown)})" if shown else "")
    return (f"vLLM {data['vllm_prefix_cache']} · L1 {data['lmcache_l1']} · {l2} · "
            f"computed {data['computed']}")
