"""PodTopologySpread against hand-computed upstream results: skew, minDomains, node inclusion
policies, matchLabelKeys, system default constraints, scores and their normalization."""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler_runtime.config.args import PodTopologySpreadArgs, TopologySpreadConstraint
from scheduler_runtime.framework.interface import Code, CycleState, Handle
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.podtopologyspread import PodTopologySpread
from scheduler_runtime.plugins.podtopologyspread.filtering import REASON, REASON_MISSING_LABEL

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"app": "web"}


def node(name: str, zone: str | None, taints: list[dict[str, str]] | None = None) -> Any:
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {}},
    }


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    namespace: str = "ns",
    **spec: Any,
) -> PodInfo:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"nodeName": node_name, "containers": [{"name": "c"}], **spec},
        }
    )


def spread(key: str, max_skew: int, when: str = "DoNotSchedule", **extra: Any) -> Any:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": WEB},
        **extra,
    }


def web_pods(placement: dict[str, int], labels: dict[str, str] | None = None) -> list[PodInfo]:
    return [
        pod(f"{name}-{i}", labels or WEB, name)
        for name, count in placement.items()
        for i in range(count)
    ]


def cluster(nodes: list[Any], pods: list[PodInfo], objects: tuple[Any, ...] = ()) -> Snapshot:
    snapshot = Snapshot()
    for item in nodes:
        snapshot.add_node(item)
    for existing in pods:
        snapshot.add_pod(existing)
    for obj in objects:
        snapshot.objects.apply(obj)
    return snapshot


def run_filter(
    snapshot: Snapshot, incoming: PodInfo, plugin: PodTopologySpread | None = None
) -> dict[str, tuple[Code, str] | None]:
    plugin = plugin or PodTopologySpread(None, Handle(snapshot))
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot)
    if status.is_skip:
        return dict.fromkeys(snapshot.names(snapshot.order()))
    assert status.is_success, status
    slots = snapshot.order()
    verdicts = plugin.filter_nodes(state, incoming, snapshot, slots)
    outcome: dict[str, tuple[Code, str] | None] = {}
    for position, slot in enumerate(slots):
        single = plugin.filter(state, incoming, snapshot.info(int(slot)))
        name = snapshot.name(int(slot))
        if not verdicts.rejected[position]:
            assert single.is_success
            outcome[name] = None
            continue
        reasons = tuple(text for text, mask in verdicts.reasons if mask[position])
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if verdicts.unresolvable[position]
            else Code.UNSCHEDULABLE
        )
        assert (single.code, single.reasons) == (code, reasons)
        outcome[name] = (code, reasons[0])
    return outcome


SKEWED = (Code.UNSCHEDULABLE, REASON)
NO_LABEL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_MISSING_LABEL)
ZONED = [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("bare", None)]


def test_skew_counts_matching_pods_per_domain() -> None:
    snapshot = cluster(ZONED, web_pods({"a1": 2}))
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1)])
    # Domains a: 2, b: 0; min 0. Zone a: 2 + 1 - 0 > 1.
    assert run_filter(snapshot, incoming) == {
        "a1": SKEWED,
        "b1": None,
        "bare": NO_LABEL,
        "a2": SKEWED,
    }


def test_min_domains_treats_the_global_minimum_as_zero() -> None:
    snapshot = cluster(ZONED, web_pods({"a1": 2, "b1": 1}))
    # Domains a: 2, b: 1, min 1: a 2 + 1 - 1 = 2 > 1 fails, b 1 + 1 - 1 = 1 passes.
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1)])
    assert run_filter(snapshot, incoming)["b1"] is None
    # With minDomains 3 and only two domains the minimum is 0: b 1 + 1 - 0 = 2 > 1.
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1, minDomains=3)])
    assert run_filter(snapshot, incoming)["b1"] == SKEWED


def in_zones(*zones: str) -> dict[str, Any]:
    expression = {"key": ZONE, "operator": "In", "values": list(zones)}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expression]}]
            }
        }
    }


def test_node_affinity_policy_honor_counts_only_nodes_the_pod_may_use() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("c1", "c")]
    snapshot = cluster(nodes, web_pods({"a1": 1, "b1": 1}))
    honor = pod(
        "new", WEB, affinity=in_zones("a", "b"), topologySpreadConstraints=[spread(ZONE, 1)]
    )
    # Zone c is not counted: min is 1, every zone passes.
    assert set(run_filter(snapshot, honor).values()) == {None}
    ignore = pod(
        "new",
        WEB,
        affinity=in_zones("a", "b"),
        topologySpreadConstraints=[spread(ZONE, 1, nodeAffinityPolicy="Ignore")],
    )
    assert run_filter(snapshot, ignore) == {"a1": SKEWED, "b1": SKEWED, "c1": None}


