"""The verdict on a SchedulerProfile is judged once per (uid, generation), and once per judgement
the scheduler configuration is computed: children's events reuse it, a new generation does not."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from scheduler_operator import desired, drift, engines, reconcile, render, status
from scheduler_operator.desired import Desired, DesiredCache, judge
from scheduler_operator.errors import SpecError

NAMESPACES = ["ops"]  # where the operator runs schedulers in these tests


def body(generation: int = 1, uid: str = "uid-1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.schedops.io/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {
            "name": "tenant",
            "uid": uid,
            "generation": generation,
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"namespace": "ops", **spec},
    }


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The generations engines.validate was called for, in order."""
    seen: list[str] = []
    real = engines.validate

    def counting(profile: Any, config: Any = None, release: Any = None) -> None:
        seen.append(profile.name)
        real(profile, config, release)

    monkeypatch.setattr(engines, "validate", counting)
    return seen


def test_the_same_generation_is_judged_once(validations: list[str]) -> None:
    cache = DesiredCache()
    first = cache.of(body())
    assert isinstance(first, Desired)
    assert cache.of(body()) is first
    assert len(validations) == 1


def test_a_new_generation_is_judged_again(validations: list[str]) -> None:
    cache = DesiredCache()
    first = cache.of(body(1))
    second = cache.of(body(2, replicas=2))
    assert isinstance(second, Desired)
    assert second is not first
    assert second.profile.spec.replicas == 2
    assert len(validations) == 2
    assert cache.of(body(2, replicas=2)) is second
    assert len(validations) == 2


def test_a_refused_generation_is_remembered_as_refused(validations: list[str]) -> None:
    cache = DesiredCache()
    bad = body(
        engine="KubeScheduler", profiles=[{"plugins": {"score": {"enabled": [{"name": "X"}]}}}]
    )
    verdict = cache.of(bad)
    assert isinstance(verdict, SpecError)
    assert verdict.path == "spec.profiles[0].plugins.score.enabled[0].name"
    assert cache.of(bad) is verdict
    assert len(validations) == 1


def test_each_object_and_a_forgotten_one_are_judged_apart(validations: list[str]) -> None:
    cache = DesiredCache()
    cache.of(body(uid="a"))
    cache.of(body(uid="b"))
    assert len(validations) == 2
    cache.forget("a")
    cache.of(body(uid="a"))
    cache.of(body(uid="b"))
    assert len(validations) == 3


def test_a_late_older_generation_does_not_displace_the_newer(validations: list[str]) -> None:
    cache = DesiredCache()
    newer = cache.of(body(2))
    cache.of(body(1))
    assert cache.of(body(2)) is newer
    assert len(validations) == 2


def test_a_body_that_was_never_stored_is_judged_every_time(validations: list[str]) -> None:
    cache = DesiredCache()
    unstored = {"metadata": {"name": "tenant"}, "spec": {}}
    cache.of(unstored)
    cache.of(unstored)
    assert len(validations) == 2


def test_a_judgement_computes_the_scheduler_configuration_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = desired.scheduler_configuration

    def counting(profile: Any) -> dict[str, Any]:
        calls.append(profile.name)
        return real(profile)

    for module in (desired, engines, render):
        monkeypatch.setattr(module, "scheduler_configuration", counting)
    verdict = judge(body())
    assert calls == ["tenant"]
    assert verdict.rendered.config == real(verdict.profile)


