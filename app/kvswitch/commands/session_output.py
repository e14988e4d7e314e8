"""How ``kvswitch sessions`` prints its rows: one text line each, CSV (cells that a spreadsheet would take
for a formula quoted) or a JSON list written a row at a time, so a million rows never sit in memory.
The row dicts are ``commands.sessions.iter_rows_of``'s; ``session show`` prints its heading with
``row_line``.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Iterable
from typing import Any

from kvswitch.core.text import printable

_FORMULA_START = ("=", "+", "-", "@")
_CSV_COLUMNS = (
    "source",
    "client",
    "session",
    "project",
    "title",
    "first_time",
    "last_time",
    "versions",
    "models",
    "calls",
    "subagent_calls",
    "prompt",
    "new",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "output",
    "hit_rate",
    "cost",
    "unpriced",
    "resume",
    "gateway_requests",
    "gateway_hit_rate",
    "gateway_reprocessed",
    "notes",
)


def write_json(rows: Iterable[dict[str, Any]]) -> None:
    """The text of ``json.dumps(list(rows), indent=2)``, written a row at a time."""
    count = 0
    sys.stdout.write("[")
    for row in rows:
        sys.stdout.write((",\n  " if count else "\n  ") + json.dumps(row, indent=2).replace("\n", "\n  "))
        count += 1
    sys.stdout.write("\n]\n" if count else "]\n")


def local_minute(epoch: Any) -> str:
    """A row's time to the minute in local time, ``-`` where the row has none."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if isinstance(epoch, int | float) else "-"


def row_line(row: dict[str, Any]) -> str:
    """One session on one line: the files' numbers (and the gateway's, when joined), or the gateway's."""
    if row["source"] == "gateway":
        return (
            f"{row['session'] or '(no session id)'} {row['client'] or '-'} [gateway]: {row['requests']:,} "
            f"requests, hit {row['hit_rate']:.0%} ({row['cached_tokens']:,}/{row['prompt_tokens']:,}), "
            f"re-processed {row['reprocessed_tokens']:,} tokens; {row['first_seen']} .. {row['last_seen']}"
        )
    sub = f" (+{row['subagent_calls']} subagent)" if row["subagent_calls"] else ""
    line = (
        f"{row['session']} {row['client']} {local_minute(row['first_time'])} .. "
        f"{local_minute(row['last_time'])} "
        f"{row['project'] or '-'}: {row['calls']:,} calls{sub}, hit {row['hit_rate']:.0%} "
        f"(read {row['cache_read']:,} of {row['prompt']:,}; written {row['cache_write']:,}, new "
        f"{row['fresh']:,}), output {row['output']:,}, ${row['cost']:.4f}"
    )
    if row.get("gateway"):
        gateway = row["gateway"]
        line += f"; gateway: {gateway['requests']:,} requests, hit {gateway['hit_rate']:.0%}"
        if gateway.get("last_reason"):
            line += f", last reason {gateway['last_reason']}"
    if row["title"]:
        line += f" \u2014 {row['title'][:80]!r}"
    return line


def _cell(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = printable(value, multiline=False)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv(rows: Iterable[dict[str, Any]]) -> None:
    writer = csv.writer(sys.stdout)
    writer.writerow(_CSV_COLUMNS)
    for row in rows:
        gateway = row.get("gateway") or (row if row["source"] == "gateway" else {})
        files = row["source"] != "gateway"
        values = [row["source"], row.get("client") or "", row.get("session") or ""]
        if files:
            values += [
                row["project"],
                row["title"],
                local_minute(row["first_time"]),
                local_minute(row["last_time"]),
                " ".join(row["versions"]),
                " ".join(row["models"]),
                row["calls"],
                row["subagent_calls"],
                row["prompt"],
                row["fresh"],
                row["cache_read"],
                row["cache_write_5m"],
                row["cache_write_1h"],
                row["output"],
                row["hit_rate"],
                row["cost"],
                " ".join(row["unpriced"]),
                row["resume"],
            ]
        else:
            values += [""] * 18
        values += [
            gateway.get("requests", ""),
            gateway.get("hit_rate", ""),
            gateway.get("reprocessed_tokens", ""),
            " | ".join(row.get("notes", [])),
        ]
        writer.writerow([_cell(value) for value in values])