def test_node_taints_policy_honor_skips_nodes_with_untolerated_taints() -> None:
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    nodes = [node("a1", "a"), node("b1", "b"), node("c1", "c", taint)]
    snapshot = cluster(nodes, web_pods({"a1": 1, "b1": 1}))
    ignore = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1)])
    assert run_filter(snapshot, ignore) == {"a1": SKEWED, "b1": SKEWED, "c1": None}
    honor = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1, nodeTaintsPolicy="Honor")])
    assert set(run_filter(snapshot, honor).values()) == {None}


def test_match_label_keys_narrow_the_selector_to_the_pods_values() -> None:
    old = web_pods({"a1": 2}, {"app": "web", "version": "v1"})
    snapshot = cluster(ZONED, old)
    labels = {"app": "web", "version": "v2"}
    plain = pod("new", labels, topologySpreadConstraints=[spread(ZONE, 1)])
    assert run_filter(snapshot, plain)["a1"] == SKEWED
    keyed = pod(
        "new", labels, topologySpreadConstraints=[spread(ZONE, 1, matchLabelKeys=["version"])]
    )
    assert run_filter(snapshot, keyed)["a1"] is None


def test_other_namespaces_and_terminating_pods_do_not_count() -> None:
    terminating = pod_info(
        {
            "metadata": {
                "name": "going",
                "namespace": "ns",
                "labels": WEB,
                "deletionTimestamp": "2024-01-01T00:00:00Z",
            },
            "spec": {"nodeName": "a1", "containers": [{"name": "c"}]},
        }
    )
    elsewhere = pod("far", WEB, "a1", namespace="other")
    snapshot = cluster(ZONED, [terminating, elsewhere])
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1)])
    assert run_filter(snapshot, incoming)["a1"] is None


def test_add_and_remove_pod_move_the_critical_paths() -> None:
    snapshot = cluster(ZONED, web_pods({"a1": 2}))
    plugin = PodTopologySpread(None, Handle(snapshot))
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1)])
    state = CycleState()
    plugin.pre_filter(state, incoming, snapshot)
    a1, b1 = snapshot.get("a1"), snapshot.get("b1")
    assert a1 is not None
    assert b1 is not None
    copy = state.clone()
    plugin.add_pod(copy, incoming, pod("x1", WEB, "b1"), b1)
    assert plugin.filter(copy, incoming, a1).reasons == (REASON,)  # a 2 + 1 - 1 > 1
    plugin.add_pod(copy, incoming, pod("x2", WEB, "b1"), b1)
    assert plugin.filter(copy, incoming, a1).is_success  # a 2 + 1 - 2 = 1
    assert plugin.filter(state, incoming, a1).reasons == (REASON,)
    gone = snapshot.pod("ns/a1-0")
    assert gone is not None
    plugin.remove_pod(state, incoming, gone, a1)
    plugin.remove_pod(state, incoming, snapshot.pod("ns/a1-1") or gone, a1)
    assert plugin.filter(state, incoming, a1).is_success  # a 0 + 1 - 0 = 1


def test_pods_without_constraints_and_owners_are_skipped() -> None:
    snapshot = cluster(ZONED, web_pods({"a1": 3}))
    plugin = PodTopologySpread(None, Handle(snapshot))
    _, status = plugin.pre_filter(CycleState(), pod("new", WEB), snapshot)
    assert status.is_skip
    assert plugin.pre_score(CycleState(), pod("new", WEB), snapshot, snapshot.order()).is_skip


def run_score(
    snapshot: Snapshot, incoming: PodInfo, args: PodTopologySpreadArgs | None = None
) -> dict[str, int] | None:
    plugin = PodTopologySpread(args, Handle(snapshot))
    state = CycleState()
    slots = snapshot.order()
    if plugin.pre_score(state, incoming, snapshot, slots).is_skip:
        return None
    raw = plugin.score_nodes(state, incoming, snapshot, slots)
    single = [plugin.score(state, incoming, snapshot.info(int(s)))[0] for s in slots]
    assert list(raw) == single
    scores = np.array(raw, dtype=np.int64)
    plugin.normalize_score(state, incoming, scores)
    return dict(zip(snapshot.names(slots), (int(s) for s in scores), strict=True))


THREE = [node("a1", "a"), node("a2", "a"), node("b1", "b")]


