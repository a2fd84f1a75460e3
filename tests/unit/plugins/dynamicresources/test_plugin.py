"""DynamicResources at every extension point, through the scheduler's own backend and
scheduling sequence (simulate's): claims made from templates and allocated, devices never
given twice, shared and already-allocated claims, classes that do not exist, prioritized
lists, extended resources backed by DRA, binding conditions, and upstream's messages."""

from __future__ import annotations

import copy
import random
import threading
import time
from typing import Any

import pytest
from dra_objects import (
    CLASS,
    CONFIG,
    DRIVER,
    claim,
    device,
    device_class,
    devices_of,
    exactly,
    node,
    node_slice,
    placements,
    pod,
    simulation,
    template,
)

from scheduler_runtime.backend.claims import DRAState
from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.config.features import feature_gates
from scheduler_runtime.dra import allocator
from scheduler_runtime.framework.explain import annotation
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.plugins.dynamicresources import answers, binding
from scheduler_runtime.plugins.dynamicresources.claims import ClaimInfo, ClaimStore, StateData
from scheduler_runtime.plugins.dynamicresources.dynamicresources import allocator_features
from scheduler_runtime.simulate import Placement, Simulation

PREEMPTION_NOT_HELPFUL = (
    "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
)


def not_available(n: int, reason: str, post_filter: str = "still not schedulable") -> str:
    return f"0/{n} nodes are available: {reason}. {post_filter}, " + PREEMPTION_NOT_HELPFUL.format(
        n=n
    )


def test_claims_from_templates_get_distinct_devices_until_none_is_left() -> None:
    found = placements(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n1", device("gpu-0"), device("gpu-1")),
        template(),
        *(pod(f"p{i}", created=i) for i in range(3)),
    )
    assert found["p0"].node == found["p1"].node == "n1"
    assert sorted(devices_of(found["p0"]) + devices_of(found["p1"])) == [
        (DRIVER, "n1", "gpu-0"),
        (DRIVER, "n1", "gpu-1"),
    ]
    assert found["p2"].node is None
    assert found["p2"].message == not_available(2, "2 cannot allocate all claims")


def test_the_allocation_is_written_as_upstream_writes_it() -> None:
    run = simulation(
        node("n1"), device_class(), node_slice("n1", device("gpu-0")), template(), pod("p")
    )
    (placed,) = run.run()
    (entry,) = placed.resource_claims
    assert entry["name"] == "gpu"
    assert entry["resourceClaimName"].startswith("p-gpu-")
    assert len(entry["resourceClaimName"]) == len("p-gpu-") + 5
    allocation = entry["allocation"]
    assert allocation.pop("allocationTimestamp").endswith("Z")
    assert allocation == {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
            ]
        },
    }
    written = run.claims.get_claim("default", entry["resourceClaimName"])
    assert written["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert written["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    assert written["metadata"]["ownerReferences"][0]["uid"] == "uid-p"


def test_selectors_of_class_and_request_choose_the_devices() -> None:
    wanted = exactly(
        selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]
    )
    found = placements(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n1", device("a", model="a100")),
        node_slice("n2", device("b", model="a100"), device("c", model="h100")),
        template("h100", wanted),
        pod("p", template_name="h100"),
    )
    assert found["p"].node == "n2"
    assert devices_of(found["p"]) == [(DRIVER, "n2", "c")]


def test_a_class_that_does_not_exist_holds_the_pod_with_upstreams_message() -> None:
    found = placements(node("n1"), node_slice("n1", device("gpu-0")), template(), pod("p"))
    assert found["p"].message == (
        "0/1 nodes are available: request gpu: device class gpu.example.com does not exist. "
        "no new claims to deallocate, " + PREEMPTION_NOT_HELPFUL.format(n=1)
    )


@pytest.mark.parametrize(
    ("version", "post_filter"), [("1.36", "no new claims to deallocate, "), ("1.37", "")]
)
def test_post_filter_says_why_nothing_was_undone_until_1_37(version: str, post_filter: str) -> None:
    found = placements(
        node("n1"), node_slice("n1", device("gpu-0")), template(), pod("p"), version=version
    )
    assert found["p"].message == (
        "0/1 nodes are available: request gpu: device class gpu.example.com does not exist. "
        + post_filter
        + PREEMPTION_NOT_HELPFUL.format(n=1)
    )


