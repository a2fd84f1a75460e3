"""InterPodAffinity against hand-computed upstream results: which nodes pass with which
reason and status code, and the normalized scores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_runtime.config.args import InterPodAffinityArgs
from scheduler_runtime.framework.interface import Code, CycleState, Handle
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.interpodaffinity import InterPodAffinity
from scheduler_runtime.plugins.interpodaffinity.filtering import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
)
from scheduler_runtime.plugins.interpodaffinity.index import INDEX_NAME, ExistingTerms
from scheduler_runtime.plugins.interpodaffinity.terms import pod_terms

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str | None) -> dict[str, Any]:
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": {}}}


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    namespace: str = "ns",
    affinity: dict[str, Any] | None = None,
) -> PodInfo:
    return pod_info(
        {
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"nodeName": node_name, "containers": [{"name": "c"}], "affinity": affinity},
        }
    )


def term(key: str, labels: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(kind: str, *weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        kind: {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in weighted
            ]
        }
    }


# a1, a2 in zone a; b1 in zone b; bare has no zone label.
NODES = [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("bare", None)]


def cluster(*pods: PodInfo, objects: tuple[dict[str, Any], ...] = ()) -> Snapshot:
    snapshot = Snapshot()
    for item in NODES:
        snapshot.add_node(item)
    for existing in pods:
        snapshot.add_pod(existing)
    for obj in objects:
        snapshot.objects.apply(obj)
    return snapshot


def run_filter(
    snapshot: Snapshot, incoming: PodInfo, args: InterPodAffinityArgs | None = None
) -> dict[str, tuple[Code, str] | None]:
    """Each node's outcome, checked to agree between the batch and the per-node filter."""
    plugin = InterPodAffinity(args, Handle(snapshot))
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
        reasons = [text for text, mask in verdicts.reasons if mask[position]]
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if verdicts.unresolvable[position]
            else Code.UNSCHEDULABLE
        )
        assert (single.code, single.reasons) == (code, tuple(reasons))
        outcome[name] = (code, reasons[0])
    return outcome


AFFINITY_FAIL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_AFFINITY)
ANTI_FAIL = (Code.UNSCHEDULABLE, REASON_ANTI_AFFINITY)
EXISTING_FAIL = (Code.UNSCHEDULABLE, REASON_EXISTING_ANTI_AFFINITY)


def test_required_affinity_needs_a_matching_pod_in_the_same_domain() -> None:
    snapshot = cluster(pod("db", {"app": "db"}, "a1"))
    incoming = pod(
        "web", {"app": "web"}, affinity=required("podAffinity", term(ZONE, {"app": "db"}))
    )
    assert run_filter(snapshot, incoming) == {
        "a1": None,
        "b1": AFFINITY_FAIL,
        "bare": AFFINITY_FAIL,  # the node lacks the topology label
        "a2": None,
    }


def test_first_pod_of_a_self_affine_group_may_go_to_any_node_with_the_key() -> None:
    snapshot = cluster(pod("other", {"app": "db"}, "a1"))
    affinity = required("podAffinity", term(ZONE, {"app": "web"}))
    incoming = pod("web", {"app": "web"}, affinity=affinity)
    assert run_filter(snapshot, incoming) == {
        "a1": None,
        "b1": None,
        "bare": AFFINITY_FAIL,
        "a2": None,
    }
    # A pod that does not match its own terms gets no such exception.
    stranger = pod("x", {"app": "x"}, affinity=affinity)
    assert set(run_filter(snapshot, stranger).values()) == {AFFINITY_FAIL}


def test_affinity_terms_other_namespaces_are_not_matched_by_default() -> None:
    snapshot = cluster(pod("db", {"app": "db"}, "a1", namespace="elsewhere"))
    incoming = pod(
        "web", {"app": "web"}, affinity=required("podAffinity", term(ZONE, {"app": "db"}))
    )
    assert set(run_filter(snapshot, incoming).values()) == {AFFINITY_FAIL}


