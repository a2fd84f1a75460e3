"""Fencing a deposed leader, and stopping in order: the lease counts from when its last renewal
was sent; no cycle starts and no binding is sent once it is older than renewDeadline; stopping
mid-cycle ends the cycle before the pools it feeds."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from backend_support import node, pod
from test_live_transport import Server, configuration

from scheduler_runtime.backend import NODES, PODS
from scheduler_runtime.config import load_configuration
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.leader import LeaderElector, LeaseConfig
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import NotLeadingError, Outcomes
from scheduler_runtime.live.scheduler import Scheduler
from scheduler_runtime.live.transport import Connections
from scheduler_runtime.plugins.nodeunschedulable import NodeUnschedulable

CONFIG = LeaseConfig(name="lease", namespace="ns", lease_duration=6, renew_deadline=4)
PROFILE = "ours"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class LeaseApi:
    """Answers a candidate's lease calls: none exists, then whatever was written."""

    def __init__(self, clock: Clock, takes: float = 0.0) -> None:
        self.clock = clock
        self.takes = takes  # how long each write is on the wire
        self.lease: dict[str, Any] | None = None

    def get(self, path: str, timeout: float | None = None) -> dict[str, Any]:
        if self.lease is None:
            raise ApiError(404, "NotFound", "no lease")
        return self.lease

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.clock.now += self.takes
        self.lease = kwargs["body"]
        return self.lease


def candidate(clock: Clock, api: LeaseApi) -> LeaderElector:
    return LeaderElector(
        api,  # type: ignore[arg-type]
        CONFIG,
        "me_1",
        on_started_leading=lambda: None,
        on_stopped_leading=lambda: None,
        monotonic=clock,
    )


def test_the_lease_is_held_until_renew_deadline_after_the_renewal_was_sent() -> None:
    clock = Clock()
    api = LeaseApi(clock, takes=1.5)  # a slow API server: the renewal counts from its sending
    elector = candidate(clock, api)
    assert not elector.holds_lease()  # never acquired
    sent = clock.now
    assert elector._try_acquire_or_renew()
    assert not elector.holds_lease()  # acquired, but not leading yet
    elector._leading.set()
    clock.now = sent + CONFIG.renew_deadline - 0.01
    assert elector.holds_lease()
    clock.now = sent + CONFIG.renew_deadline
    assert not elector.holds_lease()  # no renewal since: fenced, whatever the elector thinks
    assert elector.is_leader
    renewed = clock.now
    assert elector._try_acquire_or_renew()
    clock.now = renewed + 1
    assert elector.holds_lease()


def test_a_released_lease_is_not_held() -> None:
    clock = Clock()
    elector = candidate(clock, LeaseApi(clock))
    assert elector._try_acquire_or_renew()
    elector._leading.set()
    elector.stop()
    assert not elector.holds_lease()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def test_a_request_refused_before_sending_never_reaches_the_server(server: Server) -> None:
    connections = Connections(configuration(server.url).endpoint)

    def refuse() -> None:
        raise NotLeadingError("fenced")

    with pytest.raises(NotLeadingError):
        connections.request("POST", "/binding", b"{}", {}, 5.0, before_send=refuse)
    assert server.requests == []
    assert connections.request("GET", "/after", None, {}, 5.0, before_send=lambda: None).status
    assert [path for _, path, _ in server.requests] == ["/after"]
    assert len(server.connections) == 1  # the connection made for the refused one is used


class Leading:
    """A fence that holds for the first `calls` questions, then fails."""

    def __init__(self, calls: int) -> None:
        self.calls = calls

    def __call__(self) -> bool:
        self.calls -= 1
        return self.calls >= 0


def make_scheduler(url: str, leading: Leading, fenced: threading.Event) -> Scheduler:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        }
    )
    kube = Kube(configuration(url))
    outcomes = Outcomes(kube, kube, "test", leading=leading)
    made = Scheduler(config, kube, outcomes, SchedulerMetrics(), on_fenced=fenced.set)
    made.backend.events.replace(NODES, [node("n1")])
    return made


def bindings(server: Server) -> list[str]:
    paths = [path.partition("?")[0] for _, path, _ in server.requests]
    return [path for path in paths if path.endswith("/binding")]


def test_no_cycle_starts_once_the_lease_is_not_held(server: Server) -> None:
    fenced = threading.Event()
    scheduler = make_scheduler(server.url, Leading(0), fenced)
    scheduler.backend.events.upsert(PODS, pod("p", scheduler=PROFILE))
    scheduler.run()  # returns at once: the first pod finds the lease not held
    assert fenced.is_set()
    assert scheduler.stopping.is_set()
    assert not scheduler.backend.cache.is_assumed("ns/p")
    scheduler.stop(finish_bindings=False)
    assert server.requests == []


def test_a_binding_is_not_sent_once_the_lease_is_not_held(server: Server) -> None:
    """The cycle ran while the lease was held; by the time the binding goes out, it is not."""
    fenced = threading.Event()
    scheduler = make_scheduler(server.url, Leading(1), fenced)
    scheduler.backend.events.upsert(PODS, pod("p", scheduler=PROFILE))
    queued = scheduler.queue.pop(timeout=1)
    assert queued is not None
    assert scheduler.outcomes.leading()  # the loop's question before the cycle
    scheduler.schedule_one(queued)
    scheduler.stop(finish_bindings=True)
    assert bindings(server) == []
    assert not scheduler.backend.cache.is_assumed("ns/p")  # forgotten, as any failed binding
    assert server.requests == []  # and the failure is not reported by a deposed leader


def test_stopping_mid_cycle_ends_the_cycle_before_the_pools(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cycle under way when stop() is called still hands its pod to the binding pool, which
    is shut down only after it: no `cannot schedule new futures after shutdown`."""
    in_cycle, release = threading.Event(), threading.Event()
    original = NodeUnschedulable.filter_nodes

    def slow_filter(self: NodeUnschedulable, *args: Any, **kwargs: Any) -> Any:
        in_cycle.set()
        release.wait(5)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(NodeUnschedulable, "filter_nodes", slow_filter)
    failures: list[BaseException] = []
    monkeypatch.setattr(
        threading, "excepthook", lambda hook: failures.append(hook.exc_value or Exception())
    )
    scheduler = make_scheduler(server.url, Leading(10), threading.Event())
    scheduler.backend.events.upsert(PODS, pod("p", scheduler=PROFILE))
    loop = threading.Thread(target=scheduler.run)
    loop.start()
    assert in_cycle.wait(5)
    stopping = threading.Thread(target=scheduler.stop)
    stopping.start()
    stopping.join(0.2)
    assert stopping.is_alive()  # waits for the cycle
    release.set()
    stopping.join(10)
    loop.join(10)
    assert not stopping.is_alive()
    assert not loop.is_alive()
    assert failures == []
    assert bindings(server) == ["/api/v1/namespaces/ns/pods/p/binding"]  # it finished its pod
