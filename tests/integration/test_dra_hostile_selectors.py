"""Device selectors are written by tenants, and one scheduler serves every namespace: a claim
whose CEL selector would take a backtracking regex engine minutes (or a nested comprehension
upstream still admits) must not stall the runtime. While the runtime decides on such claims in
one namespace, another namespace's ordinary pods are placed, /healthz answers every time it is
asked, the runtime's Lease keeps being renewed by the same holder (leader election is never
starved), and each hostile pod gets the same answer the cluster's kube-scheduler gives."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import kubernetes
from cluster import Cluster, wait_for
from dra_parity import (
    DRIVER,
    ClusterDRA,
    PodSpec,
    Scenario,
    device,
    device_class,
    exactly,
    offer_all,
    resource_slice,
    set_up,
    template,
)
from runtime_support import RuntimeProcess, make_pod, scheduler_config, unique_scheduler_name

ATTR = f'device.attributes["{DRIVER}"]'
# 2**40 ways to split the a's: Python's `re` never finishes, RE2 answers in microseconds.
HOSTILE_STRING = "a" * 40 + "!"
L300 = "[" + ", ".join(str(i) for i in range(1, 301)) + "]"
SELECTORS = {
    "regex": f'{ATTR}.s.matches("^(a+)+$")',
    "find": f'{ATTR}.s.find("(a|aa)+$") == "x"',
    # 90,000 iterations per device: within the DRA cost limit, so upstream evaluates it all.
    "loops": f"{L300}.exists(x, {L300}.exists(y, x * y == -1))",
}
ORDINARY_PODS = 6
# Leader election as a replica set runs it, renewing every 200 ms: a runtime too busy to renew
# within renewDeadline would stop scheduling, and its Lease would show it.
LEASE = {"leaseDuration": "6s", "renewDeadline": "4s", "retryPeriod": "200ms"}


def _scenario(p: str) -> Scenario:
    gpu = f"{p}-gpu"
    return Scenario(
        "hostile",
        nodes=(("a", "4"), ("b", "10")),
        slices=lambda names: [
            resource_slice(names["a"], [device(f"d{i}", s=HOSTILE_STRING) for i in range(2)])
        ],
        classes=(device_class(gpu),),
        templates=tuple(
            template(name, exactly(gpu, selectors=[{"cel": {"expression": expression}}]))
            for name, expression in SELECTORS.items()
        ),
        pods=tuple(PodSpec(f"p-{name}", (name,)) for name in SELECTORS),
    )


def _lease(cluster: Cluster, namespace: str, name: str) -> tuple[str, datetime | None]:
    """The Lease's holder and last renewal."""
    lease = kubernetes.client.CoordinationV1Api(cluster.api).read_namespaced_lease(name, namespace)
    return str(lease.spec.holder_identity or ""), lease.spec.renew_time


class _Probe:
    """Asks /healthz over and over until stopped, keeping every answer that was not 200, and
    reads the runtime's Lease each time (its holder and renewTime)."""

    def __init__(self, runtime: RuntimeProcess, lease: Callable[[], tuple[str, Any]]) -> None:
        self.runtime = runtime
        self.lease = lease
        self.asked = 0
        self.failures: list[tuple[int, str]] = []
        self.leases: list[tuple[str, Any]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stopping.wait(0.2):
            status, body = self.runtime.get("/healthz")  # gives up after 5 s
            self.asked += 1
            if status != 200:
                self.failures.append((status, body[:200]))
            self.leases.append(self.lease())


def test_hostile_selectors_do_not_stall_other_namespaces(
    cluster: Cluster,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    scenario = _scenario(namespace)
    dra = ClusterDRA(cluster, namespace)
    core = kubernetes.client.CoreV1Api(cluster.api)
    other = f"{namespace}-other"
    core.create_namespace({"metadata": {"name": other}})
    ours = unique_scheduler_name()
    lease_name = f"{ours}-lease"
    config = scheduler_config(
        ours, lease={"resourceName": lease_name, "resourceNamespace": namespace, **LEASE}
    )
    runtime = start_runtime(config)

    def lease() -> tuple[str, datetime | None]:
        return _lease(cluster, namespace, lease_name)

    probe = _Probe(runtime, lease)
    try:
        holder, _ = wait_for("the runtime to hold its Lease", lambda: lease()[0] and lease())
        wait_for(
            f"the default ServiceAccount of {other}",
            lambda: (
                core.list_namespaced_service_account(
                    other, field_selector="metadata.name=default"
                ).items
            ),
            timeout=60,
        )
        set_up(scenario, dra, make_nodes, namespace)
        probe.thread.start()
        ordinary = [f"ordinary-{i}" for i in range(ORDINARY_PODS)]

        def create_ordinary() -> None:
            for name in ordinary:
                pod = make_pod(name, ours, cpu="100m", nodeSelector={"dra-scenario": "hostile"})
                core.create_namespaced_pod(other, pod)

        creator = threading.Thread(target=create_ordinary, daemon=True)
        creator.start()
        renewed_before = lease()[1]
        differences, theirs = offer_all(scenario, dra, ours)
        renewed_after = lease()[1]
        creator.join(60)

        def placed() -> bool:
            pods = core.list_namespaced_pod(other).items
            return len(pods) == ORDINARY_PODS and all(p.spec.node_name for p in pods)

        wait_for(f"the ordinary pods of {other} to be placed", placed, timeout=120)
        print("upstream's outcomes: " + "; ".join(str(o) for o in theirs))
        assert differences == []
        assert all(o.node is None for o in theirs)  # no device matches any hostile selector
        probe.stopping.set()
        probe.thread.join(10)
        assert probe.asked > 0
        assert probe.failures == []
        # The same holder all along, and renewals went on while the hostile claims were decided.
        assert {who for who, _ in probe.leases} == {holder}
        assert renewed_before is not None
        assert renewed_after is not None
        assert renewed_after > renewed_before
    finally:
        probe.stopping.set()
        dra.remove_cluster_scoped()
        core.delete_namespace(other)
