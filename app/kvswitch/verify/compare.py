"""A/B across profiles: ``kvswitch compare PROFILE_A PROFILE_B --client claude|codex|opencode``.

The second habit of people who debug a cache: run the same round against another backend (the local
server and a cloud vendor, or two server configurations) and put the numbers side by side. The same
scripted session runs against both; per turn each side shows its own backend's numbers (a local
server's ``timings``, a vendor's usage fields), the time to the first byte and the client's whole turn.
Both runs go into their profiles' verify history, like any ``verify --client``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.verify.client_report import ClientReport, TurnVerdict
from kvswitch.verify.records import run_client_check


@dataclass(frozen=True)
class CompareReport:
    a: ClientReport
    b: ClientReport

    @property
    def exit_code(self) -> int:
        return 0

    def _side(self, report: ClientReport) -> dict[tuple[int, int], dict[str, Any]]:
        wall = {(c, t): ms for c, t, ms in report.session.turn_ms}
        return {
            (t.conversation, t.turn): _turn_json(t, wall.get((t.conversation, t.turn))) for t in report.turns
        }

    def rows(self) -> list[dict[str, Any]]:
        a, b = self._side(self.a), self._side(self.b)
        return [
            {"conversation": key[0], "turn": key[1], "a": a.get(key), "b": b.get(key)}
            for key in sorted(set(a) | set(b))
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.a.session.client,
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "turns": self.rows(),
        }

    def describe(self) -> str:
        label = self.a.session.label
        lines = [
            f"{label} {self.a.session.version}: {self.a.profile!r} ({self.a.verdict.upper()}) vs "
            f"{self.b.profile!r} ({self.b.verdict.upper()}), each backend's own numbers"
        ]
        header = [
            "turn",
            "A prompt",
            "A cached",
            "A hit",
            "A TTFT",
            "A turn",
            "B prompt",
            "B cached",
            "B hit",
            "B TTFT",
            "B turn",
        ]
        table = [header]
        for row in self.rows():
            cells = [f"{row['conversation']}.{row['turn']}"]
            for side in (row["a"], row["b"]):
                cells.extend(_cells(side))
            table.append(cells)
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        lines.extend(
            "  " + "  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in table
        )
        return "\n".join(lines)


def _turn_json(turn: TurnVerdict, wall_ms: float | None) -> dict[str, Any]:
    prompt, cached = turn.prompt_tokens, turn.cached_tokens
    return {
        "verdict": turn.verdict,
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "hit_rate": cached / prompt if prompt and cached is not None else None,
        "ttft_ms": turn.prompt_ms,
        "turn_ms": wall_ms,
    }


def _cells(side: dict[str, Any] | None) -> list[str]:
    if side is None:
        return ["-"] * 5
    rate = side["hit_rate"]
    return [
        _n(side["prompt_tokens"]),
        _n(side["cached_tokens"]),
        "?" if rate is None else f"{rate:.1%}",
        "?" if side["ttft_ms"] is None else f"{side['ttft_ms'] / 1000:.2f} s",
        "?" if side["turn_ms"] is None else f"{side['turn_ms'] / 1000:.1f} s",
    ]


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def compare(
    paths: AppPaths,
    a: Profile,
    b: Profile,
    binary: Path,
    *,
    client: str,
    timeout: float,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> CompareReport:
    """Run the scripted session against A, then against B (``timeout`` each); both are remembered."""
    step = on_step or (lambda _text: None)
    reports = []
    for profile in (a, b):

        def side_step(text: str, name: str = profile.name) -> None:
            step(f"{name}: {text}")

        reports.append(
            run_client_check(
                paths, profile, binary, timeout=timeout, client=client, cancel=cancel, on_step=side_step
            )
        )
    return CompareReport(reports[0], reports[1])
