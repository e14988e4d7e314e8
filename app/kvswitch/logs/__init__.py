"""The log engine (pure Python, no Qt): follow a local server's log, classify every line, and turn
completed requests into cache events (how much of each prompt was reused).

Public API used by the desktop panel and the CLI::

    classify_line(text, kind_hint=None) -> ClassifiedLine      # kind + highlight spans of one line
    LogAnalyzer(kind_hint).feed(line, line_no) -> FeedResult   # stateful: lines -> CacheEvent
    scan_file(path, kind_hint=None) -> Iterator[CacheEvent]    # fast whole-file scan
    diagnose(events) -> Diagnosis | None                       # a pattern across requests, in words
    open_source(LogSource) -> reader with read_lines(), status, close()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvswitch.logs.analyzer import LogAnalyzer
    from kvswitch.logs.classify import classify_line
    from kvswitch.logs.diagnose import Diagnosis, diagnose
    from kvswitch.logs.model import CacheEvent, ClassifiedLine, FeedResult, LineKind
    from kvswitch.logs.process import JournaldSource, ProcessSource
    from kvswitch.logs.scan import scan_file
    from kvswitch.logs.sources import DirectoryFollower, FileFollower, LogReader, open_source
    from kvswitch.logs.text import strip_ansi

#: where each name of the API lives: imported on first use, so ``kvswitch log scan`` (which needs a few
#: of these modules) does not pay for the others (the live classifiers, the process and journald readers)
_HOMES = {
    "LogAnalyzer": "analyzer",
    "classify_line": "classify",
    "Diagnosis": "diagnose",
    "diagnose": "diagnose",
    "CacheEvent": "model",
    "ClassifiedLine": "model",
    "FeedResult": "model",
    "LineKind": "model",
    "JournaldSource": "process",
    "ProcessSource": "process",
    "scan_file": "scan",
    "DirectoryFollower": "sources",
    "FileFollower": "sources",
    "LogReader": "sources",
    "open_source": "sources",
    "strip_ansi": "text",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kvswitch.logs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kvswitch.logs.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CacheEvent",
    "ClassifiedLine",
    "Diagnosis",
    "DirectoryFollower",
    "FeedResult",
    "FileFollower",
    "JournaldSource",
    "LineKind",
    "LogAnalyzer",
    "LogReader",
    "ProcessSource",
    "classify_line",
    "diagnose",
    "open_source",
    "scan_file",
    "strip_ansi",
]
