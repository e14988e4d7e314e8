"""Prometheus text exposition, read once for every place that needs a server's counters.

Both the verify probes (any server's cache counter) and the live panel's counters follower read the same
``/metrics`` page format; one reader keeps them agreeing on what a line is. Labelled series of one name
(one per engine, finish reason or model) are summed, since each caller wants the server's total. A line
that does not parse is skipped: a server's page is input, not something to fail on.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_samples(text: str, names: Collection[str] | None = None) -> dict[str, float]:
    """Metric name -> value summed over label sets; only ``names`` when given. A metric the page
    lacks is absent, not zero, so a caller can tell "not exposed" from "nothing counted"."""
    values: dict[str, float] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match is None:
            continue
        name = match.group(1)
        if names is not None and name not in names:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        values[name] = values.get(name, 0.0) + value
    return values


def metrics_url(base_url: str) -> str:
    """Where a server at ``base_url`` keeps its page: ``http://h:8000/v1`` and ``http://h:8000`` both
    give ``http://h:8000/metrics``."""
    root = base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/metrics"
