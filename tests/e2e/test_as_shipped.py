"""What a platform team installs, running as shipped: the image built from the Dockerfile, the
manifests applied with kubectl, the operator and the schedulers it deploys as real pods on a
real node, binding workload pods to kwok nodes. Nothing here passes unless the image starts,
the probes pass and the pods reach the API server."""

from __future__ import annotations

import datetime
import json
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
import yaml
from cluster import Cluster, wait_for
from operator_support import condition, get_json
from real_node_support import KWOK_TOLERATION, OPERATOR_NAMESPACE, running_on, scheduler_pods

from benchmarks.processes import free_port, stop_process

pytestmark = pytest.mark.timeout(900)

SCHEDULERS_NAMESPACE = "schedulers"


def leader_election(cluster: Cluster, profile: str) -> dict[str, Any]:
    """The leaderElection section of the configuration the operator rendered."""
    config_map = get_json(cluster, "configmap", f"{profile}-config", "-n", SCHEDULERS_NAMESPACE)
    assert config_map is not None
    election: dict[str, Any] = yaml.safe_load(config_map["data"]["config.yaml"])["leaderElection"]
    return election


def lease_holder(cluster: Cluster, profile: str) -> str:
    election = leader_election(cluster, profile)
    lease = get_json(
        cluster, "lease", election["resourceName"], "-n", election["resourceNamespace"]
    )
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


def leading_pod(cluster: Cluster, profile: str) -> str | None:
    """The scheduler pod holding the Lease (client-go's identity: `<pod name>_<uuid>`)."""
    holder = lease_holder(cluster, profile)
    names = {p["metadata"]["name"] for p in scheduler_pods(cluster, profile, SCHEDULERS_NAMESPACE)}
    return next((name for name in names if holder.startswith(f"{name}_")), None)


def wait_ready(cluster: Cluster, profile: str, timeout: float = 180) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        current = get_json(cluster, "schedulerprofile", profile)
        ready = condition(current, "Ready")
        generation = (current or {}).get("metadata", {}).get("generation")
        fresh = ready.get("observedGeneration") == generation
        return current if fresh and ready.get("status") == "True" else None

    return dict(wait_for(f"SchedulerProfile {profile} Ready=True", probe, timeout=timeout))