def test_soft_constraint_scores_by_domain_with_log_weight() -> None:
    snapshot = cluster(THREE, web_pods({"a1": 2, "a2": 1}))
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1, "ScheduleAnyway")])
    # Two zones: weight ln(4). a: round(3 * 1.386) = 4, b: 0; normalized 100 * (4 + 0 - s) / 4.
    assert run_score(snapshot, incoming) == {"a1": 0, "b1": 100, "a2": 0}


def test_hostname_and_zone_constraints_add_up() -> None:
    snapshot = cluster(THREE, web_pods({"a1": 2, "a2": 1}))
    incoming = pod(
        "new",
        WEB,
        topologySpreadConstraints=[
            spread(ZONE, 1, "ScheduleAnyway"),
            spread(HOST, 2, "ScheduleAnyway"),
        ],
    )
    # zone: 3 * ln 4 = 4.159 on a; host (3 nodes, ln 5): count * 1.609 + 1.
    # a1 = 4.159 + 4.219 -> 8, a2 = 4.159 + 2.609 -> 7, b1 = 1; min 1, max 8:
    # a1 100 * 1 / 8 = 12, a2 100 * 2 / 8 = 25, b1 100.
    assert run_score(snapshot, incoming) == {"a1": 12, "b1": 100, "a2": 25}


def test_nodes_missing_a_key_are_ignored_with_user_constraints() -> None:
    snapshot = cluster(ZONED, web_pods({"a1": 1}))
    incoming = pod("new", WEB, topologySpreadConstraints=[spread(ZONE, 1, "ScheduleAnyway")])
    # bare is ignored (0); a: round(1 * ln 4) = 1, b: 0 -> a 0, b 100.
    assert run_score(snapshot, incoming) == {"a1": 0, "b1": 100, "bare": 0, "a2": 0}


SERVICE = {
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "ns"},
    "spec": {"selector": WEB},
}


def test_system_defaults_apply_to_pods_a_service_selects() -> None:
    nodes = [node("a1", "a"), node("a2", "a"), node("bare", None)]
    snapshot = cluster(nodes, web_pods({"a1": 1, "bare": 2}), objects=(SERVICE,))
    # hostname maxSkew 3 (ln 5), zone maxSkew 5 over domains {a, ""} (ln 4); no node ignored.
    # a1 = 1.386 + 4 + 1.609 + 2 -> 9; a2 = 5.386 + 2 -> 7; bare = 2 * 1.609 + 2 -> 5.
    # min 5, max 9: a1 100 * 5 / 9 = 55, a2 100 * 7 / 9 = 77, bare 100.
    assert run_score(snapshot, pod("new", WEB)) == {"a1": 55, "a2": 77, "bare": 100}
    # The defaults are ScheduleAnyway: nothing to filter.
    plugin = PodTopologySpread(None, Handle(snapshot))
    assert plugin.pre_filter(CycleState(), pod("new", WEB), snapshot)[1].is_skip
    # A pod the service does not select has no default constraints.
    assert run_score(snapshot, pod("other", {"app": "db"})) is None


def test_listed_default_constraints_use_the_owner_selector_and_require_keys() -> None:
    replica_set = {
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": WEB}},
    }
    owned = pod_info(
        {
            "metadata": {
                "name": "new",
                "namespace": "ns",
                "labels": WEB,
                "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "controller": True}],
            },
            "spec": {"containers": [{"name": "c"}]},
        }
    )
    snapshot = cluster(ZONED, web_pods({"a1": 2}), objects=(replica_set,))
    args = PodTopologySpreadArgs(
        defaulting_type="List",
        default_constraints=(
            TopologySpreadConstraint(
                max_skew=1, topology_key=ZONE, when_unsatisfiable="DoNotSchedule"
            ),
        ),
    )
    plugin = PodTopologySpread(args, Handle(snapshot))
    assert run_filter(snapshot, owned, plugin) == {
        "a1": SKEWED,
        "b1": None,
        "bare": NO_LABEL,
        "a2": SKEWED,
    }


def test_bad_selector_is_reported_with_its_field() -> None:
    snapshot = cluster(ZONED, [])
    bad = spread(ZONE, 1) | {
        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}
    }
    plugin = PodTopologySpread(None, Handle(snapshot))
    _, status = plugin.pre_filter(
        CycleState(), pod("new", WEB, topologySpreadConstraints=[bad]), snapshot
    )
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (
        "parsing pod: topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: "
        "'Is' is not a valid selector operator",
    )