class FakeCluster:
    """The few calls reconcile, drift repair and reporting make, against a dict of objects."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.objects: dict[tuple[str, str, str | None], dict[str, Any]] = {}
        self.applied: list[tuple[str, str, str | None]] = []
        for obj in objects:
            self.store(obj)

    def store(self, obj: dict[str, Any]) -> None:
        self.objects[drift.identity(obj)] = copy.deepcopy(obj)

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        found = self.objects.get((kind, name, namespace))
        return copy.deepcopy(found) if found is not None else None

    def list(
        self, api_version: str, kind: str, namespace: str, label_selector: str
    ) -> list[dict[str, Any]]:
        key, _, value = label_selector.partition("=")
        return [
            copy.deepcopy(obj)
            for (found_kind, _, found_namespace), obj in self.objects.items()
            if (found_kind, found_namespace) == (kind, namespace)
            and obj["metadata"].get("labels", {}).get(key) == value
        ]

    def apply_all(self, children: list[dict[str, Any]]) -> None:
        for child in children:
            self.apply(child)

    def get_like(self, desired: dict[str, Any]) -> dict[str, Any] | None:
        return self.get("", desired["kind"], desired["metadata"]["name"],
                        desired["metadata"].get("namespace"))  # fmt: skip

    def apply(self, desired: dict[str, Any]) -> None:
        self.applied.append(drift.identity(desired))
        self.store(desired)

    def patch_profile_status(
        self, name: str, status: dict[str, Any], resource_version: str | None = None
    ) -> bool:
        profile = self.objects[("SchedulerProfile", name, None)]
        profile["status"] = {**(profile.get("status") or {}), **status}
        return True


def rolling_out(deployment: dict[str, Any], ready: int) -> dict[str, Any]:
    """The Deployment as its status updates show it during a rollout."""
    return {
        **deployment,
        "metadata": {**deployment["metadata"], "generation": 1},
        "status": {
            "observedGeneration": 1,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": "True" if ready else "False", "reason": "R"}
            ],
        },
    }


def test_child_events_of_an_unchanged_generation_do_not_judge_again(
    validations: list[str],
) -> None:
    # Without leader election, Ready follows the Deployment alone.
    profile = body(leaderElection={"leaderElect": False})
    cluster: Any = FakeCluster(profile)
    cache = DesiredCache()
    claims: Any = {}
    report = reconcile.reconciled_status(profile, cluster, claims, cache, NAMESPACES)
    cluster.patch_profile_status("tenant", report)
    assert len(validations) == 1
    deployment = cluster.get("apps/v1", "Deployment", "tenant", "ops")
    applied = len(cluster.applied)

    for ready in (0, 0, 1):  # the Deployment's status updates during its rollout
        cluster.store(rolling_out(deployment, ready))
        drift.repair(cluster, cache, claims, rolling_out(deployment, ready), deleted=False)
    assert len(validations) == 1
    assert len(cluster.applied) == applied  # nothing drifted, so nothing is applied
    shown = cluster.get("scheduling.schedops.io/v1alpha1", "SchedulerProfile", "tenant")
    assert {c["type"]: c["reason"] for c in shown["status"]["conditions"]}["Ready"] == (
        "SchedulerReady"
    )

    # A new generation is judged again, and its children follow it.
    cluster.store(body(2, logVerbosity=4, leaderElection={"leaderElect": False}))
    drift.repair(cluster, cache, claims, rolling_out(deployment, 1), deleted=False)
    assert len(validations) == 2
    command = cluster.get("apps/v1", "Deployment", "tenant", "ops")["spec"]["template"]["spec"][
        "containers"
    ][0]["command"]
    assert command[-1] == "--v=4"


def test_a_deleted_profile_is_forgotten(validations: list[str]) -> None:
    cache = DesiredCache()
    profile = body()
    cache.of(profile)
    cluster: Any = FakeCluster()
    reconcile.hand_over(profile, cluster, {}, cache, NAMESPACES)
    cache.of(profile)
    assert len(validations) == 2


def reconciled(apiserver: str, **spec: Any) -> tuple[dict[str, Any], Any]:
    """The status reconcile reports on an API server of that version, and the cluster after."""
    profile = body(**spec)
    cluster: Any = FakeCluster(profile)
    report = reconcile.reconciled_status(profile, cluster, {}, DesiredCache(apiserver), NAMESPACES)
    return report, cluster


def image_of(cluster: Any) -> str:
    deployment = cluster.get("apps/v1", "Deployment", "tenant", "ops")
    return str(deployment["spec"]["template"]["spec"]["containers"][0]["image"])


def condition_of(report: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in report["conditions"] if c["type"] == kind)


@pytest.mark.parametrize(
    ("apiserver", "spec", "shown"),
    [
        ("v1.35.4", {"engine": "KubeScheduler"}, ("v1.35.4", "1.35")),
        ("v1.36.3+k3s1", {"engine": "KubeScheduler"}, ("v1.36.3", "1.36")),
        ("v1.37.2", {"engine": "KubeScheduler", "kubernetesVersion": "1.36"}, ("v1.36.3", "1.36")),
        ("v1.37.2", {}, ("v1.37.2", "1.37")),
        ("v1.37.2", {"kubernetesVersion": "1.35"}, ("v1.35.4", "1.35")),
    ],
)
def test_the_status_shows_the_release_run_and_the_minor_emulated(
    apiserver: str, spec: dict[str, Any], shown: tuple[str, str]
) -> None:
    report, cluster = reconciled(apiserver, **spec)
    assert (report["version"], report["emulatedVersion"]) == shown
    assert condition_of(report, "ConfigValid")["reason"] == "ConfigAccepted"
    if spec.get("engine") == "KubeScheduler":
        assert image_of(cluster) == f"registry.k8s.io/kube-scheduler:{shown[0]}"


def test_an_api_server_newer_than_known_is_a_warning_and_an_event() -> None:
    report, cluster = reconciled("v1.38.0", engine="KubeScheduler")
    assert image_of(cluster) == "registry.k8s.io/kube-scheduler:v1.37.2"
    valid = condition_of(report, "ConfigValid")
    assert (valid["status"], valid["reason"]) == ("True", "NewerAPIServer")
    assert valid["message"] == (
        "the configuration is valid for engine KubeScheduler, but: the API server is v1.38.0, "
        "newer than Kubernetes 1.37, the newest minor this operator knows: the scheduler runs "
        "as kube-scheduler v1.37.2"
    )
    assert [(e.type, e.reason) for e in status.events({}, report)] == [
        ("Warning", "NewerAPIServer")
    ]
    assert status.events(report, report) == []


def test_an_api_server_older_than_known_is_refused_with_its_own_reason() -> None:
    report, cluster = reconciled("v1.34.6", engine="KubeScheduler")
    refused = condition_of(report, "ConfigValid")
    assert (refused["status"], refused["reason"]) == ("False", "UnsupportedKubernetesVersion")
    assert "the API server is v1.34.6, older than Kubernetes 1.35" in refused["message"]
    assert condition_of(report, "Ready")["reason"] == "UnsupportedKubernetesVersion"
    assert cluster.applied == []


def test_a_pin_newer_than_the_api_server_is_refused_and_nothing_is_applied() -> None:
    report, cluster = reconciled("v1.36.3", engine="KubeScheduler", kubernetesVersion="1.37")
    refused = condition_of(report, "ConfigValid")
    assert (refused["status"], refused["reason"]) == ("False", "InvalidSpec")
    assert refused["message"].startswith(
        "spec.kubernetesVersion: Kubernetes 1.37 is newer than the API server (v1.36.3)"
    )
    assert cluster.applied == []
