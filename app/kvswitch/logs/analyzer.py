"""The stateful reader the panel and the CLI feed line by line."""

from __future__ import annotations

from kvswitch.logs.classify import run_parsers, to_classified
from kvswitch.logs.model import CacheEvent, FeedResult, kind_for_verdict
from kvswitch.logs.parsers import parsers_for, server_name
from kvswitch.logs.text import clean_line
from kvswitch.logs.tracker import RequestTracker


class LogAnalyzer:
    """Classifies each line and assembles completed requests across lines.

    ``kind_hint`` is the profile kind (its server module names the log formats to parse);
    without it every parser runs. The line that completes a request takes the request's verdict as its
    kind, so the panel colours the ``stop processing`` line green or red.
    """

    def __init__(self, kind_hint: str | None = None) -> None:
        self.kind_hint = kind_hint
        self._parsers = parsers_for(kind_hint)
        self._tracker = RequestTracker(server_name(kind_hint))
        self._last_line = 0

    def feed(self, line: str, line_no: int) -> FeedResult:
        text = clean_line(line)
        parsed = run_parsers(text, self._parsers)
        events: list[CacheEvent] = []
        for fact in parsed.facts:
            events.extend(self._tracker.apply(fact, line_no))
        self._last_line = line_no
        kind = kind_for_verdict(events[-1].verdict) if events else None
        return FeedResult(line=to_classified(text, parsed, kind), events=events)

    def note_line(self, line_no: int) -> None:
        """A line skipped without parsing (it has no fact): only its number matters, for ``flush``."""
        self._last_line = line_no

    def flush(self) -> list[CacheEvent]:
        return self._tracker.flush(self._last_line)
