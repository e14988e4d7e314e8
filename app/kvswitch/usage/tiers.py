"""A request's prompt by cache tier, as the usage readers show it (the ``tiers`` column's JSON text).

The gateway stores the split as vLLM's and LMCache's own counters gave it (``servers.lmcache.TierSplit``);
the command line and the Usage tab show the same short line from it, so the two never word it apart.
The column is text another program may have changed: anything that is not the split's shape reads as
unknown (``None``), never as an error.
"""

from __future__ import annotations

from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.lmcache import ADAPTER_KINDS as _KINDS

_KEYS = ("vllm_prefix_cache", "lmcache_l1", "lmcache_l2", "computed")


def parsed(text: str | None) -> dict[str, Any] | None:
    """The stored split as an object, or None when there is none or it is not the split's shape."""
    if not isinstance(text, str) or not text:
        return None
    try:
        data = strict_json(text)  # depth- and size-capped: the file is not only ours
    except ValueError:
        return None
    if not isinstance(data, dict) or not all(_count(data.get(key)) for key in _KEYS):
        return None
    return data


def _count(value: Any) -> bool:
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
            if _count(count) and count:
                shown.append(f"{_KINDS.get(name, name)} {name} {count} load{'s' * (count != 1)}")
    l2 = f"L2 {data['lmcache_l2']}" + (f" ({', '.join(shown)})" if shown else "")
    return (f"vLLM {data['vllm_prefix_cache']} · L1 {data['lmcache_l1']} · {l2} · "
            f"computed {data['computed']}")