def test_a_pod_waits_outside_the_queue_until_its_claim_exists() -> None:
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", device("gpu-0")),
        pod("p", template_name=None, claim_name="mine"),
    )
    assert run.run() == []
    assert (
        run.backend.queue.gated("uid-p").message() == 'could not find ResourceClaim "default/mine"'
    )
    run.claims.load(claim("mine", exactly()))
    (placed,) = run.run()
    assert placed.node == "n1"


def test_a_shared_claim_is_allocated_once_and_reserved_for_every_pod() -> None:
    run = simulation(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n2", device("gpu-0")),
        claim("shared", exactly()),
        pod("a", template_name=None, claim_name="shared", created=1),
        pod("b", template_name=None, claim_name="shared", created=2),
    )
    found = {p.name: p for p in run.run()}
    assert found["a"].node == found["b"].node == "n2"
    written = run.claims.get_claim("default", "shared")
    assert [r["name"] for r in written["status"]["reservedFor"]] == ["a", "b"]


def test_an_allocated_claim_takes_the_pod_to_its_nodes() -> None:
    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "n2", "device": "gpu-0"}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
            ]
        },
    }
    found = placements(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n2", device("gpu-0")),
        claim("done", exactly(), allocation=allocation),
        pod("p", template_name=None, claim_name="done"),
    )
    assert found["p"].node == "n2"


def test_an_allocated_claim_unusable_everywhere_is_deallocated_in_post_filter() -> None:
    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "gone", "device": "gpu-0"}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}
            ]
        },
    }
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", device("gpu-0")),
        claim("stale", exactly(), allocation=allocation),
        pod("p", template_name=None, claim_name="stale"),
    )
    found = {p.name: p for p in run.run()}
    # Deallocated in the first attempt, allocated afresh in the next.
    assert found["p"].node == "n1"
    assert devices_of(found["p"]) == [(DRIVER, "n1", "gpu-0")]


def test_the_first_message_after_deallocating_is_upstreams() -> None:
    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "gone", "device": "gpu-0"}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}
            ]
        },
    }
    run = simulation(
        node("n1"),
        device_class(),
        claim("stale", exactly(), allocation=allocation),
        pod("p", template_name=None, claim_name="stale"),
    )
    run.step()
    assert run.placements["default/p"].message == not_available(
        1, "1 resourceclaim not available on the node", "deallocation of ResourceClaim completed"
    )
    assert "allocation" not in run.claims.get_claim("default", "stale")["status"]


def test_prioritized_lists_prefer_the_node_of_the_first_choice() -> None:
    choices = {
        "name": "gpu",
        "firstAvailable": [
            {
                "name": "big",
                "deviceClassName": CLASS,
                "selectors": [
                    {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}
                ],
            },
            {"name": "small", "deviceClassName": CLASS},
        ],
    }
    found = placements(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n1", device("a", model="a100")),
        node_slice("n2", device("b", model="h100")),
        template("choice", choices),
        pod("p", template_name="choice"),
    )
    assert found["p"].node == "n2"
    assert (
        found["p"].resource_claims[0]["allocation"]["devices"]["results"][0]["request"] == "gpu/big"
    )
    assert found["p"].explanation is not None
    (best, *_) = found["p"].explanation.candidates
    assert best.scores["DynamicResources"] == (100, 2)


def test_match_attribute_keeps_devices_of_a_claim_together() -> None:
    pair = template(
        "pair",
        exactly("a", count=1),
        exactly("b", count=1),
        constraints=[{"matchAttribute": f"{DRIVER}/numa"}],
    )
    found = placements(
        node("n1"),
        device_class(),
        node_slice("n1", device("x", numa=0), device("y", numa=1), device("z", numa=1)),
        pair,
        pod("p", template_name="pair"),
    )
    assert devices_of(found["p"]) == [(DRIVER, "n1", "y"), (DRIVER, "n1", "z")]


def test_a_cel_runtime_error_fails_the_pod_with_an_error() -> None:
    broken = device_class(expression='device.attributes["gpu.example.com"].model == "x"')
    found = placements(node("n1"), broken, node_slice("n1", device("gpu-0")), template(), pod("p"))
    assert found["p"].node is None
    assert found["p"].message == (
        'running "DynamicResources" filter plugin: class gpu.example.com: selector #0: CEL '
        "runtime error: no such key: model"
    )


def extended_pod(name: str, amount: str = "1") -> dict[str, Any]:
    return pod(name, template_name=None, requests={"example.com/gpu": amount})