def test_namespace_selector_uses_namespace_labels() -> None:
    namespaces = (
        {"kind": "Namespace", "metadata": {"name": "prod", "labels": {"team": "x"}}},
        {"kind": "Namespace", "metadata": {"name": "dev", "labels": {"team": "y"}}},
    )
    snapshot = cluster(
        pod("db", {"app": "db"}, "b1", namespace="prod"),
        pod("db", {"app": "db"}, "a1", namespace="dev"),
        objects=namespaces,
    )
    selected = term(ZONE, {"app": "db"}, namespaceSelector={"matchLabels": {"team": "x"}})
    incoming = pod("web", affinity=required("podAffinity", selected))
    assert run_filter(snapshot, incoming) == {
        "a1": AFFINITY_FAIL,
        "b1": None,
        "bare": AFFINITY_FAIL,
        "a2": AFFINITY_FAIL,
    }
    # An empty namespaceSelector selects every namespace.
    everywhere = term(ZONE, {"app": "db"}, namespaceSelector={})
    incoming = pod("web", affinity=required("podAffinity", everywhere))
    assert run_filter(snapshot, incoming)["a1"] is None


def test_required_anti_affinity_rejects_the_domain_of_matching_pods() -> None:
    snapshot = cluster(pod("db", {"app": "db"}, "a1"))
    incoming = pod("web", affinity=required("podAntiAffinity", term(HOST, {"app": "db"})))
    assert run_filter(snapshot, incoming) == {"a1": ANTI_FAIL, "b1": None, "bare": None, "a2": None}


def test_existing_pods_anti_affinity_rejects_their_whole_domain() -> None:
    guard = pod(
        "guard",
        {"app": "guard"},
        "b1",
        affinity=required("podAntiAffinity", term(ZONE, {"app": "web"})),
    )
    snapshot = cluster(guard)
    assert run_filter(snapshot, pod("web", {"app": "web"})) == {
        "a1": None,
        "b1": EXISTING_FAIL,
        "bare": None,
        "a2": None,
    }
    # Pods it does not select are not concerned: the plugin skips them.
    assert set(run_filter(snapshot, pod("api", {"app": "api"})).values()) == {None}


def test_the_first_failing_rule_gives_the_reason() -> None:
    guard = pod(
        "guard",
        {"app": "db"},
        "a1",
        affinity=required("podAntiAffinity", term(HOST, {"app": "web"})),
    )
    snapshot = cluster(guard, pod("db2", {"app": "db"}, "a2"))
    affinity = {
        **required("podAffinity", term(ZONE, {"app": "db"})),
        **required("podAntiAffinity", term(HOST, {"app": "db"})),
    }
    incoming = pod("web", {"app": "web"}, affinity=affinity)
    assert run_filter(snapshot, incoming) == {
        "a1": ANTI_FAIL,  # anti-affinity is checked before existing pods' anti-affinity
        "b1": AFFINITY_FAIL,
        "bare": AFFINITY_FAIL,
        "a2": ANTI_FAIL,
    }


def test_add_and_remove_pod_update_the_counts() -> None:
    snapshot = cluster(pod("db", {"app": "db"}, "a1"))
    plugin = InterPodAffinity(None, Handle(snapshot))
    incoming = pod("web", affinity=required("podAntiAffinity", term(HOST, {"app": "db"})))
    state = CycleState()
    plugin.pre_filter(state, incoming, snapshot)
    a1 = snapshot.get("a1")
    b1 = snapshot.get("b1")
    assert a1 is not None
    assert b1 is not None
    assert plugin.filter(state, incoming, a1).code == Code.UNSCHEDULABLE
    copy = state.clone()
    victim = snapshot.pod("ns/db")
    assert victim is not None
    plugin.remove_pod(copy, incoming, victim, a1)
    assert plugin.filter(copy, incoming, a1).is_success
    plugin.add_pod(copy, incoming, pod("db3", {"app": "db"}, "b1"), b1)
    assert plugin.filter(copy, incoming, b1).code == Code.UNSCHEDULABLE
    assert plugin.filter(state, incoming, b1).is_success  # the original state is untouched


def run_score(
    snapshot: Snapshot, incoming: PodInfo, args: InterPodAffinityArgs | None = None
) -> dict[str, int] | None:
    """Normalized scores by node (None when the plugin skips scoring)."""
    plugin = InterPodAffinity(args, Handle(snapshot))
    state = CycleState()
    slots = snapshot.order()
    status = plugin.pre_score(state, incoming, snapshot, slots)
    if status.is_skip:
        return None
    raw = plugin.score_nodes(state, incoming, snapshot, slots)
    single = [plugin.score(state, incoming, snapshot.info(int(s)))[0] for s in slots]
    assert list(raw) == single
    scores = np.array(raw, dtype=np.int64)
    plugin.normalize_score(state, incoming, scores)
    return dict(zip(snapshot.names(slots), (int(s) for s in scores), strict=True))


