"""llama.cpp ``llama-server`` lines, every era: 2023 ``LOG_TEE``, 2024 JSON, ``SLT_*`` text (with or
without ``--log-timestamps``/``--log-prefix``), ``--log-jsonl`` and ``-lv 4`` trace lines.

The slot prefix is searched anywhere in the line, not anchored, because LM Studio, Ollama, Docker and
``journalctl`` all put their own text in front of it. The message rules are shared by every era: the
2024 JSON logs carry the same message texts, with slot and task in fields.
"""

from __future__ import annotations

import re

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers.base import MAX_DIGITS, Fact, Parsed, What, bounded, ratio_kind, status_kind

SERVER = "llama.cpp"
#: text of this format the byte-level scanner does not read, so a file holding some takes the general
#: path (each pattern starts with a literal; a line start is ``\\A`` or ``\\n``): 2024 JSON lines (not
#: ``--log-jsonl``'s ``log`` and ``fit_memory_breakdown`` records, which it reads), a ``--log-jsonl``
#: message with a newline inside (a slot prefix carried over to unprefixed parts), and the 2023
#: ``slot N: in cache`` / release lines
GENERAL_ONLY = (
    rb"\A[ \t]*\{(?!\"type\":\"(?:log|fit_memory_breakdown)\")",
    rb"\n[ \t]*\{(?!\"type\":\"(?:log|fit_memory_breakdown)\")",
    rb"\A\{\"type\":\"log\"[^\n]*\\n(?!\"\})", rb"\n\{\"type\":\"log\"[^\n]*\\n(?!\"\})",
    rb"slot \d+ ?: in cache", rb"tokens in cache\)",
)

#: a line that contains none of these yields no fact; the fast scanner relies on it (tested)
ANCHORS = (
    "prompt eval time",
    "eval time",
    "stop processing",
    "memory_seq_rm",
    "kv cache rm",
    "selected slot",
    "processing task",
    "is processing",
    "new prompt",
    "prompt tokenized",
    "need to evaluate",
    "forcing full",
    "orcing full",  # "Forcing full prompt re-processing" as LM Studio and older builds print it
    "ORCING FULL",
    "does not match fully",
    "failed to truncate",
    "checkpoint",
    "reusing chunk",
    "cache reuse",
    "tokens in cache",
    "in cache:",
    "clearing",
    "failed to load prompt",
    "found better prompt",
    "print_timing",
    "slot released",
    "slot progression",
)

#: llama-server's own clock in front of a line: ``M.SS.mmm.uuu`` (minutes, seconds, ms, µs since the server
#: started; ``--log-timestamps``, on by default in b11434) or ``--log-jsonl``'s ``"time"`` (µs since start)
_CLOCK = re.compile(r'^\s*(\d{1,6})\.(\d\d)\.(\d{3})\.(\d{3}) [IWEDT] |^\{"type":"log","time":(\d{1,15}),')
_TS_LEVEL = re.compile(r"^\s*(?:\d+\.\d\d\.\d{3}\.\d{3} )?([IWEDT]) ")
#: slot and task are not ``bounded``: a line whose slot or task is too long to be a number is no fact at all
#: (``_numbers_fit``), as in the fast scanner, rather than a fact without its slot
_PREFIX = re.compile(r"\b(slot|srv) {1,30}([\w()~]{1,25}): (?:id +(\d+) \| task (-?\d+) \|)? ?")
_ERA_A_CACHE = re.compile(bounded(r"\bslot (\d+) ?: in cache: (\d+) tokens \| to process: (\d+) tokens"))
_ERA_A_START = re.compile(bounded(r"\bslot (\d+) is processing \[task id: (\d+)\]"))
_ERA_A_RELEASE = re.compile(bounded(r"\bslot (\d+) released \((\d+) tokens in cache\)"))