def test_extended_resources_are_allocated_through_dra_where_no_node_advertises_them() -> None:
    run = simulation(
        node("n1"),
        device_class(extended="example.com/gpu"),
        node_slice("n1", device("gpu-0"), device("gpu-1")),
        extended_pod("p", "2"),
    )
    (placed,) = run.run()
    assert placed.node == "n1"
    (entry,) = placed.resource_claims
    assert entry["name"] is None
    assert entry["resourceClaimName"].startswith("p-extended-resources-")
    assert [r["request"] for r in entry["allocation"]["devices"]["results"]] == [
        "container-0-request-0",
        "container-0-request-0",
    ]
    written = run.claims.get_claim("default", entry["resourceClaimName"])
    assert written["metadata"]["annotations"] == {
        "resource.kubernetes.io/extended-resource-claim": "true"
    }
    bound = run.backend.cache.snapshot.pod("uid-p")
    assert bound is not None
    assert bound.pod["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [
            {
                "containerName": "c",
                "resourceName": "example.com/gpu",
                "requestName": "container-0-request-0",
            }
        ],
        "resourceClaimName": entry["resourceClaimName"],
    }


def test_extended_resources_without_devices_fail_with_upstreams_message() -> None:
    found = placements(node("n1"), device_class(extended="example.com/gpu"), extended_pod("p"))
    assert found["p"].message == not_available(1, "1 cannot allocate all claims")


def test_binding_conditions_not_met_in_time_are_the_pods_error() -> None:
    waiting = {
        **device("gpu-0"),
        "bindingConditions": ["attached"],
        "bindingFailureConditions": ["failed"],
    }
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", waiting),
        template(),
        pod("p"),
        plugin_config=[{"name": "DynamicResources", "args": {"bindingTimeout": "30s"}}],
    )
    run.step()
    placement = run.placements["default/p"]
    assert placement.node is None
    assert placement.message == (
        'running PreBind plugin "DynamicResources": device binding timeout: claim='
        + next(iter(run.claims.claims()))["metadata"]["name"]
    )
    assert run.claims.events[0][1:] == (
        "BindingConditionsPending",
        "waiting for binding conditions for device on node n1",
    )


def test_two_pods_in_flight_never_get_the_same_device() -> None:
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", device("gpu-0"), device("gpu-1")),
        template(),
        pod("a", created=1),
        pod("b", created=2),
    )
    taken: list[list[tuple[str, str, str]]] = []
    original = run._bind

    def hold(binding_cycle: Any, attempt: Any) -> None:
        # Both pods are reserved before either is bound: the second sees the first's
        # devices in flight.
        taken.append(sorted(run.backend.dra.claims.allocated_devices().devices))
        original(binding_cycle, attempt)

    run.sequence.start_binding = hold
    found = {p.name: p for p in run.run()}
    assert taken[0] == [(DRIVER, "n1", "gpu-0")]
    assert devices_of(found["a"]) != devices_of(found["b"])


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"filterTimeout": "-1s"}, "filterTimeout: must be zero or positive"),
        ({"bindingTimeout": "500ms"}, "bindingTimeout: must be at least 1 second"),
        ({"bindingTimeout": 3}, "bindingTimeout: must be a duration string like 10s"),
    ],
)
def test_args_are_checked_as_upstream_checks_them(args: dict[str, Any], error: str) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": args}]}],
    }
    with pytest.raises(ConfigError) as raised:
        load_configuration(config)
    assert str(raised.value) == f"profiles[0].pluginConfig[0].args.{error}"


def partitions(node_name: str, counters: int) -> list[dict[str, Any]]:
    """A second pool on the node: four partitions sharing `counters` units of memory, its
    counter set in a slice of its own (seen by every node)."""
    pool = {"name": f"{node_name}-parts", "generation": 1, "resourceSliceCount": 2}
    consumes = [{"counterSet": "mem", "counters": {"memory": {"value": "1"}}}]
    devices = node_slice(
        node_name,
        *({**device(f"part{i}", model="b"), "consumesCounters": consumes} for i in range(4)),
        name=f"{node_name}-parts",
    )
    devices["spec"]["pool"] = pool
    shared = {"name": "mem", "counters": {"memory": {"value": str(counters)}}}
    counter_set = node_slice(node_name, name=f"{node_name}-counters")
    counter_set["spec"] |= {"pool": pool, "sharedCounters": [shared]}
    del counter_set["spec"]["devices"]
    return [devices, counter_set]