def test_preferred_terms_score_by_domain_and_normalize_min_max() -> None:
    snapshot = cluster(
        pod("db", {"app": "db"}, "a1"),
        pod("cache", {"app": "cache"}, "a2"),
        pod("cache2", {"app": "cache"}, "b1"),
    )
    affinity = {
        **preferred("podAffinity", (10, term(ZONE, {"app": "db"}))),
        **preferred("podAntiAffinity", (4, term(HOST, {"app": "cache"}))),
    }
    # Raw: a1 = 10 (zone a has db), a2 = 10 - 4, b1 = -4, bare = 0.
    # min -4, max 10: a1 100*14/14, a2 100*10/14 = 71.4, b1 0, bare 100*4/14 = 28.5.
    assert run_score(snapshot, pod("web", affinity=affinity)) == {
        "a1": 100,
        "b1": 0,
        "bare": 28,
        "a2": 71,
    }


def test_existing_pods_terms_count_with_hard_pod_affinity_weight() -> None:
    wants_web = pod(
        "fan", {"app": "fan"}, "b1", affinity=required("podAffinity", term(ZONE, {"app": "web"}))
    )
    dislikes_web = pod(
        "hater",
        {"app": "hater"},
        "a1",
        affinity=preferred("podAntiAffinity", (7, term(HOST, {"app": "web"}))),
    )
    snapshot = cluster(wants_web, dislikes_web)
    incoming = pod("web", {"app": "web"})
    # hardPodAffinityWeight 5: b1 = +5; a1 = -7; others 0; min -7, max 5 (spread 12):
    # a1 0, a2 and bare 100*7/12 = 58.3, b1 100.
    args = InterPodAffinityArgs(hard_pod_affinity_weight=5)
    assert run_score(snapshot, incoming, args) == {"a1": 0, "b1": 100, "bare": 58, "a2": 58}
    # Weight 0 ignores the existing pods' required terms.
    args = InterPodAffinityArgs(hard_pod_affinity_weight=0)
    assert run_score(snapshot, incoming, args) == {"a1": 0, "b1": 100, "bare": 100, "a2": 100}


def test_scoring_skips_without_terms_and_can_ignore_existing_preferences() -> None:
    snapshot = cluster(pod("db", {"app": "db"}, "a1"))
    assert run_score(snapshot, pod("web", {"app": "web"})) is None
    hater = pod(
        "hater", {}, "a1", affinity=preferred("podAntiAffinity", (7, term(HOST, {"app": "web"})))
    )
    snapshot = cluster(hater)
    ignoring = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True)
    assert run_score(snapshot, pod("web", {"app": "web"}), ignoring) is None
    assert run_score(snapshot, pod("web", {"app": "web"})) == {
        "a1": 0,
        "b1": 100,
        "bare": 100,
        "a2": 100,
    }


def test_equal_scores_normalize_to_zero() -> None:
    snapshot = cluster(pod("db", {"app": "db"}, "bare"))
    affinity = preferred("podAffinity", (10, term(ZONE, {"app": "db"})))
    # The only matching pod's node has no zone: nothing counts, scoring is skipped.
    assert run_score(snapshot, pod("web", affinity=affinity)) is None
    only_a = cluster(pod("db", {"app": "db"}, "a1"))
    only_a.remove_node("b1")
    only_a.remove_node("bare")
    assert run_score(only_a, pod("web", affinity=affinity)) == {"a1": 0, "a2": 0}


def test_invalid_selector_is_reported_with_its_field() -> None:
    snapshot = cluster()
    bad = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}
    incoming = pod("web", affinity=required("podAffinity", {**bad, "topologyKey": ZONE}))
    plugin = InterPodAffinity(None, Handle(snapshot))
    _, status = plugin.pre_filter(CycleState(), incoming, snapshot)
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (
        "parsing pod: podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".labelSelector.matchExpressions[0].values: must be non-empty for operator In",
    )


