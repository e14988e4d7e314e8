"""Why did the server re-process the prompt? Find the first byte where two requests diverge.

A local server reuses its KV cache only up to the first token that differs, so the one question that
matters is *where* two requests stop being identical, in the order the chat template renders them.
Each request is cut into prompt parts (system blocks, tools, message content blocks) in that order;
the canonical serialisation is one line per part: ``<label> <compact JSON, sorted keys, UTF-8>``.
Offsets are byte offsets in that text, so they are stable whatever key order or spacing the client used.

``cache_control`` markers are left out: Claude Code moves them between turns, and they never reach the
rendered prompt. Fields outside the prompt (model, metadata, max_tokens...) are reported as notes only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError, KvSwitchError, UsageError
from kvswitch.core.fsutil import read_bytes
from kvswitch.core.strictparse import MAX_JSON_BYTES, parse_json
from kvswitch.verify.causes import name_cause
from kvswitch.verify.parts import PROMPT_KEYS, PromptPart, canonical, prompt_parts, serialise

__all__ = ["PrefixDiagnosis", "canonical", "diagnose_requests", "load_request", "prompt_parts", "serialise"]

SNIPPET_BYTES = 48


@dataclass(frozen=True)
class PrefixDiagnosis:
    """Where request B stops sharing its prompt prefix with request A, and why if the cause is known.

    ``offset`` is the byte offset of the first difference in B's canonical serialisation and
    ``part_offset`` the offset inside the part's JSON; ``identical_share`` is the fraction of B's prompt
    bytes before it. ``extends`` means B starts with the whole of A (a new turn): everything reusable.
    """

    identical: bool
    extends: bool
    part: str | None
    offset: int
    part_offset: int | None
    identical_bytes: int
    prompt_bytes: int
    identical_share: float
    snippet_common: str
    snippet_a: str
    snippet_b: str
    cause: str | None = None
    cause_text: str | None = None
    fix_env: dict[str, str] | None = None
    other_parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """A few plain lines for the terminal and the GUI."""
        if self.identical:
            lines = ["The two prompts are identical: the whole prompt can be reused."]
        elif self.extends:
            lines = [
                f"B continues A (append only): all {self.identical_bytes} bytes of A's prompt can be reused."
            ]
        else:
            lines = [
                f"First divergence: {self.part}, byte {self.part_offset} of the part "
                f"(byte {self.offset} of the prompt); {self.identical_share:.1%} of B's prompt is identical "
                f"before it ({self.identical_bytes} of {self.prompt_bytes} bytes).",
                *snippet_lines(self.snippet_common, self.snippet_a, self.snippet_b),
            ]
            if self.other_parts:
                shown = ", ".join(self.other_parts[:6]) + (" …" if len(self.other_parts) > 6 else "")
                lines.append(f"  other parts that differ: {shown}")
        return "\n".join(lines + closing_lines(self.cause_text, self.fix_env, self.notes))


def snippet_lines(common: str, a: str, b: str) -> list[str]:
    """The text just before a divergence and how A and B go on from there."""
    return [f"  same:  …{common}", f"  A:     {a}…", f"  B:     {b}…"]


def closing_lines(cause_text: str | None, fix_env: dict[str, str] | None, notes: list[str]) -> list[str]:
    """The cause, the fix and the notes, as every diagnosis ends."""
    lines = [f"Cause: {cause_text}"] if cause_text else []
    if fix_env:
        lines.append("Fix: set " + " ".join(f"{k}={v}" for k, v in fix_env.items()))
    return lines + [f"Note: {note}" for note in notes]


def diagnose_requests(a: dict[str, Any], b: dict[str, Any]) -> PrefixDiagnosis:
    """Compare request bodies (or recorder captures) A then B; B is the later request."""
    body_a, body_b = request_body(a), request_body(b)
    parts_a, parts_b = prompt_parts(body_a), prompt_parts(body_b)
    total_b = sum(len(p.line) for p in parts_b)
    notes = _non_prompt_notes(body_a, body_b)
    offset = 0
    for index, (pa, pb) in enumerate(zip(parts_a, parts_b, strict=False)):
        if pa.line == pb.line:
            offset += len(pb.line)
            continue
        last_of_a = index == len(parts_a) - 1
        if pa.label == pb.label and last_of_a and pb.data.startswith(pa.data.rstrip(b']}"')):
            # the last part of A grew (a longer prompt string / more text): still append-only
            common = len(pb.label) + 1 + _common_prefix(pa.data, pb.data)
            return _extends(offset + common, total_b, notes)
        return _diverged(parts_a, parts_b, index, offset, total_b, notes)
    if len(parts_a) == len(parts_b):
        return PrefixDiagnosis(True, False, None, offset, None, offset, total_b, 1.0, "", "", "", notes=notes)
    if len(parts_a) < len(parts_b):
        return _extends(offset, total_b, notes)
    # B is shorter: all of B is a prefix of A, fully reusable
    return PrefixDiagnosis(
        False,
        True,
        None,
        offset,
        None,
        offset,
        total_b,
        1.0,
        "",
        "",
        "",
        cause_text="B is a prefix of A (shorter request): all of it can be reused.",
        notes=notes,
    )


def _extends(identical: int, total_b: int, notes: list[str]) -> PrefixDiagnosis:
    share = identical / total_b if total_b else 1.0
    return PrefixDiagnosis(
        False, True, None, identical, None, identical, total_b, share, "", "", "", notes=notes
    )


def _diverged(
    parts_a: list[PromptPart],
    parts_b: list[PromptPart],
    index: int,
    offset: int,
    total_b: int,
    notes: list[str],
) -> PrefixDiagnosis:
    pa, pb = parts_a[index], parts_b[index]
    if pa.label != pb.label:
        part_offset = 0
        label = f"{pb.label} (A has {pa.label} here)"
        identical = offset
    else:
        part_offset = _common_prefix(pa.data, pb.data)
        label = pb.label
        identical = offset + len(pb.label) + 1 + part_offset
    cut = identical - offset - len(pb.label) - 1 if pa.label == pb.label else 0
    line_a, line_b = pa.data, pb.data
    snippet_common = _snippet(line_b[max(0, cut - SNIPPET_BYTES) : cut], from_end=True)
    snippet_a = _snippet(line_a[cut : cut + SNIPPET_BYTES])
    snippet_b = _snippet(line_b[cut : cut + SNIPPET_BYTES])
    others = _other_divergent(parts_a, parts_b, index)
    cause, text, fix = name_cause(parts_a, parts_b, index, cut)
    share = identical / total_b if total_b else 0.0
    return PrefixDiagnosis(
        False,
        False,
        label,
        identical,
        part_offset,
        identical,
        total_b,
        share,
        snippet_common,
        snippet_a,
        snippet_b,
        cause,
        text,
        fix,
        others,
        notes,
    )


def _common_prefix(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b))
    i = 0
    while i < limit and a[i] == b[i]:
        i += 1
    return i


def _snippet(data: bytes, *, from_end: bool = False) -> str:
    text = data.decode("utf-8", errors="ignore")  # a cut inside a multi-byte character is dropped
    return text.replace("\n", "\\n")[-SNIPPET_BYTES:] if from_end else text.replace("\n", "\\n")


def _other_divergent(parts_a: list[PromptPart], parts_b: list[PromptPart], index: int) -> list[str]:
    by_label = {p.label: p.data for p in parts_a}
    others = [p.label for p in parts_b[index + 1 :] if by_label.get(p.label) != p.data]
    return others


def _non_prompt_notes(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    keys = [k for k in sorted(set(a) | set(b)) if k not in PROMPT_KEYS and a.get(k) != b.get(k)]
    notes = []
    if "model" in keys:
        notes.append(f"the model differs ({a.get('model')!r} → {b.get('model')!r}): caches are per model.")
        keys.remove("model")
    if keys:
        notes.append("fields outside the prompt differ (no effect on reuse): " + ", ".join(keys))
    return notes


def request_body(obj: Any) -> dict[str, Any]:
    """Accept a bare request body or a recorder capture ``{method, path, headers, body}``."""
    if isinstance(obj, dict) and "body" in obj and ("path" in obj or "method" in obj):
        body = obj["body"]
        if isinstance(body, str):
            try:
                body = parse_json("the capture's body", body)
            except ConfigParseError as exc:
                reason = f"the capture's body is not JSON ({exc.reason}); nothing to compare"
                raise UsageError(reason) from None
        obj = body
    if not isinstance(obj, dict):
        raise UsageError("expected a JSON object (a request body or a recorded capture)")
    return obj


def load_request(path: Path) -> dict[str, Any]:
    """Read a request body or capture file, with a clear error for anything else."""
    try:
        raw = read_bytes(path, MAX_JSON_BYTES)
    except KvSwitchError as exc:
        raise UsageError(str(exc)) from None
    if raw is None:
        raise UsageError(f"{path}: no such file")
    try:
        data = parse_json(path, raw)  # capped and strict: 100,000 levels of nesting are one clear error
    except ConfigParseError as exc:
        raise UsageError(str(exc)) from None
    try:
        return request_body(data)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