def test_answers_kept_per_node_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes answer pods that ask the same as they answered the pod before, while what is
    taken of their pools stays: placements and devices are those of a search per node."""
    rng = random.Random(7)
    objects: list[dict[str, Any]] = [device_class()]
    for n in range(12):
        objects.append(node(f"n{n:02}"))
        devices = [device(f"d{i}", model=rng.choice(["a", "b"]), numa=i % 2) for i in range(4)]
        objects.append(node_slice(f"n{n:02}", *devices))
        objects += partitions(f"n{n:02}", rng.choice([2, 3]))
    model_b = {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "b"'}}
    objects += [
        template("one"),
        template("two-b", exactly(count=2, selectors=[model_b])),
        template(
            "pair", exactly("x"), exactly("y"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}]
        ),
    ]
    objects += [
        pod(f"p{i:02}", template_name=rng.choice(["one", "two-b", "pair"]), created=i % 60)
        for i in range(40)
    ]
    fresh = copy.deepcopy(objects)  # a run changes its pods (their claims are made)
    remembered = {p.name: (p.node, devices_of(p)) for p in placements(*objects).values()}
    monkeypatch.setattr(answers.NodeAnswers, "known", lambda *args: answers.MISS)
    searched = {p.name: (p.node, devices_of(p)) for p in placements(*fresh).values()}
    assert remembered == searched
    taken = [d for _, devices in remembered.values() for d in devices]
    assert len(taken) == len(set(taken)) > 40


def test_explanations_name_devices_per_request_and_what_a_node_could_not_satisfy() -> None:
    """The chosen node's devices, request by request; on a rejected node, the claim and the
    request its devices could not satisfy (here the second claim's second request)."""
    big = {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}
    found = placements(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice(
            "n1", device("a", model="a100"), device("b", model="h100"), device("c", model="x")
        ),
        node_slice("n2", device("a", model="a100"), device("b", model="a100")),
        template("one"),
        template("pair", exactly("any"), exactly("h100", selectors=[big])),
        pod(
            "p",
            template_name=None,
            resourceClaims=[
                {"name": "first", "resourceClaimTemplateName": "one"},
                {"name": "second", "resourceClaimTemplateName": "pair"},
            ],
        ),
    )
    placed = found["p"]
    assert placed.node == "n1"
    assert placed.explanation is not None
    said = placed.explanation.plugins["DynamicResources"]
    claims = [c["resourceClaimName"] for c in placed.resource_claims]
    assert [(d["claim"], d["request"], d["device"]) for d in said["allocated"]] == [
        (f"default/{claims[0]}", "gpu", "a"),
        (f"default/{claims[1]}", "any", "c"),
        (f"default/{claims[1]}", "h100", "b"),
    ]
    assert said["unsatisfied"] == [
        {"node": "n2", "claim": f"default/{claims[1]}", "request": "h100"}
    ]
    assert "unsatisfied: n2 " in annotation(placed.explanation)


def test_a_constraint_names_the_request_that_breaks_it() -> None:
    apart = template(
        "apart", exactly("x"), exactly("y"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}]
    )
    found = placements(
        node("n1"),
        device_class(),
        node_slice("n1", device("a", numa=0), device("b", numa=1)),
        apart,
        pod("p", template_name="apart"),
    )
    assert found["p"].explanation is not None
    (row,) = found["p"].explanation.plugins["DynamicResources"]["unsatisfied"]
    assert row["request"] == "y"  # x alone fits; with y the numa nodes differ


def test_a_pod_with_claims_is_nominated_before_its_claims_are_written() -> None:
    """PreBindPreFlight: PreBind has work for a pod with claims, so the scheduler says where
    the pod is going first (upstream's NominatedNodeNameForExpectation); not for others."""
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", device("gpu-0")),
        template(),
        pod("claims", created=1),
        pod("plain", template_name=None, created=2),
    )
    nominated: list[tuple[str, str]] = []
    run.expecting = lambda attempt: nominated.append((attempt.pod.name, attempt.node))  # type: ignore[method-assign]
    placed = {p.name: p.node for p in run.run()}
    assert placed == {"claims": "n1", "plain": "n1"}
    assert nominated == [("claims", "n1")]


