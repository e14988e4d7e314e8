"""SGLang: the ``Prefill batch`` line states new and radix-cache-hit tokens itself (all three eras)."""

from __future__ import annotations

import re

from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers.base import Fact, Parsed, What, bounded, ratio_kind, status_kind

SERVER = "sglang"
ANCHORS = ("#cached-token",)
#: text only the general path understands (the byte-level scanner reads none of this format)
GENERAL_ONLY = (rb"#cached-token",)

_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?: [A-Z_]+\d+)*\]")
_PREFILL = re.compile(bounded(r"Prefill batch[.,] #new-seq: (\d+), #new-token: (\d+), #cached-token: (\d+)"))
_DECODE = re.compile(r"Decode batch[.,] #running-req: \d+.*")
_REQUEST = re.compile(r"\"(GET|POST|PUT|DELETE) (\S+) HTTP/[\d.]+\" (\d{3})")


def parse(text: str) -> Parsed | None:
    if "batch" not in text and "HTTP/" not in text:
        return None
    parsed = Parsed()
    if m := _PREFILL.search(text):
        seqs, new, cached = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if h := _HEADER.match(text):
            parsed.facts.append(Fact(What.CLOCK, note=f"{h.group(1)}T{h.group(2)}"))
        reason = f"one prefill batch of {seqs} sequences" if seqs > 1 else None
        parsed.facts.append(Fact(What.EVENT, n1=cached, n2=new, server=SERVER, reason=reason))
        parsed.mark(m, ratio_kind(cached, cached + new))
    elif m := _DECODE.search(text):
        parsed.mark(m, LineKind.TIMING)
    elif m := _REQUEST.search(text):
        status = int(m.group(3))
        parsed.mark(m, status_kind(status))
    return parsed if parsed.spans else None
