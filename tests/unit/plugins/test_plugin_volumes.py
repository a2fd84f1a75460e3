"""The volume plugins against hand-computed upstream results: VolumeZone, VolumeRestrictions,
NodeVolumeLimits and VolumeBinding, per node and through the default profile."""

from __future__ import annotations

from typing import Any

from scheduler_runtime.config import load_configuration
from scheduler_runtime.config.args import VolumeBindingArgs
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import CycleState, Handle, Status
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugins.nodevolumelimits import NodeVolumeLimits, attach_limit_key
from scheduler_runtime.plugins.volumebinding import VolumeBinding, broken_linear, capacity_score
from scheduler_runtime.plugins.volumerestrictions import VolumeRestrictions
from scheduler_runtime.plugins.volumezone import VolumeZone
from scheduler_runtime.simulate import Simulation

ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str | None = None) -> dict[str, Any]:
    labels = {HOST: name}
    if zone:
        labels[ZONE] = zone
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str, *volumes: dict[str, Any], node_name: str = "", created: str = "") -> Any:
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "creationTimestamp": created,
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "c"}], "volumes": list(volumes)},
    }


def claim_volume(claim: str) -> dict[str, Any]:
    return {"name": claim, "persistentVolumeClaim": {"claimName": claim}}


def claim(
    name: str,
    *,
    volume: str = "",
    storage_class: str = "",
    size: str = "1Gi",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if volume:
        metadata["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": {
            "volumeName": volume,
            "storageClassName": storage_class,
            "accessModes": list(modes),
            "resources": {"requests": {"storage": size}},
        },
    }


def persistent_volume(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    affinity: list[dict[str, Any]] | None = None,
    storage_class: str = "",
    size: str = "1Gi",
    csi: tuple[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": storage_class,
    }
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": "Available"},
    }


def storage_class(name: str, mode: str, provisioner: str, zones: tuple[str, ...] = ()) -> Any:
    found: dict[str, Any] = {
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if zones:
        found["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}
        ]
    return found


def cluster(*objects: dict[str, Any]) -> Snapshot:
    snapshot = Snapshot()
    for obj in objects:
        if obj["kind"] == "Node":
            snapshot.add_node(obj)
    for obj in objects:
        if obj["kind"] == "Pod":
            snapshot.add_pod(pod_info(obj))
        elif obj["kind"] != "Node":
            snapshot.objects.apply(obj)
    return snapshot


def outcomes(plugin: Any, snapshot: Snapshot, incoming: PodInfo) -> dict[str, Status] | Status:
    """Each node's filter status, or the PreFilter status when it does not succeed."""
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot)
    if not status.is_success:
        return status
    return {n.name: plugin.filter(state, incoming, n) for n in snapshot.node_infos()}


def passing(results: dict[str, Status] | Status) -> set[str]:
    assert isinstance(results, dict)
    return {name for name, status in results.items() if status.is_success}


ZONED = (node("a1", "a"), node("b1", "b"), node("bare"))


def test_volume_zone_keeps_pods_in_their_volumes_zones() -> None:
    bound = claim("data", volume="pv1")
    for labels, allowed in [
        ({ZONE: "b"}, {"b1", "bare"}),
        ({ZONE: "a__b"}, {"a1", "b1", "bare"}),
        ({BETA_ZONE: "a"}, {"a1", "bare"}),  # a beta PV label matches the GA node label
    ]:
        snapshot = cluster(*ZONED, bound, persistent_volume("pv1", labels=labels))
        plugin = VolumeZone(None, Handle(snapshot))
        results = outcomes(plugin, snapshot, pod_info(pod("p", claim_volume("data"))))
        assert passing(results) == allowed
        assert isinstance(results, dict)
        assert results["a1"].is_success or results["a1"] == Status.unresolvable(
            "node(s) had no available volume zone"
        )
        state = CycleState()
        incoming = pod_info(pod("p", claim_volume("data")))
        plugin.pre_filter(state, incoming, snapshot)
        slots = snapshot.order()
        verdicts = plugin.filter_nodes(state, incoming, snapshot, slots)
        batch = {
            snapshot.name(int(s)) for s, r in zip(slots, verdicts.rejected, strict=True) if not r
        }
        assert batch == allowed


def test_volume_zone_skips_unbound_claims_that_wait_for_a_consumer() -> None:
    snapshot = cluster(
        *ZONED,
        claim("later", storage_class="wait"),
        claim("now", storage_class="immediate"),
        storage_class("wait", "WaitForFirstConsumer", "csi.example.com"),
        storage_class("immediate", "Immediate", "csi.example.com"),
    )
    plugin = VolumeZone(None, Handle(snapshot))
    state = CycleState()
    assert plugin.pre_filter(state, pod_info(pod("p", claim_volume("later"))), snapshot)[1].is_skip
    assert outcomes(plugin, snapshot, pod_info(pod("p", claim_volume("now")))) == (
        Status.unresolvable("PersistentVolume had no name")
    )
    assert outcomes(plugin, snapshot, pod_info(pod("p", claim_volume("gone")))) == (
        Status.unresolvable('persistentvolumeclaim "gone" not found')
    )


def gce(disk: str, *, read_only: bool) -> dict[str, Any]:
    return {"name": disk, "gcePersistentDisk": {"pdName": disk, "readOnly": read_only}}


def test_volume_restrictions_disk_conflicts() -> None:
    snapshot = cluster(
        node("n1"), node("n2"), pod("old", gce("disk1", read_only=False), node_name="n1")
    )
    plugin = VolumeRestrictions(None, Handle(snapshot))
    results = outcomes(plugin, snapshot, pod_info(pod("new", gce("disk1", read_only=True))))
    assert isinstance(results, dict)
    assert results["n1"] == Status.unschedulable("node(s) had no available disk")
    assert results["n2"].is_success
    snapshot = cluster(node("n1"), pod("old", gce("disk1", read_only=True), node_name="n1"))
    plugin = VolumeRestrictions(None, Handle(snapshot))
    assert passing(
        outcomes(plugin, snapshot, pod_info(pod("new", gce("disk1", read_only=True))))
    ) == {"n1"}
    ebs = {"name": "v", "awsElasticBlockStore": {"volumeID": "vol-1", "readOnly": True}}
    snapshot = cluster(node("n1"), pod("old", ebs, node_name="n1"))
    plugin = VolumeRestrictions(None, Handle(snapshot))
    assert passing(outcomes(plugin, snapshot, pod_info(pod("new", ebs)))) == set()


def test_read_write_once_pod_claims_serve_one_pod() -> None:
    exclusive = claim("solo", volume="pv1", modes=("ReadWriteOncePod",))
    snapshot = cluster(
        node("n1"), node("n2"), exclusive, pod("owner", claim_volume("solo"), node_name="n1")
    )
    plugin = VolumeRestrictions(None, Handle(snapshot))
    results = outcomes(plugin, snapshot, pod_info(pod("second", claim_volume("solo"))))
    reason = (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod"
    )
    assert results == {"n1": Status.unschedulable(reason), "n2": Status.unschedulable(reason)}
    # Preemption removing the owner lifts the conflict.
    state = CycleState()
    incoming = pod_info(pod("second", claim_volume("solo")))
    plugin.pre_filter(state, incoming, snapshot)
    owner = snapshot.pod("uid-owner")
    n1 = snapshot.get("n1")
    assert owner is not None
    assert n1 is not None
    plugin.remove_pod(state, incoming, owner, n1)
    assert plugin.filter(state, incoming, n1).is_success


def test_node_volume_limits_count_csi_volumes_per_driver() -> None:
    driver = "ebs.csi.aws.com"
    csi_node = {
        "kind": "CSINode",
        "metadata": {"name": "n1"},
        "spec": {"drivers": [{"name": driver, "allocatable": {"count": 1}}]},
    }
    objects = (
        node("n1"),
        node("n2"),
        csi_node,
        claim("one", volume="pv1"),
        claim("two", volume="pv2"),
        persistent_volume("pv1", csi=(driver, "h1")),
        persistent_volume("pv2", csi=(driver, "h2")),
        pod("old", claim_volume("one"), node_name="n1"),
    )
    snapshot = cluster(*objects)
    plugin = NodeVolumeLimits(None, Handle(snapshot))
    results = outcomes(plugin, snapshot, pod_info(pod("new", claim_volume("two"))))
    assert results == {
        "n1": Status.unschedulable("node(s) exceed max volume count"),
        "n2": Status(),
    }
    # The same volume again counts once.
    assert passing(outcomes(plugin, snapshot, pod_info(pod("again", claim_volume("one"))))) == {
        "n1",
        "n2",
    }
    missing = outcomes(plugin, snapshot, pod_info(pod("lost", claim_volume("nope"))))
    assert isinstance(missing, dict)
    assert missing["n2"] == Status.unresolvable(
        'looking up PVC ns/nope: persistentvolumeclaim "nope" not found'
    )


def test_volume_limit_scaling_needs_an_opted_in_driver_on_the_node() -> None:
    """VolumeLimitScaling: a driver whose CSIDriver sets preventPodSchedulingIfMissing must be
    in the node's CSINode (upstream's checkCSIDriverOnNode); off, the CSIDriver changes
    nothing."""
    strict, lax = "strict.csi.example.com", "lax.csi.example.com"
    csi_node = {
        "kind": "CSINode",
        "metadata": {"name": "n1"},
        "spec": {"drivers": [{"name": strict}]},
    }

    def csi_driver(name: str, prevent: bool) -> dict[str, Any]:
        spec = {"preventPodSchedulingIfMissing": prevent}
        return {"kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}

    objects = (
        node("n1"),
        node("n2"),
        csi_node,
        csi_driver(strict, True),
        csi_driver(lax, False),
        claim("s", volume="pv-s"),
        claim("l", volume="pv-l"),
        persistent_volume("pv-s", csi=(strict, "h1")),
        persistent_volume("pv-l", csi=(lax, "h2")),
    )
    snapshot = cluster(*objects)
    on = NodeVolumeLimits(None, Handle(snapshot, features=Features(volume_limit_scaling=True)))
    off = NodeVolumeLimits(None, Handle(snapshot, features=Features(volume_limit_scaling=False)))
    wants_strict = pod_info(pod("p", claim_volume("s")))
    assert outcomes(on, snapshot, wants_strict) == {
        "n1": Status(),
        "n2": Status.unschedulable(
            "strict.csi.example.com CSI driver is not installed on the node"
        ),
    }
    assert passing(outcomes(off, snapshot, wants_strict)) == {"n1", "n2"}
    # A driver that does not opt in (or has no CSIDriver) counts as installed everywhere.
    assert passing(outcomes(on, snapshot, pod_info(pod("q", claim_volume("l"))))) == {"n1", "n2"}


def test_attach_limit_keys_shorten_long_driver_names() -> None:
    assert attach_limit_key("ebs.csi.aws.com") == "attachable-volumes-csi-ebs.csi.aws.com"
    long_name = "a-very-long-csi-driver-name.storage.example.com"
    key = attach_limit_key(long_name)
    assert key.startswith("attachable-volumes-csi-a-very-long-csi-driv")
    assert len(key) == len("attachable-volumes-csi-") + 23 + 16


def hostname_in(*names: str) -> list[dict[str, Any]]:
    return [{"matchExpressions": [{"key": HOST, "operator": "In", "values": list(names)}]}]


def zone_in(*zones: str) -> list[dict[str, Any]]:
    return [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}]


def test_volume_binding_bound_claims_follow_the_volume_node_affinity() -> None:
    snapshot = cluster(
        *ZONED,
        claim("data", volume="pv1"),
        persistent_volume("pv1", affinity=zone_in("a")),
    )
    plugin = VolumeBinding(None, Handle(snapshot))
    results = outcomes(plugin, snapshot, pod_info(pod("p", claim_volume("data"))))
    assert isinstance(results, dict)
    assert passing(results) == {"a1"}
    assert results["b1"] == Status.unresolvable(
        "node(s) didn't match PersistentVolume's node affinity"
    )


def test_volume_binding_local_volumes_narrow_the_nodes() -> None:
    snapshot = cluster(
        *ZONED, claim("data", volume="pv1"), persistent_volume("pv1", affinity=hostname_in("b1"))
    )
    plugin = VolumeBinding(None, Handle(snapshot))
    result, status = plugin.pre_filter(
        CycleState(), pod_info(pod("p", claim_volume("data"))), snapshot
    )
    assert status.is_success
    assert result is not None
    assert result.node_names == frozenset({"b1"})


def test_volume_binding_prefilter_failures() -> None:
    snapshot = cluster(
        *ZONED,
        claim("now", storage_class="immediate"),
        storage_class("immediate", "Immediate", "csi.example.com"),
        claim("dangling", volume="missing"),
    )
    plugin = VolumeBinding(None, Handle(snapshot))
    assert outcomes(
        plugin, snapshot, pod_info(pod("p", claim_volume("now")))
    ) == Status.unresolvable("pod has unbound immediate PersistentVolumeClaims")
    ephemeral = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}
    assert outcomes(plugin, snapshot, pod_info(pod("p", ephemeral))) == Status.unresolvable(
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"'
    )
    results = outcomes(plugin, snapshot, pod_info(pod("p", claim_volume("dangling"))))
    assert isinstance(results, dict)
    assert results["a1"] == Status.unresolvable(
        "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
    )


CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def simulate(
    *objects: dict[str, Any],
) -> tuple[Simulation, dict[str, tuple[str | None, str | None]]]:
    simulation = Simulation(load_configuration(CONFIG), seed=1)
    simulation.load(objects)
    return simulation, {p.name: (p.node, p.message) for p in simulation.run()}


def test_wait_for_first_consumer_binds_the_smallest_available_volume_once() -> None:
    local = storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")
    simulation, placed = simulate(
        node("n1"),
        local,
        persistent_volume("small", storage_class="local", size="1Gi", affinity=hostname_in("n1")),
        persistent_volume("big", storage_class="local", size="5Gi", affinity=hostname_in("n1")),
        claim("c1", storage_class="local", size="1Gi"),
        claim("c2", storage_class="local", size="1Gi"),
        claim("c3", storage_class="local", size="1Gi"),
        pod("p1", claim_volume("c1"), created="2024-01-01T00:00:01Z"),
        pod("p2", claim_volume("c2"), created="2024-01-01T00:00:02Z"),
        pod("p3", claim_volume("c3"), created="2024-01-01T00:00:03Z"),
    )
    assert placed["p1"] == ("n1", None)
    assert placed["p2"] == ("n1", None)
    assert placed["p3"][0] is None
    assert placed["p3"][1] is not None
    assert placed["p3"][1].startswith(
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind."
    )
    claimed = {
        (v.get("spec") or {}).get("claimRef", {}).get("name")
        for v in simulation.snapshot.objects.all("PersistentVolume")
    }
    assert claimed == {"c1", "c2"}
    small = simulation.snapshot.objects.get("PersistentVolume", "small")
    assert small is not None
    assert small["spec"]["claimRef"]["name"] == "c1"


