"""Loaded (as ``sitecustomize``) only by the benchmark's "no record" gateway: the live cache record's two
calls, the ``/metrics`` reading a local profile's request gets for an answer without counts, and the
reader of the profiles' server logs (``server`` reasons) become no-ops, so the same run measures the
gateway with and without them."""

from kvswitch.commands import server_notes
from kvswitch.gateway.truth.counts_fallback import CountsFallback
from kvswitch.gateway.truth.live_record import CacheTruth


def _skip(*_args: object, **_kwargs: object) -> None:
    return None


async def _skip_async(*_args: object, **_kwargs: object) -> None:
    return None


def _not_held(*_args: object, **_kwargs: object) -> bool:
    return False


CacheTruth.begin = _skip  # type: ignore[method-assign]
CacheTruth.finish = _skip  # type: ignore[method-assign]
CountsFallback.forwarding = _skip_async  # type: ignore[method-assign]
CountsFallback.hold = _not_held  # type: ignore[method-assign]
server_notes.started = _skip  # type: ignore[assignment]