@pytest.mark.parametrize("count", [1, 3])
def test_only_pods_with_affinity_are_indexed(count: int) -> None:
    plain = [pod(f"p{i}", {"app": "db"}, "a1") for i in range(count)]
    guard = pod("g", {}, "b1", affinity=required("podAntiAffinity", term(HOST, {"app": "web"})))
    snapshot = cluster(*plain, guard)
    assert list(snapshot.pods_with_affinity) == ["ns/g"]
    snapshot.remove_node("b1")
    assert not snapshot.pods_with_affinity


def walked_terms(snapshot: Snapshot) -> dict[str, dict[tuple[Any, str], int]]:
    """What the index must hold, by walking every placed pod with affinity (upstream's way)."""
    walked: dict[str, dict[tuple[Any, str], int]] = {
        "required_anti_affinity": {},
        "required_affinity": {},
        "preferred_affinity": {},
        "preferred_anti_affinity": {},
    }
    for existing in snapshot.pods_with_affinity.values():
        info = snapshot.get(existing.node_name)
        assert info is not None
        terms = pod_terms(existing)
        weighted = {
            "required_anti_affinity": [(1, t) for t in terms.required_anti_affinity],
            "required_affinity": [(1, t) for t in terms.required_affinity],
            "preferred_affinity": [(w.weight, w.term) for w in terms.preferred_affinity],
            "preferred_anti_affinity": [(w.weight, w.term) for w in terms.preferred_anti_affinity],
        }
        for role, entries in weighted.items():
            for amount, item in entries:
                value = info.labels.get(item.topology_key)
                if value is not None:
                    sums = walked[role]
                    sums[(item, value)] = sums.get((item, value), 0) + amount
    return walked


def indexed_terms(snapshot: Snapshot) -> dict[str, dict[tuple[Any, str], int]]:
    index = snapshot.pod_index(INDEX_NAME, ExistingTerms)
    return {
        role: {
            (item, value): amount
            for item, by_value in getattr(index, role).items()
            for value, amount in by_value.items()
        }
        for role in (
            "required_anti_affinity",
            "required_affinity",
            "preferred_affinity",
            "preferred_anti_affinity",
        )
    }


AFFINITIES = [
    required("podAntiAffinity", term(HOST, {"app": "web"})),
    required("podAffinity", term(ZONE, {"app": "db"})),
    {
        **required("podAffinity", term(ZONE, {"app": "db"})),
        **preferred("podAntiAffinity", (50, term(HOST, {"app": "web"}))),
    },
    preferred("podAffinity", (3, term(ZONE, {"app": "web"})), (3, term(ZONE, {"app": "web"}))),
]


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["add", "remove", "relabel", "drop-node", "restore-node"]),
            st.integers(0, 7),
            st.sampled_from([n["metadata"]["name"] for n in NODES]),
            st.integers(0, len(AFFINITIES)),
        ),
        max_size=25,
    )
)
def test_index_matches_a_walk_over_every_pod(steps: list[tuple[str, int, str, int]]) -> None:
    """Pods come and go, nodes change zone, leave and return: the index built once at the
    start always equals a fresh walk over the placed pods."""
    snapshot = cluster()
    indexed_terms(snapshot)  # registered before anything happens, then kept current
    nodes = {n["metadata"]["name"]: n for n in NODES}
    for action, number, node_name, shape in steps:
        key = f"p{number}"
        if action == "add":
            affinity = AFFINITIES[shape] if shape < len(AFFINITIES) else None
            snapshot.add_pod(pod(key, {"app": "web"}, node_name, affinity=affinity))
        elif action == "remove":
            snapshot.remove_pod(f"ns/{key}")
        elif action == "relabel" and node_name in snapshot:
            moved = node(node_name, f"zone-{shape}")
            nodes[node_name] = moved
            snapshot.update_node(moved)
        elif action == "drop-node":
            snapshot.remove_node(node_name)
        elif action == "restore-node" and node_name not in snapshot:
            snapshot.add_node(nodes[node_name])
        assert indexed_terms(snapshot) == walked_terms(snapshot)
    late = cluster()
    for existing in snapshot.pods():
        late.add_pod(existing)
    assert indexed_terms(late) == walked_terms(late)  # an index built after the pods came