def test_dynamic_provisioning_honours_allowed_topologies() -> None:
    zonal = storage_class("zonal", "WaitForFirstConsumer", "csi.example.com", zones=("b",))
    simulation, placed = simulate(
        *ZONED, zonal, claim("c1", storage_class="zonal"), pod("p1", claim_volume("c1"))
    )
    assert placed["p1"] == ("b1", None)
    provisioned = simulation.snapshot.objects.get("PersistentVolumeClaim", "ns/c1")
    assert provisioned is not None
    assert provisioned["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "b1"


def test_volume_binding_reasons_reach_the_message() -> None:
    _, placed = simulate(
        *ZONED,
        claim("data", volume="pv1"),
        persistent_volume("pv1", affinity=zone_in("c")),
        pod("p", claim_volume("data")),
    )
    node_name, message = placed["p"]
    assert node_name is None
    assert message is not None
    assert message.startswith(
        "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity."
    )
    assert "3 Preemption is not helpful for scheduling." in message


def local_volume_cluster() -> tuple[Snapshot, VolumeBinding, NodeInfo]:
    """Node n1 with an unbound local volume `pv` and claim `c` waiting for its first consumer."""
    local = storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")
    snapshot = cluster(
        node("n1"),
        local,
        persistent_volume("pv", storage_class="local"),
        claim("c", storage_class="local"),
    )
    n1 = snapshot.get("n1")
    assert n1 is not None
    return snapshot, VolumeBinding(None, Handle(snapshot)), n1


def test_reserve_assumes_the_binding_and_unreserve_takes_it_back() -> None:
    snapshot, plugin, n1 = local_volume_cluster()
    incoming = pod_info(pod("p", claim_volume("c")))

    def claimed_by() -> Any:
        volume = snapshot.objects.get("PersistentVolume", "pv")
        assert volume is not None
        return (volume["spec"].get("claimRef") or {}).get("name")

    for newer_arrives in (False, True):
        state = CycleState()
        plugin.pre_filter(state, incoming, snapshot)
        assert plugin.filter(state, incoming, n1).is_success
        assert plugin.reserve(state, incoming, "n1").is_success
        assert claimed_by() == "c"
        if newer_arrives:  # the API server's own binding, seen through the watch
            bound = persistent_volume("pv", storage_class="local")
            bound["spec"]["claimRef"] = {"namespace": "ns", "name": "c"}
            snapshot.objects.apply(bound)
        plugin.unreserve(state, incoming, "n1")
        assert claimed_by() == ("c" if newer_arrives else None)


CAPACITY_DRIVER = "capacity.csi.example.com"


def csi_storage_capacity(name: str, node_name: str, capacity: str, **extra: Any) -> Any:
    return {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": "tracked",
        "nodeTopology": {"matchLabels": {HOST: node_name}},
        "capacity": capacity,
        **extra,
    }


TRACKED = (
    {
        "kind": "CSIDriver",
        "metadata": {"name": CAPACITY_DRIVER},
        "spec": {"storageCapacity": True},
    },
    storage_class("tracked", "WaitForFirstConsumer", CAPACITY_DRIVER),
    node("small"),
    node("big"),
    node("full"),
    node("away"),
    csi_storage_capacity("small", "small", "10Gi"),
    csi_storage_capacity("big", "big", "100Gi"),
    # The maximum volume size, when given, is what must fit.
    csi_storage_capacity("full", "full", "100Gi", maximumVolumeSize="4Gi"),
    claim("data", storage_class="tracked", size="5Gi"),
)


def volume_binding(snapshot: Snapshot, *, scoring: bool) -> VolumeBinding:
    features = Features(storage_capacity_scoring=scoring)
    args = VolumeBindingArgs.model_validate({}, context={"features": features})
    return VolumeBinding(args, Handle(snapshot, features=features))


def test_provisioning_needs_a_csi_storage_capacity_the_node_reaches() -> None:
    """hasEnoughCapacity: a CSIDriver with storageCapacity needs a CSIStorageCapacity of the
    class, reaching the node, big enough (maximumVolumeSize first); whatever the gate."""
    snapshot = cluster(*TRACKED)
    for scoring in (False, True):
        plugin = volume_binding(snapshot, scoring=scoring)
        results = outcomes(plugin, snapshot, pod_info(pod("p", claim_volume("data"))))
        assert results == {
            "small": Status(),
            "big": Status(),
            "full": Status.unresolvable("node(s) did not have enough free storage"),
            "away": Status.unresolvable("node(s) did not have enough free storage"),
        }


def scores(plugin: VolumeBinding, snapshot: Snapshot, incoming: PodInfo) -> Any:
    """PreFilter, Filter on every node, then PreScore and Score of the nodes that passed."""
    state = CycleState()
    plugin.pre_filter(state, incoming, snapshot)
    feasible = [n for n in snapshot.node_infos() if plugin.filter(state, incoming, n).is_success]
    status = plugin.pre_score(state, incoming, snapshot, None)  # type: ignore[arg-type]
    if status.is_skip:
        return status
    return {n.name: plugin.score(state, incoming, n)[0] for n in feasible}


def test_storage_capacity_scoring_prefers_the_emptier_node() -> None:
    """StorageCapacityScoring on: the default shape (utilization 0 -> 10, 100 -> 0) scores
    5Gi of 10Gi at 50 and 5Gi of 100Gi at 95; off, PreScore skips."""
    snapshot = cluster(*TRACKED)
    incoming = pod_info(pod("p", claim_volume("data")))
    assert scores(volume_binding(snapshot, scoring=True), snapshot, incoming) == {
        "small": 50,
        "big": 95,
    }
    assert scores(volume_binding(snapshot, scoring=False), snapshot, incoming).is_skip
    # A pod without claims would score 0 everywhere (upstream's Score): its PreScore skips.
    bare = pod_info(pod("bare"))
    assert scores(volume_binding(snapshot, scoring=True), snapshot, bare).is_skip


def test_storage_capacity_scoring_of_static_bindings_uses_the_volumes() -> None:
    """With a PV to bind, the score is the claim's request over the PV's capacity."""
    local = storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")
    snapshot = cluster(
        node("n1"),
        node("n2"),
        local,
        persistent_volume("pv1", storage_class="local", size="2Gi", affinity=hostname_in("n1")),
        persistent_volume("pv2", storage_class="local", size="8Gi", affinity=hostname_in("n2")),
        claim("c", storage_class="local", size="1Gi"),
    )
    incoming = pod_info(pod("p", claim_volume("c")))
    # 1Gi of 2Gi: 50; 1Gi of 8Gi: utilization 12 -> 100 - 12 = 88.
    assert scores(volume_binding(snapshot, scoring=True), snapshot, incoming) == {
        "n1": 50,
        "n2": 88,
    }


def test_capacity_scores_follow_a_custom_shape() -> None:
    shape = ((0, 0), (50, 100), (100, 0))
    assert broken_linear(shape, 25) == 50
    assert broken_linear(shape, 75) == 50
    assert broken_linear(shape, 120) == 0
    # Go's division truncates toward zero: 100 - 33, not 100 - 34.
    assert broken_linear(((0, 100), (30, 0)), 10) == 67
    # Two classes weigh the same, the mean rounded half away from zero.
    assert capacity_score(shape, {"a": (1, 4), "b": (3, 4)}) == 50
    assert capacity_score(shape, {"a": (1, 2), "b": (1, 100)}) == 51
    assert capacity_score(shape, {}) == 0
    assert capacity_score(shape, {"a": (5, 0)}) == 0  # no capacity: fully used


def test_a_pod_with_volumes_to_bind_is_nominated_before_they_are_bound() -> None:
    """VolumeBinding's PreBindPreFlight (as v1.37.2's): PreBind has work when Reserve chose
    volumes to bind, so the pod's node is written as its nominated node first
    (NominatedNodeNameForExpectation); a pod whose claims are all bound, or that has none,
    has nothing for PreBind and is bound at once."""
    local = storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")
    bound_volume = persistent_volume("pv-data")
    bound_volume["spec"]["claimRef"] = {"namespace": "ns", "name": "data", "uid": "uid-data"}
    simulation = Simulation(load_configuration(CONFIG), seed=1)
    simulation.load(
        [
            node("n1"),
            local,
            persistent_volume("pv", storage_class="local", affinity=hostname_in("n1")),
            claim("c", storage_class="local"),
            bound_volume,
            claim("data", volume="pv-data"),
            pod("to-bind", claim_volume("c"), created="2024-01-01T00:00:01Z"),
            pod("bound", claim_volume("data"), created="2024-01-01T00:00:02Z"),
            pod("plain", created="2024-01-01T00:00:03Z"),
        ]
    )
    nominated: list[str] = []
    simulation.expecting = lambda attempt: nominated.append(attempt.pod.name)  # type: ignore[method-assign]
    placed = {p.name: p.node for p in simulation.run()}
    assert placed == {"to-bind": "n1", "bound": "n1", "plain": "n1"}
    assert nominated == ["to-bind"]


def test_pre_bind_pre_flight_says_whether_volumes_wait_to_be_bound() -> None:
    snapshot, plugin, n1 = local_volume_cluster()
    for incoming, work in (
        (pod_info(pod("p", claim_volume("c"))), True),
        (pod_info(pod("q")), False),
    ):
        state = CycleState()
        plugin.pre_filter(state, incoming, snapshot)
        assert plugin.filter(state, incoming, n1).is_success
        assert plugin.reserve(state, incoming, "n1").is_success
        flight = plugin.pre_bind_pre_flight(state, incoming, "n1")
        assert flight.is_success is work
        assert flight.is_skip is not work
