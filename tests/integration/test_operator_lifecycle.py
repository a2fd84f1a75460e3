"""A SchedulerProfile over its life: changes, drift, conflicts, bad input, leadership."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from cluster import Cluster, kwok_node, wait_for
from lease_player import REAL_LEASES
from operator_support import (
    condition,
    get_json,
    healthz,
    operand_namespace,
    profile_body,
    start_kube_scheduler,
    wait_condition,
)
from scheduler_operator.engines import validate
from scheduler_operator.parsing import parse
from scheduler_operator.render import HASH_ANNOTATION, render
from timing import settle

from benchmarks.processes import stop_process
from benchmarks.tools import kubernetes_minor
from scheduler_runtime.config.features import RELEASE, VERSIONS, version_key

Apply = Callable[[dict[str, Any]], str]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def replica_sets(cluster: Cluster, name: str, namespace: str) -> list[dict[str, Any]]:
    shown = cluster.kubectl(
        "get", "rs", "-n", namespace, "-l", f"app.kubernetes.io/instance={name}", "-o", "json"
    ).stdout
    items: list[dict[str, Any]] = json.loads(shown)["items"]
    return items


def deployment(cluster: Cluster, name: str, namespace: str) -> dict[str, Any]:
    found = get_json(cluster, "deployment", name, "-n", namespace)
    assert found is not None, f"deployment {namespace}/{name} is missing"
    return found


def config_text(cluster: Cluster, name: str, namespace: str) -> str:
    found = get_json(cluster, "configmap", f"{name}-config", "-n", namespace)
    assert found is not None
    return str(found["data"]["config.yaml"])


def test_a_configuration_change_rolls_the_pods_once_and_nothing_else_does(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("roll")))
    name = apply_profile(profile_body(unique("roll"), namespace=namespace, replicas=2))
    wait_condition(cluster, name, "Ready", "True")
    before = deployment(cluster, name, namespace)
    assert len(replica_sets(cluster, name, namespace)) == 1

    # Scaling (leader election stays on) and labelling the profile change no configuration.
    scaled = profile_body(name, namespace=namespace, replicas=3)
    scaled["metadata"]["labels"] = {"team": "a"}
    apply_profile(scaled)
    wait_condition(cluster, name, "Ready", "True")
    assert deployment(cluster, name, namespace)["spec"]["replicas"] == 3
    assert len(replica_sets(cluster, name, namespace)) == 1

    changed = {"profiles": [{"percentageOfNodesToScore": 30}]}
    apply_profile(profile_body(name, namespace=namespace, replicas=3, **changed))
    ready = wait_condition(cluster, name, "Ready", "True")
    assert "percentageOfNodesToScore: 30" in config_text(cluster, name, namespace)
    after = deployment(cluster, name, namespace)
    new_hash = after["spec"]["template"]["metadata"]["annotations"][HASH_ANNOTATION]
    assert new_hash != before["spec"]["template"]["metadata"]["annotations"][HASH_ANNOTATION]
    assert new_hash == ready["status"]["configHash"]
    settle(3)
    assert len(replica_sets(cluster, name, namespace)) == 2
    settled = deployment(cluster, name, namespace)["metadata"]
    assert settled["generation"] == after["metadata"]["generation"]
    # The operator does not keep rewriting what it already applied.
    settle(3)
    assert (
        deployment(cluster, name, namespace)["metadata"]["resourceVersion"]
        == (settled["resourceVersion"])
    )


def test_children_edited_or_deleted_by_hand_are_restored(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("drift")))
    name = apply_profile(profile_body(unique("drift"), namespace=namespace))
    wait_condition(cluster, name, "Ready", "True")
    original = config_text(cluster, name, namespace)

    cluster.kubectl("delete", "configmap", f"{name}-config", "-n", namespace)
    cluster.kubectl("delete", "clusterrolebinding", f"schedulerprofile:{name}:kube-scheduler")
    cluster.kubectl("delete", "serviceaccount", name, "-n", namespace)
    cluster.kubectl(
        "patch", "configmap", f"{name}-config", "-n", namespace, "--type=merge",
        "-p", json.dumps({"data": {"config.yaml": "tampered"}}), check=False,
    )  # fmt: skip
    cluster.kubectl("scale", "deployment", name, "-n", namespace, "--replicas=3")
    wait_for(
        "the deleted and edited children to be restored",
        lambda: (
            get_json(cluster, "clusterrolebinding", f"schedulerprofile:{name}:kube-scheduler")
            and get_json(cluster, "serviceaccount", name, "-n", namespace)
            and get_json(cluster, "configmap", f"{name}-config", "-n", namespace)
            and config_text(cluster, name, namespace) == original
            and deployment(cluster, name, namespace)["spec"]["replicas"] == 1
        ),
        timeout=20,
    )


def test_a_duplicate_scheduler_name_is_refused_until_the_first_claim_goes(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("dup")))
    shared = unique("shared")
    first = apply_profile(profile_body(unique("first"), namespace=namespace, schedulerName=shared))
    wait_condition(cluster, first, "Ready", "True")
    second = apply_profile(
        profile_body(unique("second"), namespace=namespace, schedulerName=shared)
    )
    refused = condition(wait_condition(cluster, second, "ConfigValid", "False"), "ConfigValid")
    assert refused["reason"] == "SchedulerNameConflict"
    assert refused["message"] == (
        f"schedulerName {shared!r} is already served by SchedulerProfile {first!r}"
    )
    assert condition(get_json(cluster, "schedulerprofile", second), "Ready")["status"] == "False"
    assert get_json(cluster, "deployment", second, "-n", namespace) is None
    assert (
        get_json(cluster, "clusterrolebinding", f"schedulerprofile:{second}:kube-scheduler") is None
    )

    cluster.kubectl("delete", "schedulerprofile", first, "--wait=true")
    wait_condition(cluster, second, "Ready", "True")
    assert get_json(cluster, "deployment", second, "-n", namespace) is not None


def test_the_default_scheduler_name_is_refused(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    name = apply_profile(
        profile_body(unique("default"), namespace=namespace, schedulerName="default-scheduler")
    )
    refused = condition(wait_condition(cluster, name, "ConfigValid", "False"), "ConfigValid")
    assert refused["reason"] == "SchedulerNameConflict"
    assert "belongs to the cluster's default scheduler" in refused["message"]
    assert get_json(cluster, "serviceaccount", name, "-n", namespace) is None


def test_bad_input_is_reported_and_the_last_good_deployment_keeps_running(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("bad")))
    good = profile_body(unique("bad"), namespace=namespace, engine="KubeScheduler")
    name = apply_profile(good)
    wait_condition(cluster, name, "Ready", "True")
    last_good = deployment(cluster, name, namespace)
    last_config = config_text(cluster, name, namespace)

    bad_args = {"name": "NodeResourcesFit", "args": {"scoringStrategy": "MostAllocated"}}
    apply_profile({**good, "spec": {**good["spec"], "profiles": [{"pluginConfig": [bad_args]}]}})
    invalid = condition(wait_condition(cluster, name, "ConfigValid", "False"), "ConfigValid")
    assert invalid["reason"] == "InvalidSpec"
    assert (
        invalid["message"]
        == "spec.profiles[0].pluginConfig[0].args.scoringStrategy: must be an object"
    )
    reported = get_json(cluster, "schedulerprofile", name)
    ready = condition(reported, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert condition(reported, "Available")["status"] == "True"  # the last good one still runs

    settle(3)
    still = deployment(cluster, name, namespace)
    assert still["metadata"]["generation"] == last_good["metadata"]["generation"]
    assert still["status"].get("readyReplicas") == 1
    assert config_text(cluster, name, namespace) == last_config
    # `kubectl describe` tells why, as for built-in kinds.
    described = wait_for(
        "the InvalidSpec event",
        lambda: (
            "Warning  InvalidSpec"
            in (d := cluster.kubectl("describe", "schedulerprofile", name).stdout)
            and d
        ),
    )
    assert "spec.profiles[0].pluginConfig[0].args.scoringStrategy: must be an object" in described


def test_a_new_configuration_rolling_out_is_an_event(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("event")))
    body = profile_body(unique("event"), namespace=namespace)
    name = apply_profile(body)
    first = wait_condition(cluster, name, "Ready", "True")["status"]["configHash"]
    apply_profile(
        profile_body(name, namespace=namespace, profiles=[{"percentageOfNodesToScore": 10}])
    )
    second = wait_condition(cluster, name, "Ready", "True")["status"]["configHash"]
    selector = f"involvedObject.name={name},reason=RollingOut"
    events = wait_for(
        "the RollingOut event",
        lambda: (get_json(cluster, "events", "-n", "default", "--field-selector", selector) or {})
        .get("items"),
    )  # fmt: skip
    assert events[0]["type"] == "Normal"
    assert events[0]["message"] == f"configuration {second} is rolling out (was {first})"


def test_the_schema_refuses_what_it_can_check_statically(cluster: Cluster, operator: Any) -> None:
    body = profile_body(
        unique("schema"),
        replicas=0,
        profiles=[
            {
                "schedulerName": "x",
                "plugins": {"score": {"enabled": [{"name": "A", "weight": 500}]}},
            },
            {"schedulerName": "x"},
        ],
    )
    done = cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(body), check=False)
    assert done.returncode != 0
    assert "spec.replicas in body should be greater than or equal to 1" in done.stderr
    lone = profile_body(unique("lone"), replicas=3, leaderElection={"leaderElect": False})
    refused = cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(lone), check=False)
    assert "more than one replica needs leader election" in refused.stderr
    assert "should be less than or equal to 100" in done.stderr
    assert "profile schedulerNames must be unique" in done.stderr


def test_pre_enqueue_is_kept_and_both_engines_take_it(
    cluster: Cluster, namespace: str, apply_profile: Apply, tmp_path: Path
) -> None:
    gates = {"preEnqueue": {"disabled": [{"name": "SchedulingGates"}]}}
    body = profile_body(unique("gates"), namespace=namespace, profiles=[{"plugins": gates}])
    name = apply_profile(body)
    accepted = wait_condition(cluster, name, "ConfigValid", "True")
    assert accepted["spec"]["profiles"][0]["plugins"] == gates  # declared, so never pruned
    assert "preEnqueue:" in config_text(cluster, name, namespace)

    upstream = parse({**accepted, "spec": {**accepted["spec"], "engine": "KubeScheduler"}})
    validate(upstream)
    process, port, log = start_kube_scheduler(cluster, render(upstream).config, tmp_path)
    try:
        wait_for(
            "kube-scheduler with a preEnqueue configuration to be healthy",
            lambda: process.poll() is None and healthz(port),
            timeout=60,
        )
    except AssertionError as error:
        raise AssertionError(f"{error}\n{log.read_text()[-3000:]}") from None
    finally:
        stop_process(process)


def test_the_target_namespace_cannot_be_moved(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    name = apply_profile(profile_body(unique("moving"), namespace=namespace))
    moved = yaml.safe_dump(profile_body(name, namespace="kube-system"))
    done = cluster.kubectl("apply", "-f", "-", input=moved, check=False)
    assert done.returncode != 0
    assert "namespace is immutable" in done.stderr


def test_children_carry_standard_labels_not_the_profiles_own(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    body = profile_body(unique("labels"), namespace=namespace)
    body["metadata"]["labels"] = {"argocd.argoproj.io/instance": "platform", "team": "a"}
    name = apply_profile(body)
    wait_for(
        "the Deployment", lambda: get_json(cluster, "deployment", name, "-n", namespace), timeout=30
    )
    for kind in ("serviceaccount", "configmap", "deployment", "role", "rolebinding"):
        shown = cluster.kubectl(
            "get", kind, "-n", namespace, "-l", f"app.kubernetes.io/instance={name}", "-o", "json"
        ).stdout
        items = json.loads(shown)["items"]
        assert items, kind
        for item in items:
            labels = item["metadata"]["labels"]
            assert labels["app.kubernetes.io/managed-by"] == "scheduler-operator"
            assert "team" not in labels
            assert "argocd.argoproj.io/instance" not in labels
            assert item["metadata"]["ownerReferences"][0]["name"] == name


def test_the_leader_is_reported_from_the_schedulers_lease(
    cluster: Cluster, namespace: str, apply_profile: Apply, tmp_path: Path
) -> None:
    body = profile_body(unique("leader"), namespace=namespace, engine="KubeScheduler", replicas=2)
    body["metadata"]["annotations"] = REAL_LEASES  # the kube-scheduler below elects itself
    name = apply_profile(body)
    wait_condition(cluster, name, "ConfigValid", "True")
    config = render(parse({**body, "metadata": {"name": name}})).config
    process, _, _ = start_kube_scheduler(cluster, config, tmp_path)
    try:
        lease = wait_for(
            "the scheduler's own Lease to be held",
            lambda: (
                (found := get_json(cluster, "lease", f"schedulerprofile.{name}", "-n", namespace))
                and found["spec"].get("holderIdentity")
                and found
            ),
            timeout=60,
        )
        holder = lease["spec"]["holderIdentity"]
        wait_for(
            "status.leader",
            lambda: (
                (get_json(cluster, "schedulerprofile", name) or {}).get("status", {}).get("leader")
                == holder
            ),
            timeout=30,
        )
    finally:
        stop_process(process)
    assert get_json(cluster, "lease", "kube-scheduler", "-n", namespace) is None


def test_a_refused_apply_is_reported_and_retried(
    cluster: Cluster, make_nodes: Callable[..., list[str]], apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("later")))
    missing = unique("t-later")  # a namespace the operator manages, not created yet
    name = apply_profile(profile_body(unique("later"), namespace=missing))
    failed = wait_for(
        "Ready=False with reason ApplyFailed",
        lambda: (
            condition(get_json(cluster, "schedulerprofile", name), "Ready").get("reason")
            == "ApplyFailed"
            and get_json(cluster, "schedulerprofile", name)
        ),
        timeout=30,
    )
    # Not granted there yet (no RoleBinding), as in a namespace the installer forgot.
    message = condition(failed, "Ready")["message"]
    assert message.startswith(f"cannot read ServiceAccount {missing}/{name}: ")
    assert "is forbidden" in message

    cluster.kubectl("create", "namespace", missing)
    operand_namespace(cluster, missing)
    try:
        wait_condition(cluster, name, "Ready", "True", timeout=90)
    finally:
        cluster.kubectl("delete", "schedulerprofile", name, "--wait=true")
        cluster.kubectl("delete", "namespace", missing, "--wait=false")


def test_status_follows_the_deployment(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    [node] = make_nodes(kwok_node(unique("follow")))
    name = apply_profile(profile_body(unique("follow"), namespace=namespace))
    wait_condition(cluster, name, "Ready", "True")

    # Evicts the scheduler's only pod; its replacement cannot run anywhere.
    cluster.kubectl("taint", "node", node, "maintenance=now:NoExecute")
    down = wait_condition(cluster, name, "Available", "False", timeout=90)
    assert condition(down, "Available")["reason"] == "MinimumReplicasUnavailable"
    assert condition(down, "Ready")["status"] == "False"

    cluster.kubectl("taint", "node", node, "maintenance-")
    back = wait_condition(cluster, name, "Ready", "True", timeout=90)
    assert back["status"]["readyReplicas"] == 1


def test_dropping_leader_election_switches_to_recreate(
    cluster: Cluster, make_nodes: Callable[..., list[str]], namespace: str, apply_profile: Apply
) -> None:
    make_nodes(kwok_node(unique("strategy")))
    name = apply_profile(profile_body(unique("strategy"), namespace=namespace, replicas=2))
    wait_condition(cluster, name, "Ready", "True")
    assert deployment(cluster, name, namespace)["spec"]["strategy"]["type"] == "RollingUpdate"

    no_election = {"leaderElect": False}
    apply_profile(profile_body(name, namespace=namespace, replicas=1, leaderElection=no_election))
    wait_condition(cluster, name, "Ready", "True")
    assert deployment(cluster, name, namespace)["spec"]["strategy"] == {"type": "Recreate"}


def test_an_object_it_did_not_create_is_never_adopted(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    name = unique("taken")
    cluster.kubectl("create", "serviceaccount", name, "-n", namespace)
    apply_profile(profile_body(name, namespace=namespace))
    refused = wait_for(
        "Ready=False with reason ApplyFailed",
        lambda: (
            (found := get_json(cluster, "schedulerprofile", name))
            and condition(found, "Ready").get("reason") == "ApplyFailed"
            and found
        ),
        timeout=30,
    )
    assert condition(refused, "Ready")["message"] == (
        f"ServiceAccount {namespace}/{name} already exists and does not belong to this "
        "SchedulerProfile"
    )
    cluster.kubectl("delete", "schedulerprofile", name, "--wait=true")
    account = get_json(cluster, "serviceaccount", name, "-n", namespace)
    assert account is not None
    assert not account["metadata"].get("ownerReferences")


NODE_DECLARED_FEATURES_OFF = {
    "NodeDeclaredFeatures": False,  # kube-scheduler asks the gates that need it to be off too
    "ExtendWebSocketsToKubelet": False,
    "InPlacePodLevelResourcesVerticalScaling": False,
    "InPlacePodVerticalScalingInitContainers": False,
    "RestartAllContainersOnContainerExits": False,
}


def inert_case() -> tuple[str, str, dict[str, bool], dict[str, bool], str]:
    """A plugin kube-scheduler takes while its gate is off, that gate and the gates set to turn
    it off, then gates kube-scheduler refuses and the start of its refusal, at the cluster's
    minor: 1.37 locks NodeDeclaredFeatures on, and GangScheduling waits for GenericWorkload."""
    if version_key(kubernetes_minor()) < (1, 37):
        refused = {"NodeDeclaredFeatures": False}
        return (
            "NodeDeclaredFeatures",
            "NodeDeclaredFeatures",
            NODE_DECLARED_FEATURES_OFF,
            refused,
            ("spec.featureGates: [ExtendWebSocketsToKubelet is enabled"),
        )
    refused = {"GenericWorkload": False, "WorkloadWithJob": True}
    return (
        "GangScheduling",
        "GenericWorkload",
        {"GenericWorkload": False},
        refused,
        (
            "spec.featureGates: WorkloadWithJob is enabled, but depends on features that are "
            "disabled: [GenericWorkload]"
        ),
    )


def test_feature_gates_reach_the_engine_and_kube_scheduler_takes_what_was_accepted(
    cluster: Cluster, namespace: str, apply_profile: Apply, tmp_path: Path
) -> None:
    plugin, gate, gates_off, refused_gates, refusal = inert_case()
    inert = {"multiPoint": {"enabled": [{"name": plugin}]}}
    body = profile_body(
        unique("gates"),
        namespace=namespace,
        engine="KubeScheduler",
        featureGates=gates_off,
        profiles=[{"plugins": inert}],
    )
    name = apply_profile(body)
    accepted = condition(wait_condition(cluster, name, "ConfigValid", "True"), "ConfigValid")
    assert accepted["reason"] == "PluginGateOff"
    assert f"plugin '{plugin}' does nothing while feature gate {gate} is off" in accepted["message"]
    command = deployment(cluster, name, namespace)["spec"]["template"]["spec"]["containers"][0]
    flag = command["command"][-1]
    assert flag.startswith(f"--feature-gates={min(gates_off)}=false")

    # The real kube-scheduler starts with that configuration and that flag.
    process, port, log = start_kube_scheduler(
        cluster,
        render(parse(get_json(cluster, "schedulerprofile", name))).config,
        tmp_path,
        (flag,),
    )
    try:
        wait_for(
            "kube-scheduler with the profile's feature gates to be healthy",
            lambda: process.poll() is None and healthz(port),
            timeout=60,
        )
    except AssertionError as error:
        raise AssertionError(f"{error}\n{log.read_text()[-3000:]}") from None
    finally:
        stop_process(process)

    # A gate kube-scheduler would refuse is refused in its words; the Deployment stays.
    apply_profile({**body, "spec": {**body["spec"], "featureGates": refused_gates}})
    refused = condition(wait_condition(cluster, name, "ConfigValid", "False"), "ConfigValid")
    assert refused["reason"] == "InvalidSpec"
    assert refused["message"].startswith(refusal)
    assert (
        deployment(cluster, name, namespace)["spec"]["template"]["spec"]["containers"][0][
            "command"
        ][-1]
        == flag
    )


def apiserver_version(cluster: Cluster) -> str:
    shown = json.loads(cluster.kubectl("version", "-o", "json").stdout)
    return str(shown["serverVersion"]["gitVersion"])


def test_kube_scheduler_runs_the_release_of_the_clusters_minor_or_the_pinned_older_one(
    cluster: Cluster, namespace: str, apply_profile: Apply
) -> None:
    server = apiserver_version(cluster)
    minor = ".".join(server.removeprefix("v").split(".")[:2])  # 1.36 on the pinned cluster
    body = profile_body(unique("release"), namespace=namespace, engine="KubeScheduler")
    name = apply_profile(body)
    reported = wait_condition(cluster, name, "ConfigValid", "True")
    assert condition(reported, "ConfigValid")["reason"] == "ConfigAccepted"
    assert (reported["status"]["version"], reported["status"]["emulatedVersion"]) == (
        RELEASE[minor],
        minor,
    )
    pod = deployment(cluster, name, namespace)["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == f"registry.k8s.io/kube-scheduler:{RELEASE[minor]}"
    shown = cluster.kubectl("get", "schedulerprofile", name, "-o", "wide").stdout.splitlines()
    assert shown[0].split()[:5] == ["NAME", "SCHEDULERS", "ENGINE", "VERSION", "EMULATED"]
    assert shown[1].split()[3:5] == [RELEASE[minor], minor]

    # An older minor pinned: its image, and the status follows.
    older = VERSIONS[max(VERSIONS.index(minor) - 1, 0)]
    apply_profile({**body, "spec": {**body["spec"], "kubernetesVersion": older}})
    pinned = wait_for(
        "the pinned minor in the status",
        lambda: (
            (found := get_json(cluster, "schedulerprofile", name))
            and found["status"].get("emulatedVersion") == older
            and found
        ),
    )
    assert pinned["status"]["version"] == RELEASE[older]
    pod = deployment(cluster, name, namespace)["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == f"registry.k8s.io/kube-scheduler:{RELEASE[older]}"

    # A newer minor than the API server is refused naming the field; the older one keeps running.
    newer = f"{minor.split('.')[0]}.{int(minor.split('.')[1]) + 1}"
    apply_profile({**body, "spec": {**body["spec"], "kubernetesVersion": newer}})
    refused = condition(wait_condition(cluster, name, "ConfigValid", "False"), "ConfigValid")
    assert refused["reason"] == "InvalidSpec"
    assert refused["message"].startswith(f"spec.kubernetesVersion: Kubernetes {newer} is ")
    pod = deployment(cluster, name, namespace)["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == f"registry.k8s.io/kube-scheduler:{RELEASE[older]}"

    # A patch release is not a minor: the API server refuses it with the CRD's message.
    patch = {**body, "spec": {**body["spec"], "kubernetesVersion": server}}
    done = cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(patch), check=False)
    assert done.returncode != 0
    assert "must be a Kubernetes minor such as 1.36" in done.stderr