def workload_pod(name: str, scheduler: str, cpu: str = "100m") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "workload"}},
        "spec": {
            "schedulerName": scheduler,
            "tolerations": [KWOK_TOLERATION],
            "containers": [
                {"name": "app", "image": "workload:1", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


def create_pods(cluster: Cluster, namespace: str, pods: list[dict[str, Any]]) -> list[str]:
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(pods))
    return [p["metadata"]["name"] for p in pods]


def bound_nodes(cluster: Cluster, namespace: str, names: list[str]) -> dict[str, str]:
    found = get_json(cluster, "pods", "-n", namespace, "-l", "app=workload") or {}
    nodes = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in found.get("items", [])}
    return {name: nodes[name] for name in names if nodes.get(name)}


def wait_bound(cluster: Cluster, namespace: str, names: list[str]) -> dict[str, str]:
    return dict(
        wait_for(
            f"pods {names} to be bound",
            lambda: (b := bound_nodes(cluster, namespace, names)) and len(b) == len(names) and b,
            timeout=120,
        )
    )


def scheduled_events(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    found = get_json(
        cluster, "events.v1.events.k8s.io", "-n", namespace, "--field-selector", "reason=Scheduled"
    )
    return list((found or {}).get("items") or [])


def test_the_operator_runs_as_a_real_pod_under_restricted_pod_security(
    installed: Cluster, real_node: str
) -> None:
    namespace = get_json(installed, "namespace", OPERATOR_NAMESPACE)
    assert namespace is not None
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    # The level is enforced for real: a pod asking for root is refused in that namespace.
    refused = installed.kubectl(
        "run", "root", "-n", OPERATOR_NAMESPACE, "--image=x", "--dry-run=server",
        "--overrides", json.dumps({"spec": {"securityContext": {"runAsUser": 0}}}),
        check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "violates PodSecurity" in refused.stderr

    selector = "app.kubernetes.io/name=scheduler-operator"
    pods = get_json(installed, "pods", "-n", OPERATOR_NAMESPACE, "-l", selector)
    assert pods is not None
    # The pod of before the fixture's restart may still be terminating.
    [pod] = [p for p in pods["items"] if not p["metadata"].get("deletionTimestamp")]
    assert running_on(pod, real_node), pod["status"]
    assert pod["spec"]["serviceAccountName"] == "scheduler-operator"
    # kwok never manages the real node: its kubelet reports a real runtime.
    node = get_json(installed, "node", real_node)
    assert node is not None
    assert "kwok.x-k8s.io/node" not in (node["metadata"].get("annotations") or {})
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
def test_a_scheduler_pod_leads_and_binds_workload_pods_to_kwok_nodes(
    installed: Cluster,
    real_node: str,
    profiles: Any,
    kwok_nodes: Any,
    workload_namespace: str,
    engine: str,
) -> None:
    nodes = kwok_nodes(2)
    name = profiles(f"e2e-{engine.lower()}-{uuid.uuid4().hex[:4]}", engine=engine)
    status = wait_ready(installed, name)["status"]

    [pod] = scheduler_pods(installed, name, SCHEDULERS_NAMESPACE)
    assert running_on(pod, real_node), pod["status"]
    assert wait_for("the scheduler pod to hold its Lease", lambda: leading_pod(installed, name))
    assert leading_pod(installed, name) == pod["metadata"]["name"]
    assert status["readyReplicas"] == 1
    # Having reconciled it, the operator has made every kind of request it makes at start and
    # for a profile: its RBAC covered them all (a refused namespace listing cost a minute).
    operator_log = installed.kubectl(
        "logs", "-n", OPERATOR_NAMESPACE, "deployment/scheduler-operator"
    ).stdout
    assert "Forbidden" not in operator_log, operator_log[-3000:]

    created = create_pods(
        installed, workload_namespace, [workload_pod(f"w{i}", name) for i in range(4)]
    )
    placed = wait_bound(installed, workload_namespace, created)
    assert set(placed.values()) <= set(nodes)
    events = wait_for(
        "a Scheduled event per pod",
        lambda: len(e := scheduled_events(installed, workload_namespace)) == 4 and e,
    )
    assert {e["reportingController"] for e in events} == {name}
    assert sorted(e["regarding"]["name"] for e in events) == sorted(created)
    for event in events:
        pod_name = event["regarding"]["name"]
        expected = f"Successfully assigned {workload_namespace}/{pod_name} to {placed[pod_name]}"
        assert event["note"] == expected


def test_an_accelerator_pod_gets_its_device_from_the_shipped_scheduler(
    installed: Cluster,
    profiles: Any,
    kwok_nodes: Any,
    workload_namespace: str,
) -> None:
    """Dynamic Resource Allocation as shipped: a DeviceClass, a ResourceSlice a driver would
    publish for a kwok node, a ResourceClaimTemplate; the resourceclaim controller makes the
    pod's claim, the scheduler pod (under the RBAC the operator binds) allocates a device and
    reserves it for the pod, then binds the pod to that node."""
    [node, _] = kwok_nodes(2)
    name = profiles(f"e2e-dra-{uuid.uuid4().hex[:4]}", engine="PythonRuntime")
    wait_ready(installed, name)
    driver = f"{name}.example.com"
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": driver},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }
    resource_slice = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}],
        },
    }
    claim_template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": workload_namespace},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": driver}}]}
            }
        },
    }
    pod = workload_pod("accelerated", name)
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    objects = [device_class, resource_slice, claim_template]
    installed.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    try:
        created = create_pods(installed, workload_namespace, [pod])
        assert wait_bound(installed, workload_namespace, created) == {"accelerated": node}
        claims = get_json(installed, "resourceclaims", "-n", workload_namespace) or {}
        [claim] = claims["items"]
        [result] = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (driver, node, "gpu-0")
        assert [r["name"] for r in claim["status"]["reservedFor"]] == ["accelerated"]
    finally:
        installed.kubectl(
            "delete", "-f", "-", "--ignore-not-found", input=yaml.safe_dump_all(objects[:2])
        )


def test_an_image_that_cannot_start_is_reported_not_ready_with_the_reason(
    installed: Cluster, profiles: Any
) -> None:
    image = "localhost/no-such-scheduler:0"
    name = profiles(f"e2e-badimage-{uuid.uuid4().hex[:4]}", image=image)

    def reported() -> dict[str, Any] | None:
        ready = condition(get_json(installed, "schedulerprofile", name), "Ready")
        pulling = ready.get("reason") in ("ErrImagePull", "ImagePullBackOff")
        return ready if pulling and ready.get("status") == "False" else None

    ready = wait_for(f"{name} to report the image pull failure", reported, timeout=120)
    assert image in ready["message"]
    row = installed.kubectl("get", "schedulerprofile", name, "-o", "wide").stdout
    assert "False" in row
    assert ready["reason"] in row


