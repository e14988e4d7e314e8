"""verify.instances on answers a real router does not give: junk in its list, and requests no single
instance can be credited with (another client's request on a second instance during the probe, an
instance that stops answering). The real router, instances and counters: tests/realserver/
test_real_vllm_router.py."""

from __future__ import annotations

from typing import Any

from kvswitch.servers import get
from kvswitch.verify.instances import Instances, Spread, detect_instances, given_instances

ROUTER = get("vllm").routers[0]
A, B = "http://127.0.0.1:8001", "http://127.0.0.1:8002"


def _answer(status: int, payload: Any) -> Any:
    return lambda _path: (status, payload)


def test_only_a_listed_http_url_is_an_instance() -> None:
    assert detect_instances(_answer(404, None), "vllm") is None  # a single server
    assert detect_instances(_answer(200, {ROUTER.field: "not a list"}), "vllm") is None
    assert detect_instances(_answer(200, {ROUTER.field: []}), "vllm") is None
    found = detect_instances(_answer(200, {ROUTER.field: [A + "/", 3, "file:///etc/passwd", A, B]}), "vllm")
    assert found is not None
    assert found.urls == (A, B)
    assert detect_instances(_answer(200, {ROUTER.field: [A]}), "unknown") is None  # no router declared


def test_given_instances_need_a_server_that_declares_a_router() -> None:
    given = given_instances("vllm", [A, B + "/"])
    assert given is not None
    assert given.urls == (A, B)
    assert given.router.ran_counter == ROUTER.ran_counter
    assert given_instances("unknown", [A]) is None


def _spread(before: dict[str, float | None], after: dict[str, float | None]) -> Spread:
    pages = {"before": before, "after": after}
    phase = ["before"]

    def scrape(url: str) -> dict[str, float] | None:
        value = pages[phase[0]][url.removesuffix("/metrics")]
        return None if value is None else {ROUTER.ran_counter: value}

    spread = Spread(Instances(ROUTER, (A, B)), scrape)
    spread.begin()
    phase[0] = "after"
    return spread


def test_two_instances_moving_credit_neither() -> None:
    spread = _spread({A: 10.0, B: 5.0}, {A: 20.0, B: 9.0})
    assert spread.finish() == (None, None)
    assert spread.ran is None
    assert spread.describe().startswith("no single instance ran it")


def test_an_instance_not_read_is_said() -> None:
    spread = _spread({A: 10.0, B: None}, {A: 30.0, B: None})
    before, after = spread.finish()
    assert spread.ran == A
    assert before is not None
    assert after is not None
    assert after[ROUTER.ran_counter] - before[ROUTER.ran_counter] == 20
    assert f"{B} not read" in spread.describe()