_PROMPT_EVAL = re.compile(bounded(r"prompt eval time = +(\d+(?:\.\d+)?) ms / +(\d+) tokens"))
_GEN_EVAL = re.compile(bounded(r"(?<!prompt )\beval time = +(\d+(?:\.\d+)?) ms / +(\d+) (?:tokens|runs)"))
_TIMING = re.compile(
    r"total time = +[\d.]+ ms(?: / +\d+ tokens)?|graphs reused = +\d+|draft acceptance(?: rate)? = [^,]*"
    r"|prompt processing(?: progress)?, n_(?:past|tokens) = +\d+.*|prompt done, n_\w+ = \d+.*|n_gen = +\d+.*"
)
_RELEASE = re.compile(bounded(r"stop processing: n_(?:tokens|past) = (\d+), truncated = (\d+)"))
_CACHED = re.compile(
    bounded(r"(?:cached )?n_tokens = (\d+), memory_seq_rm \[(\d+), end\)|kv cache rm \[(\d+), end\)")
)
_NEW_PROMPT = re.compile(bounded(
    r"(?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+, "
    r"(?:task\.)?n_(?:prompt_)?tokens = (\d+)"
))
_SELECT = re.compile(
    bounded(r"selected slot by (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = (\d+(?:\.\d+)?))?")
)
_START = re.compile(r"processing task|slot is processing task")
_FULL_HIT = re.compile(r"need to evaluate at least 1 token")
_REQUEST = re.compile(r"\b(?:done )?request: ([A-Z]+) (\S+) (?:\S+ )?(\d{3})\b")
#: cache fields other builds and wrappers print in their own spellings (``common_prefix 0``, ``n_past: 12``,
#: ``new_tokens = 5``, ``sim_best = 0.98``); they colour a line but never become numbers, because what they
#: count differs between builds (a forced re-processing may still print a non-zero common prefix)
_FIELD = re.compile(
    bounded(r"\b(common_prefix|n_past|new_tokens|f_sim_best|sim_best)\b *[=:]? *(\d+(?:\.\d+)?)\b"),
    re.IGNORECASE,
)

#: (pattern, reason shown to the user, line kind)
_REASONS: tuple[tuple[re.Pattern[str], str, LineKind], ...] = (
    (re.compile(r"kv cache reuse failed\W*forcing full prompt re-processing[^(]*", re.IGNORECASE),
     "KV cache reuse failed: the whole prompt was processed again", LineKind.MISS),
    (re.compile(r"forcing full prompt re-processing[^(]*", re.IGNORECASE),
     "full re-processing forced: SWA or hybrid/recurrent model without a usable checkpoint", LineKind.MISS),
    (re.compile(r"common part does not match fully", re.IGNORECASE),
     "the cached prompt and the new one differ (common part does not match fully)", LineKind.WARNING),
    (re.compile(r"failed to truncate tokens.*clearing the memory"),
     "the cache could not be truncated (hybrid/recurrent model): memory cleared", LineKind.MISS),
    (re.compile(r"erased invalidated context checkpoint"), "a context checkpoint was invalidated",
     LineKind.WARNING),
    (re.compile(r"failed to restore context checkpoint"), "a context checkpoint could not be restored",
     LineKind.MISS),
    (re.compile(r"restored context checkpoint"), "restored from a context checkpoint", LineKind.WARNING),
    (re.compile(r"clearing (?:slot|prompt) with \d+ tokens"), "the slot's cached prompt was cleared",
     LineKind.WARNING),
    (re.compile(r"failed to load prompt from cache"), "the RAM prompt cache could not be loaded",
     LineKind.WARNING),
    (re.compile(r"found better prompt with f_keep = [\d.]+, (?:f_)?sim = [\d.]+"),
     "restored from the host-RAM prompt cache", LineKind.PARTIAL),
    (re.compile(r"reusing chunk with size \d+"), "chunks reused by KV shifting (--cache-reuse)",
     LineKind.PARTIAL),
    (re.compile(r"cache reuse is not supported"), "cache reuse (KV shifting) is not supported by this model",
     LineKind.WARNING),
)


#: the literal start of each reason pattern: the fast scanner finds reason lines by these (derived)
REASON_PREFIXES = tuple(
    re.match(r"[\w \-]+", pattern.pattern).group() for pattern, _r, _k in _REASONS  # type: ignore[union-attr]
)