def test_prioritized_lists_are_refused_with_the_gate_off() -> None:
    choices = {"name": "gpu", "firstAvailable": [{"name": "any", "deviceClassName": CLASS}]}
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", device("a")),
        template("choice", choices),
        pod("p", template_name="choice"),
        gates={"DRAPrioritizedList": False},
    )
    (placed,) = run.run()
    claim_name = run.claims.get_claim(
        "default", next(iter(run.claims.claims()))["metadata"]["name"]
    )
    assert placed.message == (
        f"0/1 nodes are available: resource claim default/{claim_name['metadata']['name']}, "
        "request gpu: has subrequests, but the DRAPrioritizedList feature is disabled. no new "
        "claims to deallocate, " + PREEMPTION_NOT_HELPFUL.format(n=1)
    )


def test_device_taints_are_ignored_with_the_gate_off() -> None:
    tainted = {**device("a"), "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
    objects = [node("n1"), device_class(), node_slice("n1", tainted), template(), pod("p")]
    assert placements(*copy.deepcopy(objects))["p"].node is None
    assert placements(*objects, gates={"DRADeviceTaints": False})["p"].node == "n1"


def test_extended_resources_are_the_nodes_alone_with_the_gate_off() -> None:
    objects = [
        node("n1"),
        device_class(extended="example.com/gpu"),
        node_slice("n1", device("a")),
        extended_pod("p"),
    ]
    off = placements(*copy.deepcopy(objects), gates={"DRAExtendedResource": False})["p"]
    assert off.message is not None
    assert off.message.startswith("0/1 nodes are available: 1 Insufficient example.com/gpu.")
    assert placements(*objects)["p"].node == "n1"


@pytest.mark.parametrize(
    ("gates", "args", "field", "error"),
    [
        (
            {"DRASchedulerFilterTimeout": False},
            {"filterTimeout": "5s"},
            "filterTimeout",
            "DRASchedulingFilterTimeout feature gate is disabled",
        ),
        (
            {"DRADeviceBindingConditions": False},
            {"bindingTimeout": "5s"},
            "bindingTimeout",
            "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
        ),
    ],
)
def test_args_of_a_feature_that_is_off_are_refused(
    gates: dict[str, bool], args: dict[str, Any], field: str, error: str
) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": args}]}],
    }
    with pytest.raises(ConfigError) as caught:
        load_configuration(config, feature_gates=feature_gates(gates, version="1.36"))
    assert caught.value.path == f"profiles[0].pluginConfig[0].args.{field}"
    assert caught.value.reason == f"not allowed: {error}"


def test_a_pod_waiting_for_its_template_claim_is_let_in_by_its_own_update_only() -> None:
    run = simulation(node("n1"), device_class(), node_slice("n1", device("a")), pod("p"))
    assert run.run() == []  # the template does not exist: no claim is made
    gated = run.backend.queue.gated("uid-p")
    assert gated is not None
    assert gated.message() == 'pod "default/p": ResourceClaim not created yet'
    run.claims.load(claim("unrelated", exactly()))
    assert run.backend.queue.gated("uid-p") is not None  # another claim does not help
    made = claim("p-gpu-abcde", exactly())
    made["metadata"]["ownerReferences"] = [{"uid": "uid-p", "controller": True, "name": "p"}]
    run.claims.load(made)
    assert run.backend.queue.gated("uid-p") is not None  # not named by the pod yet
    updated = copy.deepcopy(pod("p"))
    updated["status"] = {
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}]
    }
    run.backend.events.upsert("pods", updated)
    (placed,) = run.run()
    assert placed.node == "n1"


