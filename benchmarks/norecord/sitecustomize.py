"""Loaded (as ``sitecustomize``) only by the benchmark's "no record" gateway: the live cache record's two
calls become no-ops, so the same run measures the gateway with and without it."""

from kvswitch.gateway.cache_truth import CacheTruth


def _skip(*_args: object, **_kwargs: object) -> None:
    return None


CacheTruth.begin = _skip  # type: ignore[method-assign]
CacheTruth.finish = _skip  # type: ignore[method-assign]
