"""Render is pure: the children of a SchedulerProfile, their labels, owners, config and pods."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from scheduler_operator.model import Plugin, PluginConfig, Plugins, PluginSet, Profile, Toleration
from scheduler_operator.parsing import parse
from scheduler_operator.releases import OFFLINE_APISERVER
from scheduler_operator.render import HASH_ANNOTATION, render

KINDS = [
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRoleBinding",
    "ClusterRoleBinding",
    "ClusterRoleBinding",
    "RoleBinding",
    "ConfigMap",
    "NetworkPolicy",
    "Deployment",
]


def body(spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": "tenant", "uid": "uid-1", **metadata}, "spec": spec or {}}


def objects(spec: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return render(parse(body(spec))).objects


def of_kind(rendered: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(o for o in rendered if o["kind"] == kind)


def test_every_child_is_rendered_in_apply_order() -> None:
    assert [o["kind"] for o in objects()] == KINDS


def test_every_child_is_owned_by_the_profile_and_carries_the_standard_labels() -> None:
    rendered = render(parse(body(labels={"argocd.argoproj.io/instance": "platform"}))).objects
    for child in rendered:
        metadata = child["metadata"]
        assert metadata["ownerReferences"] == [
            {
                "apiVersion": "scheduling.schedops.io/v1alpha1",
                "kind": "SchedulerProfile",
                "name": "tenant",
                "uid": "uid-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert metadata["labels"]["app.kubernetes.io/managed-by"] == "scheduler-operator"
        assert metadata["labels"]["app.kubernetes.io/instance"] == "tenant"
        assert "argocd.argoproj.io/instance" not in metadata["labels"]


def test_cluster_bindings_grant_the_scheduler_roles_to_its_service_account() -> None:
    rendered = objects({"namespace": "schedulers"})
    bindings = [o for o in rendered if o["kind"] == "ClusterRoleBinding"]
    assert {b["roleRef"]["name"] for b in bindings} == {
        "system:kube-scheduler",
        "system:volume-scheduler",
        "scheduler-operator:pod-group-scheduler",
    }
    subject = {"kind": "ServiceAccount", "name": "tenant", "namespace": "schedulers"}
    assert all(b["subjects"] == [subject] for b in bindings)
    reader = rendered[6]
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"


def test_the_lease_role_covers_only_the_schedulers_own_lease() -> None:
    role = of_kind(objects({"schedulerName": "batch"}), "Role")
    named = [rule for rule in role["rules"] if "resourceNames" in rule]
    assert named == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            # Prefixed: no scheduler name can name another component's Lease.
            "resourceNames": ["schedulerprofile.batch"],
            "verbs": ["get", "update", "patch"],
        }
    ]


def config_of(rendered: list[dict[str, Any]]) -> dict[str, Any]:
    documents = list(yaml.safe_load_all(of_kind(rendered, "ConfigMap")["data"]["config.yaml"]))
    assert len(documents) == 1
    config: dict[str, Any] = documents[0]
    return config


def test_the_config_map_holds_a_v1_configuration_with_the_schedulers_own_lease() -> None:
    config = config_of(objects({"schedulerName": "batch", "replicas": 2, "namespace": "ops"}))
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["kind"] == "KubeSchedulerConfiguration"
    assert config["leaderElection"] == {
        "leaderElect": True,
        "resourceLock": "leases",
        "resourceName": "schedulerprofile.batch",
        "resourceNamespace": "ops",
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
    }
    assert config["profiles"] == [{"schedulerName": "batch"}]


def test_profiles_plugins_args_and_percentage_reach_the_configuration() -> None:
    spec = {
        "profiles": [
            {
                "schedulerName": "images",
                "percentageOfNodesToScore": 50,
                "plugins": {
                    "score": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": "ImageLocality", "weight": 5}],
                    },
                    "filter": {},
                },
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ["x"]}}],
            }
        ]
    }
    assert config_of(objects(spec))["profiles"] == [
        {
            "schedulerName": "images",
            "percentageOfNodesToScore": 50,
            "plugins": {
                "score": {
                    "enabled": [{"name": "ImageLocality", "weight": 5}],
                    "disabled": [{"name": "*"}],
                }
            },
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ["x"]}}],
        }
    ]


def test_pre_enqueue_and_unset_weights_reach_the_configuration_as_written() -> None:
    plugins = {
        "preEnqueue": {"disabled": [{"name": "SchedulingGates"}]},
        "multiPoint": {"enabled": [{"name": "ImageLocality"}]},
    }
    config = config_of(objects({"profiles": [{"plugins": plugins}]}))
    # multiPoint first, as the configuration has always listed it.
    assert config["profiles"][0]["plugins"] == {
        "multiPoint": {"enabled": [{"name": "ImageLocality"}]},
        "preEnqueue": {"disabled": [{"name": "SchedulingGates"}]},
    }


def pod_template(rendered: list[dict[str, Any]]) -> dict[str, Any]:
    template: dict[str, Any] = of_kind(rendered, "Deployment")["spec"]["template"]
    return template


def test_only_a_configuration_change_changes_the_pod_template_hash() -> None:
    base = pod_template(objects())["metadata"]["annotations"][HASH_ANNOTATION]
    scaled = objects({"replicas": 3})
    assert pod_template(scaled)["metadata"]["annotations"][HASH_ANNOTATION] == base
    changed = objects({"profiles": [{"percentageOfNodesToScore": 10}]})
    assert pod_template(changed)["metadata"]["annotations"][HASH_ANNOTATION] != base
    assert render(parse(body())).config_hash == base


def test_the_pods_run_restricted() -> None:
    spec = pod_template(objects())["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = spec["containers"][0]["securityContext"]
    assert container["allowPrivilegeEscalation"] is False
    assert container["readOnlyRootFilesystem"] is True
    assert container["capabilities"] == {"drop": ["ALL"]}


@pytest.mark.parametrize(
    ("engine", "image", "command", "port", "scheme", "liveness"),
    [
        (
            "PythonRuntime",
            "ghcr.io/schedops/scheduler-operator:0.1.0",
            ["scheduler-runtime", "run", "--config", "/etc/kubernetes/scheduler/config.yaml"],
            10259,
            "HTTPS",
            "/healthz",
        ),
        (
            "KubeScheduler",
            f"registry.k8s.io/kube-scheduler:{OFFLINE_APISERVER}",
            ["kube-scheduler", "--config=/etc/kubernetes/scheduler/config.yaml"],
            10259,
            "HTTPS",
            "/livez",
        ),
    ],
)
def test_each_engine_runs_its_program_and_probes_its_health_endpoint(
    engine: str, image: str, command: list[str], port: int, scheme: str, liveness: str
) -> None:
    container = pod_template(objects({"engine": engine, "logVerbosity": 4}))["spec"]["containers"][
        0
    ]
    assert container["image"] == image
    assert container["command"] == [*command, "--v=4"]
    assert container["ports"] == [{"name": "https", "containerPort": port, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {
        "path": liveness,
        "port": "https",
        "scheme": scheme,
    }
    assert container["readinessProbe"]["httpGet"] == {
        "path": "/readyz",
        "port": "https",
        "scheme": scheme,
    }
    assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} in (
        container["env"]
    )


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
def test_feature_gates_reach_either_engine_as_kube_schedulers_flag(engine: str) -> None:
    gates = {"GenericWorkload": True, "GangScheduling": True, "DRAAdminAccess": True}
    spec = {"engine": engine, "featureGates": gates}
    command = pod_template(objects(spec))["spec"]["containers"][0]["command"]
    flag = "--feature-gates=DRAAdminAccess=true,GangScheduling=true,GenericWorkload=true"
    assert command[-1] == flag
    without = pod_template(objects({"engine": engine}))["spec"]["containers"][0]["command"]
    assert not any(option.startswith("--feature-gates") for option in without)


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
def test_the_scheduler_pods_take_connections_on_the_secure_port_only(engine: str) -> None:
    rendered = objects({"engine": engine, "namespace": "schedulers"})
    policy = of_kind(rendered, "NetworkPolicy")
    assert policy["apiVersion"] == "networking.k8s.io/v1"
    assert policy["metadata"]["name"] == "tenant"
    assert policy["metadata"]["namespace"] == "schedulers"
    # It picks exactly the Deployment's pods.
    deployment = of_kind(rendered, "Deployment")
    assert policy["spec"]["podSelector"] == deployment["spec"]["selector"]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    # Ingress from anywhere (probes, Prometheus), to the secure port alone.
    assert policy["spec"]["ingress"] == [{"ports": [{"protocol": "TCP", "port": 10259}]}]
    # Egress to the API server and DNS only.
    assert policy["spec"]["egress"] == [
        {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
        {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
    ]
    ports = pod_template(rendered)["spec"]["containers"][0]["ports"]
    assert [p["containerPort"] for p in ports] == [10259]


def test_placement_resources_and_image_settings_reach_the_pods() -> None:
    spec = {
        "image": "registry.example/sched:1",
        "imagePullPolicy": "Always",
        "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "256Mi"}},
        "nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
    }
    pod = pod_template(objects(spec))["spec"]
    container = pod["containers"][0]
    assert container["image"] == "registry.example/sched:1"
    assert container["imagePullPolicy"] == "Always"
    assert container["resources"] == {"requests": {"cpu": "100m"}, "limits": {"memory": "256Mi"}}
    assert pod["nodeSelector"] == spec["nodeSelector"]
    assert pod["tolerations"] == spec["tolerations"]
    assert pod["affinity"] == spec["affinity"]


HOSTILE = [
    "quote \" and ' apostrophe",
    "line one\nline two: injected",
    "{{ 7 * 7 }} {% raw %}",
    "---\napiVersion: v1\nkind: Secret",
    "...\n---\n",
    "key: value\n  nested: [1, 2]",
    "&anchor *alias !!python/object",
    "# comment\u2028\u0085 next",
    "beyond the BMP \U0001f600 and a literal \\ud83d\\ude00",
]


def hostile_profile(text: str) -> Any:
    """A parsed profile with the hostile text in every user-supplied field.

    Validation would refuse some of these strings, so they are put in past it: render must
    stay safe even for input that never passed the schema."""
    profile = parse(body())
    plugin = Plugin.model_construct(name=text, weight=1)
    plugins = Plugins.model_construct(
        score=PluginSet.model_construct(enabled=[plugin], disabled=[])
    )
    user_profile = Profile.model_construct(
        scheduler_name=text,
        plugins=plugins,
        plugin_config=[PluginConfig.model_construct(name=text, args={text: [text]})],
        percentage_of_nodes_to_score=None,
    )
    spec = profile.spec.model_copy(
        update={
            "scheduler_name": text,
            "namespace": text,
            "image": text,
            "node_selector": {text: text},
            "tolerations": [Toleration.model_construct(key=text, value=text)],
            "affinity": {text: {text: text}},
            "profiles": [user_profile],
        }
    )
    return type(profile)(name=text, uid=text, spec=spec)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_stay_values_in_one_object_per_child(text: str) -> None:
    rendered = render(hostile_profile(text))
    assert [o["kind"] for o in rendered.objects] == KINDS
    for child in rendered.objects:
        assert child["metadata"]["ownerReferences"][0]["name"] == text
        assert child["metadata"]["labels"]["app.kubernetes.io/instance"] == text
    deployment = rendered.objects[-1]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["metadata"]["namespace"] == text
    assert pod["containers"][0]["image"] == text
    assert pod["nodeSelector"] == {text: text}
    assert pod["tolerations"] == [{"key": text, "value": text}]
    assert pod["affinity"] == {text: {text: text}}
    assert rendered.objects[1]["rules"][1]["resourceNames"] == [f"schedulerprofile.{text}"]
    config = config_of(rendered.objects)
    assert config["leaderElection"]["resourceName"] == f"schedulerprofile.{text}"
    assert config["profiles"][0]["schedulerName"] == text
    assert config["profiles"][0]["plugins"]["score"]["enabled"][0]["name"] == text
    assert config["profiles"][0]["pluginConfig"] == [{"name": text, "args": {text: [text]}}]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
        ({"leaderElection": {"leaderElect": False}}, {"type": "Recreate"}),
        (
            {"replicas": 2},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        ),
    ],
)
def test_schedulers_without_leader_election_never_overlap(
    spec: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert of_kind(objects(spec), "Deployment")["spec"]["strategy"] == expected
