"""Subtract settings until only the ones that matter are left: ``kvswitch verify PROFILE --ablate``.

People who debug a cache take settings away one at a time and watch what the server re-processes. This
does it with the real client: the scripted session (``client_run``) runs once with the profile as it is
and once without each of its env settings in turn (and, for candidates the caller names, once with each
added). Every number is the server's own; a setting *matters* when taking it away (or adding it) moves
the re-processed tokens of a continued turn or of a new conversation by more than ``SIGNIFICANT``.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kvswitch.core.models import Profile
from kvswitch.verify.client_report import ClientReport, build_report
from kvswitch.verify.client_run import run_session
from kvswitch.verify.tokendiag import RenderError, ServerRenderer

#: a difference in re-processed tokens below this is noise of the client's own text (a date, a count)
SIGNIFICANT = 100


@dataclass(frozen=True)
class Measurement:
    """One scripted session, reduced to what a settings table shows."""

    client_version: str
    first_prompt_tokens: int | None
    inside_reprocessed_max: int | None
    new_conversation_prompt: int | None
    new_conversation_cached: int | None
    new_conversation_reprocessed: int | None
    new_conversation_cause: str | None
    #: time to the first byte of the continued turns (the slowest) and of the new conversation
    ttft_continued_ms: float | None = None
    ttft_new_ms: float | None = None
    verdict: str = "unknown"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def measure(report: ClientReport) -> Measurement:
    turns = {(t.conversation, t.turn): t for t in report.turns}
    inside = [turns[(1, n)] for n in (2, 3) if (1, n) in turns]
    new = turns.get((2, 1))
    first = turns.get((1, 1))
    ttfts = [t.prompt_ms for t in inside if t.prompt_ms is not None]
    return Measurement(
        client_version=report.session.version,
        first_prompt_tokens=first.prompt_tokens if first else None,
        inside_reprocessed_max=max((t.reprocessed_tokens or 0) for t in inside) if inside else None,
        new_conversation_prompt=new.prompt_tokens if new else None,
        new_conversation_cached=new.cached_tokens if new else None,
        new_conversation_reprocessed=new.reprocessed_tokens if new else None,
        new_conversation_cause=(new.diagnosis or {}).get("cause") if new else None,
        ttft_continued_ms=max(ttfts) if ttfts else None,
        ttft_new_ms=new.prompt_ms if new else None,
        verdict=report.verdict,
    )


def effect(with_it: Measurement, without: Measurement) -> str:
    """What the setting does, from the run with it against the run without: re-processed tokens."""
    inside = (without.inside_reprocessed_max or 0) - (with_it.inside_reprocessed_max or 0)
    new = (without.new_conversation_reprocessed or 0) - (with_it.new_conversation_reprocessed or 0)
    if inside > SIGNIFICANT:
        return f"saves {inside} re-processed tokens per turn inside a conversation"
    if inside < -SIGNIFICANT:
        return f"costs {-inside} re-processed tokens per turn inside a conversation"
    if new > SIGNIFICANT:
        return f"saves {new} re-processed tokens per new conversation"
    if new < -SIGNIFICANT:
        return f"costs {-new} re-processed tokens per new conversation"
    if with_it.first_prompt_tokens != without.first_prompt_tokens:
        return "changes the prompt, not its reuse"
    return "no effect measured"


@dataclass(frozen=True)
class AblationRow:
    setting: str
    value: str
    #: whether the profile has it (the trial took it away) or it is a candidate (the trial added it)
    in_profile: bool
    with_it: Measurement
    without: Measurement

    @property
    def effect(self) -> str:
        return effect(self.with_it, self.without)

    @property
    def matters(self) -> bool:
        return self.effect.startswith(("saves", "costs"))

    def to_json(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "value": self.value,
            "in_profile": self.in_profile,
            "with": self.with_it.to_json(),
            "without": self.without.to_json(),
            "effect": self.effect,
            "matters": self.matters,
        }


@dataclass(frozen=True)
class AblationReport:
    profile: str
    client: str
    baseline: Measurement
    rows: list[AblationRow]

    @property
    def exit_code(self) -> int:
        return 0

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "client": self.client,
            "client_version": self.baseline.client_version,
            "baseline": self.baseline.to_json(),
            "settings": [row.to_json() for row in self.rows],
        }

    def table(self) -> list[list[str]]:
        """Header and one line per setting: without → with, as the README's settings table."""
        rows = [
            [
                "setting",
                "re-processed per continued turn",
                "re-processed per new conversation",
                "TTFT new conversation (ms)",
                "verdict",
                "this setting",
            ]
        ]
        for row in self.rows:
            a, b = row.without, row.with_it
            rows.append(
                [
                    f"{row.setting}={row.value}",
                    f"{_n(a.inside_reprocessed_max)} → {_n(b.inside_reprocessed_max)}",
                    f"{_n(a.new_conversation_reprocessed)} → {_n(b.new_conversation_reprocessed)}",
                    f"{_ms(a.ttft_new_ms)} → {_ms(b.ttft_new_ms)}",
                    f"{a.verdict} → {b.verdict}",
                    ("matters: " if row.matters else "does not matter: ") + row.effect,
                ]
            )
        return rows

    def describe(self) -> str:
        head = (
            f"{self.client} {self.baseline.client_version} through profile {self.profile!r}, each "
            "setting without → with (the server's re-processed prompt tokens):"
        )
        widths = [max(len(line[i]) for line in self.table()) for i in range(6)]
        lines = [head]
        for line in self.table():
            lines.append(
                "  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            )
        matter = [row.setting for row in self.rows if row.matters]
        lines.append("Settings that matter: " + (", ".join(matter) if matter else "none"))
        return "\n".join(lines)

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(
            [
                "setting",
                "value",
                "in_profile",
                "matters",
                "effect",
                "inside_without",
                "inside_with",
                "new_without",
                "new_with",
                "ttft_new_ms_without",
                "ttft_new_ms_with",
            ]
        )
        for row in self.rows:
            writer.writerow(
                [
                    row.setting,
                    row.value,
                    row.in_profile,
                    row.matters,
                    row.effect,
                    row.without.inside_reprocessed_max,
                    row.with_it.inside_reprocessed_max,
                    row.without.new_conversation_reprocessed,
                    row.with_it.new_conversation_reprocessed,
                    row.without.ttft_new_ms,
                    row.with_it.ttft_new_ms,
                ]
            )
        return out.getvalue()


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


def run_measured(
    profile: Profile,
    binary: Path,
    *,
    client: str,
    timeout: float,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> ClientReport:
    """One scripted session judged with the server's tokens where it can render them."""
    session = run_session(profile, binary, timeout=timeout, on_step=on_step, cancel=cancel, client=client)
    try:
        renderer: ServerRenderer | None = ServerRenderer(
            profile.base_url, timeout=min(120.0, timeout), kind=profile.kind
        )
    except RenderError:
        renderer = None
    return build_report(profile, session, renderer)


def ablate(
    profile: Profile,
    binary: Path,
    *,
    client: str,
    timeout: float,
    candidates: Mapping[str, str] | None = None,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> AblationReport:
    """The profile as it is, then without each of its env settings, then with each candidate added.

    ``timeout`` bounds each session.
    """
    step = on_step or (lambda _text: None)

    def run(label: str, env: dict[str, str]) -> Measurement:
        variant = profile.model_copy(update={"env": env}, deep=True)
        report = run_measured(
            variant,
            binary,
            client=client,
            timeout=timeout,
            on_step=lambda text: step(f"{label}: {text}"),
            cancel=cancel,
        )
        return measure(report)

    baseline = run("as the profile is", dict(profile.env))
    rows: list[AblationRow] = []
    for name, value in profile.env.items():
        without = run(f"without {name}", {k: v for k, v in profile.env.items() if k != name})
        rows.append(AblationRow(name, value, True, baseline, without))
    for name, value in (candidates or {}).items():
        if name in profile.env:
            continue
        with_it = run(f"with {name}={value}", {**profile.env, name: value})
        rows.append(AblationRow(name, value, False, with_it, baseline))
    return AblationReport(profile.name, client, baseline, rows)
