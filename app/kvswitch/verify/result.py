"""What a verify run hands back to the CLI and the window: plain, frozen and JSON-ready."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kvswitch.core import verdicts

HIT = "HIT"
PARTIAL = "PARTIAL"
MISS = "MISS"
UNKNOWN = "UNKNOWN"
ERROR = "ERROR"
VERDICTS = (HIT, PARTIAL, MISS, UNKNOWN, ERROR)

#: the live log panel's thresholds (one place: ``core.verdicts``), so both say the same thing
HIT_RATIO = verdicts.HIT_RATIO
MISS_RATIO = verdicts.MISS_RATIO

#: ``kvswitch verify`` exit status per verdict (documented in the CLI help)
EXIT_CODES = {HIT: 0, PARTIAL: 1, MISS: 1, UNKNOWN: 3, ERROR: 4}


def verdict_for(cached: int, prompt: int) -> str:
    """``core.verdicts.verdict_for`` in verify's upper-case spelling."""
    return verdicts.verdict_for(cached, prompt).upper()


@dataclass(frozen=True)
class ReplayCase:
    """The second of two Claude Code-shaped conversations: how much of its prompt the server kept."""

    label: str
    cached_tokens: int | None
    prompt_tokens: int | None
    verdict: str
    source: str | None = None

    @property
    def reuse_ratio(self) -> float | None:
        if self.cached_tokens is None or not self.prompt_tokens:
            return None
        return self.cached_tokens / self.prompt_tokens


@dataclass(frozen=True)
class ReplayResult:
    """ "As Claude Code sends it": two conversations with the billing header, two without.

    ``header_breaks_prefix`` is True when the server keeps clearly more of the prompt without the
    header; ``diagnosis`` explains the first divergence of the two header-on requests.
    """

    with_header: ReplayCase | None
    without_header: ReplayCase | None
    header_breaks_prefix: bool | None
    message: str
    diagnosis: str | None = None
    fix_env: dict[str, str] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("with_header", "without_header"):
            case = getattr(self, key)
            if case is not None:
                data[key]["reuse_ratio"] = case.reuse_ratio
        return data


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of one verify run.

    ``verdict`` is HIT / PARTIAL / MISS (the server's own numbers decided), UNKNOWN (it answered but
    reports no cache numbers), or ERROR (no usable answer; ``message`` has the server's words).
    ``cached_tokens``/``prompt_tokens`` describe the warm request; ``evidence`` lists every number seen,
    the deciding one first.
    """

    verdict: str
    api: str | None = None
    cached_tokens: int | None = None
    prompt_tokens: int | None = None
    reuse_ratio: float | None = None
    ttft_cold_ms: float | None = None
    ttft_warm_ms: float | None = None
    speedup: float | None = None
    evidence: list[str] = field(default_factory=list)
    message: str = ""
    diagnosis: str | None = None
    fix_env: dict[str, str] | None = None
    claude_replay: ReplayResult | None = None
    server: str | None = None
    base_url: str | None = None
    model: str | None = None
    decided_by: str | None = None
    cold_cached_tokens: int | None = None
    cold_prompt_tokens: int | None = None
    #: which cache tier served the warm request's prefix, by the server's counters (a second cache tier)
    served_by: str | None = None
    #: the warm request's prompt tokens by tier, each a counter's delta (a server with a second cache tier;
    #: the keys are the server module's, its ``split(...).to_json()``, with the tier's ``chunk_size``);
    #: ``None`` without such a tier
    tiers: dict[str, Any] | None = None
    #: the same split in words (``prompt tokens by tier: ...``)
    tiers_text: str | None = None
    #: behind a router (``verify.instances``): the instance that ran the warm / the cold request, the one
    #: whose own counters moved (``None``: a single server, or no single instance's counter moved)
    instance: str | None = None
    cold_instance: str | None = None
    #: ``--explain``: why the warm request reused what it did where its prompt differs from the cold one
    #: (the tier's whole chunks below the first differing token)
    chunk_boundary: str | None = None
    #: what the second cache tier's settings and counters say went wrong for the warm request, with fixes
    tier_problems: list[str] = field(default_factory=list)
    #: how many requests this run made the server process, one it gave up waiting for included (the
    #: server finishes it anyway): the window attributes that many of the server log's requests to the
    #: verify, not to the user (``None``: not counted)
    requests_sent: int | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.verdict, 4)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["claude_replay"] = self.claude_replay.to_json() if self.claude_replay else None
        return data

    def describe(self) -> str:
        """The human summary printed by ``kvswitch verify``."""
        lines = [f"{self.verdict}: {self.message}"]
        where = " ".join(x for x in (self.server, self.api and f"via {self.api}", self.base_url) if x)
        if where:
            lines.append(f"  server: {where}" + (f" (model {self.model})" if self.model else ""))
        if self.cached_tokens is not None and self.prompt_tokens:
            lines.append(
                f"  reused: {self.cached_tokens} of {self.prompt_tokens} prompt tokens "
                f"({(self.reuse_ratio or 0):.1%})"
            )
        if self.tiers_text:
            lines.append(f"  {self.tiers_text}")
        if self.ttft_cold_ms is not None and self.ttft_warm_ms is not None:
            speed = f", {self.speedup:.1f}x" if self.speedup else ""
            lines.append(
                f"  time to first token: cold {self.ttft_cold_ms:.0f} ms, warm {self.ttft_warm_ms:.0f} ms"
                f"{speed}"
            )
        if self.instance or self.cold_instance:
            lines.append(f"  instances: cold request on {self.cold_instance or 'none known'}, "
                         f"warm request on {self.instance or 'none known'}")
        for problem in self.tier_problems:
            lines.append(f"  cache tier: {problem}")
        if self.chunk_boundary:
            lines.append(f"  chunk boundary: {self.chunk_boundary}")
        if self.evidence:
            lines.append("  evidence:" + "".join(f"\n    - {e}" for e in self.evidence))
        if self.diagnosis:
            lines.append(f"  why: {self.diagnosis}")
        if self.claude_replay is not None:
            lines.append(f"  as Claude Code sends it: {self.claude_replay.message}")
        if self.fix_env:
            lines.append(
                "  fix: set "
                + " ".join(f"{k}={v}" for k, v in self.fix_env.items())
                + " in the profile's env"
            )
        return "\n".join(lines)