def test_pods_sharing_a_claim_write_their_reservations_one_at_a_time() -> None:
    """Five pods of one claim bind at once (the binding pool's threads): each reservation
    is written from the claim the previous write returned, so none conflicts, none reads
    the claim again, and every pod ends up in reservedFor."""
    allocated = {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
        }
    }
    run = simulation(
        node("n1"),
        device_class(),
        node_slice("n1", device("gpu-0")),
        claim("shared", exactly(), allocation=allocated),
        *(pod(f"p{i}", template_name=None, claim_name="shared") for i in range(5)),
    )
    plugin = run.frameworks["default-scheduler"].plugins["DynamicResources"]
    api = run.claims
    written, reads = api.update_claim_status, []

    def slow_write(claim_: Any) -> dict[str, Any]:
        time.sleep(0.02)  # the API server's round trip: others are binding meanwhile
        return written(claim_)

    api.update_claim_status = slow_write  # type: ignore[method-assign]
    api.get_claim = lambda *key: reads.append(key) or {}  # type: ignore[assignment,method-assign]
    shared = run.backend.dra.claims.get("default", "shared")
    assert shared is not None

    def bind(name: str) -> None:
        state = StateData(claims=ClaimStore([shared]), infos=[ClaimInfo()])
        binding.bind_claim(plugin, state, 0, pod_info(pod(name, claim_name="shared")), "n1")

    threads = [threading.Thread(target=bind, args=(f"p{i}",)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == []
    final = api._claims["default/shared"]
    assert sorted(r["name"] for r in final["status"]["reservedFor"]) == [f"p{i}" for i in range(5)]


# ----- a gang sharing one claim (the pod group's cycle state)

GANG_GATES = {"GenericWorkload": True, "GangScheduling": True}
GANG_WAITING = (
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
    "one or more plugins asked to wait and no plugin rejected pod"
)


def gang_group(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def gang_member(name: str, created: int, claim_name: str = "channel") -> dict[str, Any]:
    """A member of group "g" sharing the claim, needing 5 of a node's 8 CPUs: one a node."""
    return pod(
        name,
        template_name=None,
        claim_name=claim_name,
        created=created,
        requests={"cpu": "5"},
        schedulingGroup={"podGroupName": "g"},
    )


def interconnect_slice(*nodes: str) -> dict[str, Any]:
    """One channel device of a fabric the named nodes reach (a slice for several nodes)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "fabric", "resourceVersion": "1"},
        "spec": {
            "driver": DRIVER,
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "kubernetes.io/hostname",
                                "operator": "In",
                                "values": list(nodes),
                            }
                        ]
                    }
                ]
            },
            "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
            "devices": [device("channel-0")],
        },
    }


def test_a_gang_shares_the_allocation_of_one_claim_its_first_member_reserved() -> None:
    """The second and third members find the claim's allocation the first one reserved in
    the group's cycle and share it: the gang is placed whole (one member per node), the
    claim allocated once and reserved for every member, nothing left in flight."""
    run = simulation(
        node("n1"),
        node("n2"),
        node("n3"),
        device_class(),
        interconnect_slice("n1", "n2", "n3"),
        claim("channel", exactly()),
        gang_group("g", 3),
        *(gang_member(f"w{i}", i) for i in range(3)),
        gates=GANG_GATES,
    )
    found = {p.name: p for p in run.run()}
    assert sorted(str(found[f"w{i}"].node) for i in range(3)) == ["n1", "n2", "n3"]
    written = run.claims.get_claim("default", "channel")
    assert written["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": "fabric", "device": "channel-0"}
    ]
    assert sorted(r["name"] for r in written["status"]["reservedFor"]) == ["w0", "w1", "w2"]
    assert run.backend.dra.claims.uids_in_flight() == set()


def test_a_gang_whose_shared_claim_cannot_be_allocated_takes_no_node() -> None:
    """No device for the claim: no member is placed and every one says why, as upstream."""
    run = simulation(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n1", device("gpu-0")),
        claim("channel", exactly(count=2)),
        gang_group("g", 2),
        *(gang_member(f"w{i}", i) for i in range(2)),
        gates=GANG_GATES,
    )
    found = {p.name: p for p in run.run()}
    assert {p.node for p in found.values()} == {None}
    assert {p.message for p in found.values()} == {not_available(2, "2 cannot allocate all claims")}
    assert rc_status(run, "channel") == {}
    assert run.backend.dra.claims.uids_in_flight() == set()


def test_a_gang_that_does_not_fit_releases_the_allocation_its_members_shared() -> None:
    """Two members share the claim's allocation, the third finds no node: the group's cycle
    unreserves all three, so the allocation is no longer in flight and the claim stays
    unallocated; the members wait as one, as upstream's do."""
    run = simulation(
        node("n1"),
        node("n2"),
        device_class(),
        interconnect_slice("n1", "n2"),
        claim("channel", exactly()),
        gang_group("g", 3),
        *(gang_member(f"w{i}", i) for i in range(3)),
        gates=GANG_GATES,
    )
    found = {p.name: p for p in run.run()}
    assert {p.node for p in found.values()} == {None}
    assert sorted(str(p.message) for p in found.values()) == sorted(
        [GANG_WAITING, GANG_WAITING, NO_CPU_2]
    )
    assert rc_status(run, "channel") == {}
    assert run.backend.dra.claims.uids_in_flight() == set()


def test_a_member_with_a_claim_of_its_own_besides_the_shared_one_gets_each_its_allocation() -> None:
    """Each member names the shared channel first and a GPU claim of its own second: the
    second member's Reserve keeps the channel's shared allocation for the channel and gives
    the GPU its new one (Filter lists new allocations first, shared ones last)."""
    fabric = "fabric.example.com"
    channel = claim("channel", exactly(cls=fabric))
    members = []
    for i in range(2):
        made = gang_member(f"w{i}", i)
        made["spec"]["resourceClaims"] = [
            {"name": "channel", "resourceClaimName": "channel"},
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
        ]
        members.append(made)
    fabric_slice = interconnect_slice("n1", "n2")
    fabric_slice["spec"]["driver"] = fabric
    run = simulation(
        node("n1"),
        node("n2"),
        device_class(),
        device_class(fabric, f'device.driver == "{fabric}"'),
        node_slice("n1", device("gpu-0")),
        node_slice("n2", device("gpu-0")),
        fabric_slice,
        template(),
        channel,
        gang_group("g", 2),
        *members,
        gates=GANG_GATES,
    )
    found = {p.name: p for p in run.run()}
    assert sorted(str(found[f"w{i}"].node) for i in range(2)) == ["n1", "n2"]
    for placed in found.values():
        assert devices_of(placed) == [
            (fabric, "fabric", "channel-0"),
            (DRIVER, placed.node, "gpu-0"),
        ]
    written = run.claims.get_claim("default", "channel")
    assert sorted(r["name"] for r in written["status"]["reservedFor"]) == ["w0", "w1"]


def test_a_member_sharing_an_allocation_is_kept_where_its_devices_are_reachable() -> None:
    """The channel is on n1 alone and two members do not fit on one node: the second may
    not share the allocation from n2, where the channel is out of reach (upstream's Filter
    lets it), so the gang does not fit, the claim is left as it was and nothing is
    deallocated."""
    run = simulation(
        node("n1"),
        node("n2"),
        device_class(),
        node_slice("n1", device("channel-0")),
        claim("channel", exactly()),
        gang_group("g", 2),
        *(gang_member(f"w{i}", i) for i in range(2)),
        gates=GANG_GATES,
    )
    found = {p.name: p for p in run.run()}
    assert {p.node for p in found.values()} == {None}
    assert sorted(str(p.message) for p in found.values()) == [
        "0/2 nodes are available: 1 Insufficient cpu, 1 resourceclaim not available on the "
        "node. still not schedulable, preemption: 0/2 nodes are available: 1 No preemption "
        "victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
        GANG_WAITING,
    ]
    assert rc_status(run, "channel") == {}
    assert run.backend.dra.claims.uids_in_flight() == set()


NO_CPU_2 = (  # a pod with claims: DynamicResources' PostFilter has nothing to deallocate
    "0/2 nodes are available: 2 Insufficient cpu. still not schedulable, preemption: "
    "0/2 nodes are available: 2 No preemption victims found for incoming pod."
)


def rc_status(run: Any, name: str) -> dict[str, Any]:
    return dict(run.claims.get_claim("default", name).get("status") or {})


def test_a_search_past_the_filter_timeout_is_the_pods_error_with_upstreams_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline passes while a selector is evaluated (a clock that jumps an hour then)
    and no device matches: the search stops at the next device rather than going through
    them all, and the pod gets upstream's timeout status."""
    evaluate = allocator._Attempt._evaluate
    clock = [time.monotonic()]

    def slow(self: Any, *args: Any) -> Any:
        clock[0] += 3600
        return evaluate(self, *args)

    monkeypatch.setattr(allocator._Attempt, "_evaluate", slow)
    monkeypatch.setattr(allocator, "time", type("Clock", (), {"monotonic": lambda: clock[0]}))
    found = placements(
        node("n1"),
        device_class(expression='device.driver == "other.example.com"'),
        node_slice("n1", device("a"), device("b")),
        template(),
        pod("p"),
    )
    assert found["p"].node is None
    assert found["p"].message == (
        'running "DynamicResources" filter plugin: node n1: timed out trying to allocate devices'
    )


def taint_rule(name: str, *, device_name: str | None = None, effect: str = "NoSchedule") -> Any:
    selector: dict[str, Any] = {"driver": DRIVER, "pool": "n1"}
    if device_name is not None:
        selector["device"] = device_name
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": "k", "value": name, "effect": effect},
        },
    }


def placed_at(minor: str, *objects: dict[str, Any]) -> dict[str, Placement]:
    loaded = load_configuration(CONFIG, feature_gates=feature_gates({}, version=minor))
    run = Simulation(loaded, seed=1)
    run.load(copy.deepcopy(list(objects)))
    return {p.name: p for p in run.run()}


def test_device_taint_rules_taint_the_devices_they_select_from_1_37() -> None:
    """DRADeviceTaintRules (GA in 1.37): a rule's taint is the selected devices' own, against
    the claim's tolerations; at 1.36 (the gate off) the rules change nothing."""
    objects = [
        node("n1"),
        device_class(),
        node_slice("n1", device("a"), device("b")),
        taint_rule("only-a", device_name="a"),
        template(),
        template("tolerant", exactly(tolerations=[{"key": "k", "operator": "Exists"}])),
        pod("first", created=1),
        pod("second", created=2),
        pod("third", template_name="tolerant", created=3),
    ]
    at_1_37 = placed_at("1.37", *objects)
    assert at_1_37["first"].node == "n1"
    assert devices_of(at_1_37["first"]) == [(DRIVER, "n1", "b")]
    assert at_1_37["second"].node is None  # b is taken; a is tainted
    assert at_1_37["third"].node == "n1"
    assert devices_of(at_1_37["third"]) == [(DRIVER, "n1", "a")]
    at_1_36 = placed_at("1.36", *objects)
    assert devices_of(at_1_36["first"]) == [(DRIVER, "n1", "a")]
    assert at_1_36["second"].node == "n1"
    assert at_1_36["third"].node is None
    # A NoExecute taint keeps pods off too; effect None does not.
    for effect, node_name in (("NoExecute", None), ("None", "n1")):
        rule = taint_rule("all", effect=effect)
        placed = placed_at(
            "1.37",
            node("n1"),
            device_class(),
            node_slice("n1", device("a")),
            rule,
            template(),
            pod("p"),
        )
        assert placed["p"].node == node_name, effect


def test_rules_change_the_slices_the_scheduler_sees() -> None:
    """The tracker: each rule change is a ResourceSlice update for the slices whose taints it
    changes, the slices carrying the rules' taints; ignored with the gate off."""
    seen: list[tuple[Any, Any, Any]] = []
    state = DRAState(
        lambda event, old, new: seen.append((event, old, new)), device_taint_rules=True
    )
    state.upsert("ResourceSlice", node_slice("n1", device("a"), device("b")))
    other = node_slice("n2", device("c"), name="other")
    state.upsert("ResourceSlice", other)
    seen.clear()
    state.upsert("DeviceTaintRule", taint_rule("r", device_name="b"))
    assert len(seen) == 1  # n2's pool is not selected
    event, old, new = seen[0]
    assert event.resource == "resource.k8s.io/ResourceSlice"
    assert [d.get("taints") for d in new["spec"]["devices"]] == [
        None,
        [{"key": "k", "value": "r", "effect": "NoSchedule"}],
    ]
    assert [d.get("taints") for d in old["spec"]["devices"]] == [None, None]
    _, slices = state.slices()
    assert [d.get("taints") for s in slices for d in s["spec"]["devices"]] == [
        None,
        [{"key": "k", "value": "r", "effect": "NoSchedule"}],
        None,
    ]
    state.delete("DeviceTaintRule", taint_rule("r", device_name="b"))
    _, slices = state.slices()
    assert all(d.get("taints") is None for s in slices for d in s["spec"]["devices"])
    off = DRAState(lambda *_: None)
    off.upsert("ResourceSlice", node_slice("n1", device("a")))
    off.upsert("DeviceTaintRule", taint_rule("r"))
    assert off.slices()[1][0]["spec"]["devices"][0].get("taints") is None
    assert off.sizes()["device_taint_rules"] == 0


@pytest.mark.parametrize(("version", "lists"), [("1.36", False), ("1.37", True)])
def test_selectors_see_list_attributes_whatever_the_gate_from_1_37(
    version: str, lists: bool
) -> None:
    """1.37's stored-expressions CEL environment declares list-valued attributes (dyn) with
    DRAListTypeAttributes off; 1.36's follows the gate."""
    features = allocator_features(feature_gates({}, version=version).features).cel
    assert not features.list_type_attributes
    assert features.stored_list_types is lists
    assert features.lists is lists
