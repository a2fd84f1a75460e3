"""InterPodAffinity and PodTopologySpread work on all nodes at once and node by node (the
latter for preemption); on random clusters both ways must agree on every node's status and
raw score."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_runtime.framework.interface import CycleState, Handle
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.interpodaffinity import InterPodAffinity
from scheduler_runtime.plugins.podtopologyspread import PodTopologySpread

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ("a", "b", "c")

keys = st.sampled_from([ZONE, HOST])
apps = st.sampled_from(APPS)


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": draw(apps)}}, "topologyKey": draw(keys)}


@st.composite
def affinities(draw: st.DrawFn) -> dict[str, Any] | None:
    affinity: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        required = draw(st.lists(terms(), max_size=1))
        preferred = [
            {"weight": draw(st.integers(1, 100)), "podAffinityTerm": term}
            for term in draw(st.lists(terms(), max_size=2))
        ]
        if required or preferred:
            affinity[kind] = {
                "requiredDuringSchedulingIgnoredDuringExecution": required,
                "preferredDuringSchedulingIgnoredDuringExecution": preferred,
            }
    return affinity or None


@st.composite
def spreads(draw: st.DrawFn) -> list[dict[str, Any]]:
    return [
        {
            "maxSkew": draw(st.integers(1, 2)),
            "topologyKey": draw(keys),
            "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
            "labelSelector": {"matchLabels": {"app": draw(apps)}},
            "minDomains": draw(st.sampled_from([1, 3])),
        }
        for _ in range(draw(st.integers(0, 2)))
    ]


def make_pod(name: str, app: str, node: str, affinity: Any, spread: Any) -> PodInfo:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": "ns", "labels": {"app": app}},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "c"}],
                "affinity": affinity,
                "topologySpreadConstraints": spread,
            },
        }
    )


@st.composite
def clusters(draw: st.DrawFn) -> tuple[Snapshot, PodInfo]:
    snapshot = Snapshot(capacity=4)
    zones = draw(st.lists(st.sampled_from(["z1", "z2", "z3", None]), min_size=1, max_size=7))
    for index, zone in enumerate(zones):
        labels = {HOST: f"n{index}"} | ({ZONE: zone} if zone else {})
        snapshot.add_node({"metadata": {"name": f"n{index}", "labels": labels}, "status": {}})
    for index in range(draw(st.integers(0, 10))):
        node = f"n{draw(st.integers(0, len(zones) - 1))}"
        snapshot.add_pod(make_pod(f"p{index}", draw(apps), node, draw(affinities()), None))
    incoming = make_pod("new", draw(apps), "", draw(affinities()), draw(spreads()))
    return snapshot, incoming


def check(plugin: Any, snapshot: Snapshot, incoming: PodInfo) -> None:
    slots = snapshot.order()
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot)
    if status.is_success:
        verdicts = plugin.filter_nodes(state, incoming, snapshot, slots)
        for position, slot in enumerate(slots):
            single = plugin.filter(state, incoming, snapshot.info(int(slot)))
            reasons = tuple(text for text, mask in verdicts.reasons if mask[position])
            assert single.reasons == reasons
            assert single.is_success == (not verdicts.rejected[position])
    state = CycleState()
    if plugin.pre_score(state, incoming, snapshot, slots).is_success:
        batch = plugin.score_nodes(state, incoming, snapshot, slots)
        single = [plugin.score(state, incoming, snapshot.info(int(s)))[0] for s in slots]
        assert list(batch) == single
        plugin.normalize_score(state, incoming, batch)
        assert all(0 <= s <= 100 for s in batch)


@settings(max_examples=150, deadline=None)
@given(cluster=clusters())
def test_inter_pod_affinity_batch_and_per_node_agree(cluster: tuple[Snapshot, PodInfo]) -> None:
    snapshot, incoming = cluster
    check(InterPodAffinity(None, Handle(snapshot)), snapshot, incoming)


@settings(max_examples=150, deadline=None)
@given(cluster=clusters())
def test_topology_spread_batch_and_per_node_agree(cluster: tuple[Snapshot, PodInfo]) -> None:
    snapshot, incoming = cluster
    check(PodTopologySpread(None, Handle(snapshot)), snapshot, incoming)


@settings(max_examples=100, deadline=None)
@given(cluster=clusters(), data=st.data())
def test_inter_pod_affinity_remove_pod_matches_a_fresh_count(
    cluster: tuple[Snapshot, PodInfo], data: st.DataObject
) -> None:
    """Preemption removes pods from a node copy through remove_pod: the counts must equal
    those of a cycle that never saw the pods."""
    snapshot, incoming = cluster
    plugin = InterPodAffinity(None, Handle(snapshot))
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot)
    if not status.is_success:
        return
    pods = list(snapshot.pods())
    gone = data.draw(
        st.lists(st.sampled_from(pods), unique_by=lambda p: p.key) if pods else st.just([])
    )
    for pod in gone:
        node = snapshot.get(pod.node_name)
        assert node is not None
        plugin.remove_pod(state, incoming, pod, node)
        snapshot.remove_pod(pod.key)
    fresh = CycleState()
    _, status = plugin.pre_filter(fresh, incoming, snapshot)
    before = state.read("PreFilterInterPodAffinity")
    if status.is_skip:
        assert not before.existing_anti_affinity
        return
    after = fresh.read("PreFilterInterPodAffinity")
    assert +before.existing_anti_affinity == +after.existing_anti_affinity
    assert +before.affinity == +after.affinity
    assert +before.anti_affinity == +after.anti_affinity
