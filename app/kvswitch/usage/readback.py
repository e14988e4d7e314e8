"""Values read back from the usage file, which another program may have written (issue 39).

The file is the user's: a script, a sync tool or a hand-run ``sqlite3`` can put a BLOB where KV Switch
writes a model name, text where it writes a count, ``1e308`` as a cost or ``2**63 - 1`` as a token count.
SQLite keeps whatever it is given, so every reader selects each column through ``clean``: a value of
the wrong type or outside what the gateway ever writes (the bounds of ``usage.answer``: counts in
``0..MAX_TOKENS``, finite reals in a sane range) reads as ``NULL``, shown as unknown, and ``bad``
counts such values so the reader can say how many it hid. Doing it in SQL keeps the per-row cost in
SQLite's C code (the million-row streams of ``benchmarks/usage_scale.py``), and bounded values keep
``SUM`` from overflowing: a billion per row would need more than 9e9 rows to pass int64.

The error text of a row is an upstream's words and may echo a key; ``hide_secrets`` masks what KV
Switch knows by value (``core.knownsecrets``: the profiles' keys, the gateway token) and every
credential shape (``core.redact``) before a row is stored and again when one is shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kvswitch.core.knownsecrets import hide_known
from kvswitch.core.redact import mask_text

#: the bound ``usage.answer.sane_count`` puts on every count the gateway stores (not imported: the
#: answer parser pulls in the servers package, which ``kvswitch usage`` has no use for)
MAX_COUNT = 10**9
MAX_TOKENS_PER_S = 10**7
#: 9999-12-31T23:59:59Z: later than this, ``time.localtime`` cannot show it on every platform
MAX_TIME = 253_402_300_799
#: an hour in milliseconds is 3.6e6; a day 8.6e7: anything above 1e12 ms (31 years) is no timing
MAX_MS = 10**12
MAX_COST = 10**9
#: the columns whose text may carry an upstream's words (errors, the failover's reasons)
SECRET_TEXT_COLUMNS = ("error", "failover")

_COUNTS = {"input_tokens", "cached_tokens", "output_tokens", "reusable_tokens"}
_REALS: dict[str, tuple[float, float]] = {
    "time": (0, MAX_TIME), "ttft_ms": (0, MAX_MS), "duration_ms": (0, MAX_MS),
    "tokens_per_s": (0, MAX_TOKENS_PER_S), "cost": (0, MAX_COST),
}


def _valid(name: str) -> str:
    """The SQL condition under which a non-NULL value of column ``name`` is one KV Switch writes.

    No function call (``typeof`` costs about as much as the rest of a row's work, measured on a
    million sessions): SQLite orders every number before every text and every text before every blob,
    so a range of numbers excludes text and bytes, and ``< x''`` (the smallest blob) excludes bytes.
    """
    if name in _COUNTS:
        return f"({name} BETWEEN 0 AND {MAX_COUNT} AND {name} = CAST({name} AS INTEGER))"
    if name == "status":
        return f"({name} BETWEEN 0 AND 999)"
    if name in _REALS:
        low, high = _REALS[name]
        return f"({name} BETWEEN {low} AND {high})"
    return f"({name} < x'')"


def clean(name: str) -> str:
    """Column ``name`` as a SELECT expression: its value, or NULL when it is not one KV Switch writes."""
    return f"CASE WHEN {_valid(name)} THEN {name} END"


def bad(names: Iterable[str]) -> str:
    """An expression: how many of ``names`` hold a value ``clean`` turns into NULL (0 per clean row)."""
    parts = [f"({name} IS NOT NULL AND NOT {_valid(name)})" for name in names]
    return "(" + " + ".join(parts) + ")" if parts else "0"


#: what ``select_list`` gives for a value ``clean`` would turn into NULL (an empty blob: no column KV Switch
#: writes holds one, and no clean value is one), so that the reader can count them and show them unknown
BAD = b""


def select_list(names: Iterable[str], present: set[str]) -> str:
    """``names`` as a SELECT list: each value clean, ``NULL``, or ``BAD`` for one another program wrote
    (``NULL AS name`` for each column an older file lacks). One condition per value: a separate count
    of the bad ones doubled the cost of streaming the rows (0.72 → 1.37 s per 100,000)."""
    return ", ".join(f"CASE WHEN {_valid(name)} THEN {name} WHEN {name} IS NOT NULL THEN x'' END AS {name}"
                     if name in present else f"NULL AS {name}" for name in names)


def total(expression: str) -> str:
    """A sum of a column of sums (the hourly and daily tables) that cannot overflow or turn text into
    numbers: non-negative integers only, added as reals (SQLite's ``TOTAL``), saturated to int64 by
    the ``CAST``."""
    return (f"CAST(TOTAL(CASE WHEN typeof({expression}) = 'integer' AND {expression} >= 0 "
            f"THEN {expression} END) AS INTEGER)")


def total_real(expression: str) -> str:
    """``total`` for a column of real sums (cost): finite, non-negative reals and integers only."""
    return (f"TOTAL(CASE WHEN typeof({expression}) IN ('real', 'integer') AND {expression} BETWEEN 0 "
            f"AND 1e300 THEN {expression} END)")


def hide_secrets(text: str) -> str:
    """``text`` with every secret known by value and every credential shape masked."""
    return mask_text(hide_known(text))


@dataclass
class Tally:
    """What a reader passed over: values another program wrote that were shown as unknown."""

    bad_values: int = 0

    def note(self) -> str | None:
        """The sentence to show the user, or None when every value was one KV Switch writes."""
        if not self.bad_values:
            return None
        count = self.bad_values
        one = count == 1
        return (f"{count:,} value{'' if one else 's'} in the usage file {'is' if one else 'are'} not what"
                " KV Switch writes (bytes or text where a number belongs, or a number out of range;"
                " another program changed the file): shown as unknown and left out of the sums")