#: the same starts as a bytes alternation, each with its pattern's own case rule: the fast scanner's line
#: regex finds reason text by it, so both paths read every spelling the grammar reads
REASON_START = b"|".join(
    b"(?i:%s)" % re.escape(prefix).encode() if pattern.flags & re.IGNORECASE else re.escape(prefix).encode()
    for prefix, (pattern, _r, _k) in zip(REASON_PREFIXES, _REASONS, strict=True)
)


#: warnings that say nothing is wrong: llama-server b11434 skips the Responses tool types it cannot serve
#: (Codex sends ``namespace`` and ``web_search`` with every request) and answers the rest normally
_HARMLESS_NOTES = re.compile(r"unsupported Responses tool type '[^']{1,80}' skipped")


def is_harmless_note(text: str) -> bool:
    """Whether a warning line is a note a user need not act on (shown plain, not as a warning)."""
    return _HARMLESS_NOTES.search(text) is not None


def server_clock_ms(text: str) -> float | None:
    """The server's own clock on an ANSI-free line (ms since it started), or ``None`` when it prints none:
    b11434 prints no wall-clock time, so this is the only time a request's lines carry."""
    m = _CLOCK.match(text)
    if m is None:
        return None
    if m.group(5) is not None:
        return int(m.group(5)) / 1000
    minutes, seconds, millis, micros = (int(m.group(i)) for i in range(1, 5))
    return (minutes * 60 + seconds) * 1000 + millis + micros / 1000


def reason_for(text: str) -> str | None:
    """The plain-words reason for a cache-relevant warning line (used by the fast scanner too)."""
    for pattern, reason, _kind in _REASONS:
        if pattern.search(text):
            return reason
    return None


def parse(text: str) -> Parsed | None:
    """Facts and kind of one ANSI-free line, or ``None`` when it is not a llama.cpp line we understand."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _parse_json(text)
    parsed = Parsed()
    level = _TS_LEVEL.match(text)
    if level:
        letter = level.group(1)
        if letter == "E":
            parsed.mark(level, LineKind.ERROR, 1)
        elif letter == "W" and not is_harmless_note(text):
            parsed.mark(level, LineKind.WARNING, 1)
    slot: int | None = None
    task: int | None = None
    offset = 0
    prefix = _PREFIX.search(text)
    if prefix:
        offset = prefix.end()
        if prefix.group(3) is not None:
            if not _numbers_fit(prefix):
                return None
            slot = int(prefix.group(3))
            task = int(prefix.group(4))
        if prefix.group(2).startswith("print_timing") and not text[offset:].strip():
            parsed.facts.append(Fact(What.TIMING_HEADER, slot, task))
            parsed.raise_kind(LineKind.TIMING)
            return parsed
    elif "slot" in text:
        _era_a(text, parsed)
    _message(text[offset:], slot, task, parsed, offset)
    if parsed.facts or parsed.kind is not LineKind.OTHER or prefix:
        return parsed
    return None


def _numbers_fit(prefix: re.Match[str]) -> bool:
    """Whether the prefix's slot and task are numbers (at most ``MAX_DIGITS`` digits)."""
    return len(prefix.group(3)) <= MAX_DIGITS and len(prefix.group(4).lstrip("-")) <= MAX_DIGITS


def _era_a(text: str, parsed: Parsed) -> None:
    """Late-2023 ``LOG_TEE`` lines: ``slot 0 : in cache: 12 tokens | to process: 30 tokens``."""
    if m := _ERA_A_CACHE.search(text):
        slot = int(m.group(1))
        cached, todo = int(m.group(2)), int(m.group(3))
        parsed.facts.append(Fact(What.START, slot))
        parsed.facts.append(Fact(What.PROMPT_SIZE, slot, n1=cached + todo))
        parsed.facts.append(Fact(What.CACHED, slot, n1=cached))
        parsed.spans.append((*m.span(2), LineKind.HIT if cached else LineKind.MISS))
        parsed.mark(m, LineKind.TIMING, 3)
    elif m := _ERA_A_START.search(text):
        parsed.facts.append(Fact(What.START, int(m.group(1)), int(m.group(2))))
        parsed.mark(m, LineKind.REQUEST)
    elif m := _ERA_A_RELEASE.search(text):
        parsed.facts.append(Fact(What.RELEASE, int(m.group(1)), n1=int(m.group(2)), n2=0))
        parsed.mark(m, LineKind.TIMING)


