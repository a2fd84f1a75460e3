"""The failure report of an attempt: its event always, its PodScheduled=False condition only
while no later attempt has placed the pod (the report waits on a pool, the binding does not)."""

from __future__ import annotations

from typing import Any

from backend_support import pod

from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.live.outcomes import Outcomes


class Recorder:
    """A Kube that records what would be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def request(self, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.sent.append((method, path))
        return {}

    def patch(self, path: str, body: Any, **_: Any) -> dict[str, Any]:
        self.sent.append(("PATCH", path))
        return {}


def report(placed: bool) -> list[tuple[str, str]]:
    kube = Recorder()
    outcomes = Outcomes(kube, kube, "test")  # type: ignore[arg-type]
    outcomes.failed(
        pod_info(pod("p")),
        "0/1 nodes are available: 1 Insufficient cpu.",
        error=False,
        nominated_node=None,
        placed_since=lambda: placed,
    )
    return kube.sent


def test_a_failure_is_reported_with_its_event_and_condition() -> None:
    assert report(placed=False) == [
        ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"),
        ("PATCH", "/api/v1/namespaces/ns/pods/p/status"),
    ]


def test_a_pod_placed_since_gets_the_event_but_no_stale_condition() -> None:
    assert report(placed=True) == [("POST", "/apis/events.k8s.io/v1/namespaces/ns/events")]