def test_a_configuration_change_rolls_the_pods_and_takes_effect(
    installed: Cluster, profiles: Any, kwok_nodes: Any, workload_namespace: str
) -> None:
    # Only NodeResourcesFit scores, so the strategy alone decides between two nodes.
    def spec(strategy: str) -> dict[str, Any]:
        return {
            "profiles": [
                {
                    "plugins": {"score": {"disabled": [{"name": "*"}],
                                          "enabled": [{"name": "NodeResourcesFit"}]}},
                    "pluginConfig": [
                        {"name": "NodeResourcesFit",
                         "args": {"scoringStrategy": {"type": strategy}}}
                    ],
                }
            ]
        }  # fmt: skip

    busy, idle = kwok_nodes(2, cpu="8")
    name = profiles(f"e2e-roll-{uuid.uuid4().hex[:4]}", **spec("LeastAllocated"))
    wait_ready(installed, name)
    [first_pod] = scheduler_pods(installed, name, SCHEDULERS_NAMESPACE)
    filler = workload_pod("filler", name, cpu="4")
    filler["spec"]["nodeName"] = busy  # bound directly: a node with half its CPU in use
    create_pods(installed, workload_namespace, [filler])
    create_pods(installed, workload_namespace, [workload_pod("spread", name)])
    assert wait_bound(installed, workload_namespace, ["spread"]) == {"spread": idle}

    hash_before = get_json(installed, "schedulerprofile", name)["status"]["configHash"]  # type: ignore[index]
    profiles(name, **spec("MostAllocated"))
    status = wait_ready(installed, name)["status"]
    assert status["configHash"] != hash_before
    [second_pod] = wait_for(
        "the old scheduler pod to be replaced",
        lambda: (
            [
                p
                for p in scheduler_pods(installed, name, SCHEDULERS_NAMESPACE)
                if p["metadata"]["name"] != first_pod["metadata"]["name"]
            ]
            or None
        ),
    )
    assert second_pod["metadata"]["annotations"] != first_pod["metadata"]["annotations"]
    wait_for("the new pod to lead", lambda: leading_pod(installed, name))
    create_pods(installed, workload_namespace, [workload_pod("pack", name)])
    assert wait_bound(installed, workload_namespace, ["pack"]) == {"pack": busy}


def test_deleting_the_leader_hands_over_without_losing_or_doubling_a_pod(
    installed: Cluster, profiles: Any, kwok_nodes: Any, workload_namespace: str
) -> None:
    kwok_nodes(3)
    name = profiles(f"e2e-ha-{uuid.uuid4().hex[:4]}", replicas=2)
    wait_ready(installed, name)
    leader = wait_for("a leader", lambda: leading_pod(installed, name))
    duration = leader_election(installed, name)["leaseDuration"]

    before = create_pods(
        installed, workload_namespace, [workload_pod(f"a{i}", name) for i in range(5)]
    )
    wait_bound(installed, workload_namespace, before)
    deleted_at = time.monotonic()
    installed.kubectl("delete", "pod", leader, "-n", SCHEDULERS_NAMESPACE, "--wait=false")
    during = create_pods(
        installed, workload_namespace, [workload_pod(f"b{i}", name) for i in range(5)]
    )
    successor = wait_for(
        "another pod to take the Lease",
        lambda: (p := leading_pod(installed, name)) not in (None, leader) and p,
        timeout=60,
    )
    handover = time.monotonic() - deleted_at
    assert handover < float(duration.rstrip("s")), f"hand-over took {handover:.1f}s"
    assert successor != leader
    after = create_pods(
        installed, workload_namespace, [workload_pod(f"c{i}", name) for i in range(5)]
    )
    everyone = before + during + after
    wait_bound(installed, workload_namespace, everyone)
    events = wait_for(
        "a Scheduled event per pod",
        lambda: len(e := scheduled_events(installed, workload_namespace)) >= len(everyone) and e,
    )
    bound = sorted(e["regarding"]["name"] for e in events)
    assert bound == sorted(everyone), "a pod was bound twice or not at all"


def test_deleting_the_profile_removes_every_child_and_stops_the_pods(
    installed: Cluster, profiles: Any
) -> None:
    name = profiles(f"e2e-gone-{uuid.uuid4().hex[:4]}")
    wait_ready(installed, name)
    selector = f"app.kubernetes.io/instance={name}"
    kinds = "serviceaccounts,configmaps,deployments,roles,rolebindings,networkpolicies"

    def children() -> list[str]:
        namespaced = get_json(installed, kinds, "-A", "-l", selector) or {}
        cluster_wide = get_json(installed, "clusterrolebindings", "-l", selector) or {}
        return [
            f"{o['kind']}/{o['metadata']['name']}"
            for o in namespaced.get("items", []) + cluster_wide.get("items", [])
        ]

    assert len(children()) >= 8
    assert scheduler_pods(installed, name, SCHEDULERS_NAMESPACE)
    installed.kubectl("delete", "schedulerprofile", name, "--wait=true")
    wait_for("every child to be gone", lambda: not children(), timeout=90)
    wait_for(
        "the scheduler pods to stop",
        lambda: (
            not (get_json(installed, "pods", "-n", SCHEDULERS_NAMESPACE, "-l", selector) or {}).get(
                "items"
            )
        ),
        timeout=90,
    )