def _message(msg: str, slot: int | None, task: int | None, parsed: Parsed, offset: int) -> None:
    """The rules shared by every era, applied to the text after the slot prefix."""
    facts = parsed.facts
    if "eval time" in msg:
        if m := _PROMPT_EVAL.search(msg):
            facts.append(Fact(What.PROMPT_EVAL, slot, task, n1=int(m.group(2)), ms=float(m.group(1))))
            parsed.mark(m, LineKind.TIMING, offset=offset)
        elif m := _GEN_EVAL.search(msg):
            facts.append(Fact(What.GEN_EVAL, slot, task, n1=int(m.group(2)), ms=float(m.group(1))))
            parsed.mark(m, LineKind.TIMING, offset=offset)
        return
    if "stop processing" in msg and (m := _RELEASE.search(msg)):
        facts.append(Fact(What.RELEASE, slot, task, n1=int(m.group(1)), n2=int(m.group(2))))
        parsed.mark(m, LineKind.TIMING, offset=offset)
        return
    if ("memory_seq_rm" in msg or "kv cache rm" in msg) and (m := _CACHED.search(msg)):
        group = 1 if m.group(1) is not None else 3
        cached = int(m.group(group))
        facts.append(Fact(What.CACHED, slot, task, n1=cached))
        parsed.spans.append((m.start() + offset, m.end() + offset, LineKind.HIT if cached else LineKind.MISS))
        if not cached:
            parsed.raise_kind(LineKind.MISS)
        return
    if "selected slot" in msg and (m := _SELECT.search(msg)):
        how = {"LCP similarity": "lcp", "LRU": "lru", "id": "id"}[m.group(1)]
        sim = round(float(m.group(2)) * 1000) if m.group(2) else None
        facts.append(Fact(What.SELECT, slot, task, n1=sim, note=how))
        parsed.mark(m, LineKind.REQUEST, offset=offset)
        return
    if ("new prompt" in msg or "prompt tokenized" in msg) and (m := _NEW_PROMPT.search(msg)):
        facts.append(Fact(What.PROMPT_SIZE, slot, task, n1=int(m.group(1))))
        parsed.mark(m, LineKind.REQUEST, offset=offset)
        return
    if "need to evaluate" in msg and (m := _FULL_HIT.search(msg)):
        facts.append(Fact(What.FULL_HIT, slot, task))
        parsed.mark(m, LineKind.HIT, offset=offset)
        return
    if "processing task" in msg and (m := _START.search(msg)):
        facts.append(Fact(What.START, slot, task))
        parsed.mark(m, LineKind.REQUEST, offset=offset)
        return
    for pattern, reason, kind in _REASONS:
        if m := pattern.search(msg):
            facts.append(Fact(What.REASON, slot, task, note=reason))
            parsed.mark(m, kind, offset=offset)
            _fields(msg, parsed, offset)
            return
    if m := _TIMING.search(msg):
        parsed.mark(m, LineKind.TIMING, offset=offset)
        return
    if "request: " in msg and (m := _REQUEST.search(msg)):
        status = int(m.group(3))
        parsed.mark(m, status_kind(status), offset=offset)
        return
    _fields(msg, parsed, offset)


def _fields(msg: str, parsed: Parsed, offset: int) -> None:
    """Spans for pasted cache fields: a kept prefix of 0 is a miss; with ``new_tokens`` beside it, the
    share decides; a similarity is only a routing decision (a request line), never a hit."""
    found = list(_FIELD.finditer(msg))
    if not found:
        return
    values = {m.group(1).lower(): float(m.group(2)) for m in found}
    kept = values.get("common_prefix", values.get("n_past"))
    new = values.get("new_tokens")
    for m in found:
        name = m.group(1).lower()
        if name.endswith("sim_best"):
            kind = LineKind.REQUEST
        elif kept is not None and new is not None:
            kind = ratio_kind(int(kept), int(kept + new))
        elif name != "new_tokens" and not float(m.group(2)):
            kind = LineKind.MISS
        else:
            kind = LineKind.TIMING
        parsed.mark(m, kind, offset=offset)


def _field_int(fields: dict[str, object], *names: str) -> int | None:
    for name in names:
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _parse_json(text: str) -> Parsed | None:
    """2024 structured logs (``{"msg": ..., "id_slot": ...}``) and ``--log-jsonl`` (``{"type":"log"}``)."""
    try:
        obj = strict_json(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    msg = obj.get("msg")
    if not isinstance(msg, str):
        return None
    parsed = Parsed()
    level = str(obj.get("level", "")).lower()
    if level.startswith("err"):
        parsed.raise_kind(LineKind.ERROR)
    elif level.startswith("warn") and not is_harmless_note(msg):
        parsed.raise_kind(LineKind.WARNING)
    if obj.get("type") == "log":
        _jsonl_message(text, msg, parsed)
        return parsed
    slot = _field_int(obj, "id_slot", "slot_id")
    task = _field_int(obj, "id_task", "task_id")
    offset = max(text.find(msg[:40]), 0)
    if "kv cache rm" in msg and (p0 := _field_int(obj, "p0")) is not None:
        parsed.facts.append(Fact(What.CACHED, slot, task, n1=p0))
        parsed.spans.append((offset, offset + len(msg), LineKind.HIT if p0 else LineKind.MISS))
    elif msg == "slot released" and (n_past := _field_int(obj, "n_past")) is not None:
        truncated = 1 if obj.get("truncated") else 0
        parsed.facts.append(Fact(What.RELEASE, slot, task, n1=n_past, n2=truncated))
        parsed.raise_kind(LineKind.TIMING)
    elif msg == "slot progression" and (n_past := _field_int(obj, "n_past")) is not None:
        parsed.facts.append(Fact(What.CACHED, slot, task, n1=n_past))
    elif "prompt eval time" in msg and (done := _field_int(obj, "n_prompt_tokens_processed")) is not None:
        ms = obj.get("t_prompt_processing")
        parsed.facts.append(Fact(What.PROMPT_EVAL, slot, task, n1=done,
                                 ms=float(ms) if isinstance(ms, int | float) else None))
        parsed.spans.append((offset, offset + len(msg), LineKind.TIMING))
        parsed.raise_kind(LineKind.TIMING)
    else:
        _message(msg, slot, task, parsed, offset)
    if ts := obj.get("timestamp"):
        parsed.facts.append(Fact(What.CLOCK, note=_epoch_iso(ts)))
    return parsed


def _jsonl_message(text: str, msg: str, parsed: Parsed) -> None:
    """``--log-jsonl``: the message is the classic text line, print_timing blocks included."""
    slot: int | None = None
    task: int | None = None
    offset = max(text.find('"msg"'), 0)
    for part in msg.split("\n"):
        if not part.strip():
            continue
        prefix = _PREFIX.search(part)
        start = 0
        if prefix:
            start = prefix.end()
            if prefix.group(3) is not None:
                if not _numbers_fit(prefix):
                    continue
                slot, task = int(prefix.group(3)), int(prefix.group(4))
        sub = Parsed()
        _message(part[start:], slot, task, sub, 0)
        parsed.facts.extend(sub.facts)
        parsed.raise_kind(sub.kind)
        if sub.spans:
            parsed.spans.append((offset, len(text), sub.spans[0][2]))


def _epoch_iso(value: object) -> str | None:
    from datetime import UTC, datetime  # noqa: PLC0415 - only the 2024 JSON era needs it

    if not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(float(value), UTC).strftime("%Y-%m-%dT%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return None