def test_ready_waits_until_a_scheduler_pod_leads(
    installed: Cluster, profiles: Any, workload_namespace: str
) -> None:
    """A Lease someone else holds keeps every scheduler pod following: the pods are ready, the
    SchedulerProfile is not, until one of them leads."""
    name = f"e2e-lead-{uuid.uuid4().hex[:4]}"
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": f"schedulerprofile.{name}", "namespace": SCHEDULERS_NAMESPACE},
        "spec": {
            "holderIdentity": "someone-else_1",
            "leaseDurationSeconds": 3600,
            "renewTime": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        },
    }
    installed.kubectl("apply", "-f", "-", input=json.dumps(lease))
    profiles(name)

    def following() -> dict[str, Any] | None:
        ready = condition(get_json(installed, "schedulerprofile", name), "Ready")
        return ready if ready.get("reason") == "NotLeading" else None

    ready = wait_for("the pods ready but not leading", following, timeout=180)
    assert ready["status"] == "False"
    assert "held by someone-else_1" in ready["message"]
    [pod] = scheduler_pods(installed, name, SCHEDULERS_NAMESPACE)
    assert any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"]["conditions"])

    installed.kubectl("delete", "lease", f"schedulerprofile.{name}", "-n", SCHEDULERS_NAMESPACE)
    status = wait_ready(installed, name)["status"]
    assert status["leader"].startswith(f"{pod['metadata']['name']}_")


def https_get(port: int, path: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # the scheduler's self-signed serving certificate
    try:
        with urllib.request.urlopen(request, context=insecure, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, OSError):
        return 0, b""  # nothing answers yet


def test_the_scheduler_pod_serves_metrics_to_authorized_callers_only(
    installed: Cluster, profiles: Any, workload_namespace: str, tmp_path: Any
) -> None:
    name = profiles(f"e2e-serve-{uuid.uuid4().hex[:4]}")
    wait_ready(installed, name)
    [pod] = scheduler_pods(installed, name, SCHEDULERS_NAMESPACE)
    log = installed.kubectl("logs", "-n", SCHEDULERS_NAMESPACE, pod["metadata"]["name"]).stdout
    assert "serving on https://" in log
    assert "cannot read the client CA" not in log
    policy = get_json(installed, "networkpolicy", name, "-n", SCHEDULERS_NAMESPACE)
    assert policy is not None
    assert policy["metadata"]["ownerReferences"][0]["name"] == name

    for account in ("scraper", "nobody"):
        installed.kubectl("create", "serviceaccount", account, "-n", workload_namespace)
    installed.kubectl(
        "create", "clusterrole", f"{workload_namespace}-metrics", "--verb=get",
        "--non-resource-url=/metrics",
    )  # fmt: skip
    installed.kubectl(
        "create", "clusterrolebinding", f"{workload_namespace}-metrics",
        f"--clusterrole={workload_namespace}-metrics",
        f"--serviceaccount={workload_namespace}:scraper",
    )  # fmt: skip
    token = {
        account: installed.kubectl(
            "create", "token", account, "-n", workload_namespace
        ).stdout.strip()
        for account in ("scraper", "nobody")
    }
    port = free_port()
    forward = subprocess.Popen(
        [str(installed.bin_dir / "kubectl"), "--kubeconfig", str(installed.kubeconfig),
         "port-forward", "-n", SCHEDULERS_NAMESPACE, f"pod/{pod['metadata']['name']}",
         f"{port}:10259"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for("the port-forward", lambda: https_get(port, "/healthz")[0] == 200, timeout=30)
        assert https_get(port, "/metrics")[0] == 401
        assert https_get(port, "/metrics", token["nobody"])[0] == 403
        status, body = https_get(port, "/metrics", token["scraper"])
        assert status == 200
        assert b"scheduler_schedule_attempts_total" in body
    finally:
        stop_process(forward)
        installed.kubectl(
            "delete", "clusterrolebinding,clusterrole", f"{workload_namespace}-metrics"
        )
