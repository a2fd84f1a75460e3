"""Which Kubernetes release each scheduler runs: the API server's minor or the pinned one, never
newer than the API server; kube-scheduler's image, the runtime's flags and the judgement follow."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from scheduler_operator.desired import judge
from scheduler_operator.errors import SpecError
from scheduler_operator.releases import (
    FIELD,
    KUBE_SCHEDULER_IMAGES,
    Release,
    UnsupportedVersionError,
    choose,
)

from scheduler_runtime.config.features import TABLES
from scheduler_runtime.config.kube_feature_gates import v1_35, v1_36, v1_37


def body(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "tenant", "uid": "uid-1"}, "spec": spec}


def container(apiserver: str, **spec: Any) -> dict[str, Any]:
    deployment = judge(body(**spec), apiserver).rendered.objects[-1]
    found: dict[str, Any] = deployment["spec"]["template"]["spec"]["containers"][0]
    return found


def test_each_known_minor_has_kube_schedulers_image_of_its_generated_tables_release() -> None:
    assert {
        "1.35": f"registry.k8s.io/kube-scheduler:{v1_35.KUBERNETES_VERSION}",
        "1.36": f"registry.k8s.io/kube-scheduler:{v1_36.KUBERNETES_VERSION}",
        "1.37": f"registry.k8s.io/kube-scheduler:{v1_37.KUBERNETES_VERSION}",
    } == KUBE_SCHEDULER_IMAGES
    assert v1_35.KUBERNETES_VERSION == "v1.35.4"
    assert v1_37.KUBERNETES_VERSION == "v1.37.2"


@pytest.mark.parametrize(
    ("apiserver", "release", "minor"),
    [
        ("v1.35.4", "v1.35.4", "1.35"),
        ("v1.35.0", "v1.35.4", "1.35"),
        ("v1.36.3", "v1.36.3", "1.36"),
        ("v1.36.3+k3s1", "v1.36.3", "1.36"),
        ("v1.36.1-eks-4f4795d", "v1.36.3", "1.36"),
        ("v1.37.0-rc.1", "v1.37.2", "1.37"),
        ("v1.37.2-gke.1200", "v1.37.2", "1.37"),
    ],
)
def test_unpinned_the_api_servers_minor_is_run(apiserver: str, release: str, minor: str) -> None:
    assert choose(None, apiserver) == Release(release, minor, False, apiserver)


def test_an_api_server_newer_than_every_minor_known_gets_the_newest_with_a_warning() -> None:
    chosen = choose(None, "v1.38.0+k3s1")
    assert (chosen.version, chosen.emulated, chosen.image) == (
        "v1.37.2",
        "1.37",
        "registry.k8s.io/kube-scheduler:v1.37.2",
    )
    assert chosen.warning == (
        "the API server is v1.38.0+k3s1, newer than Kubernetes 1.37, the newest minor this "
        "operator knows: the scheduler runs as kube-scheduler v1.37.2"
    )


def test_an_api_server_older_than_every_minor_known_is_unsupported() -> None:
    with pytest.raises(UnsupportedVersionError) as raised:
        choose(None, "v1.34.2")
    assert raised.value.status_reason == "UnsupportedKubernetesVersion"
    assert str(raised.value) == (
        "spec.kubernetesVersion: unset, so the API server's minor is used, but the API server "
        "is v1.34.2, older than Kubernetes 1.35, the oldest minor this operator runs "
        "schedulers of (1.35, 1.36, 1.37)"
    )


def test_an_api_server_version_that_cannot_be_read_is_unsupported() -> None:
    with pytest.raises(UnsupportedVersionError, match="could not parse"):
        choose(None, "unknown")
    with pytest.raises(UnsupportedVersionError, match="unknown"):
        choose(None, "")


@pytest.mark.parametrize(
    ("pinned", "apiserver", "minor"),
    [
        ("1.35", "v1.36.3", "1.35"),
        ("v1.35", "v1.36.3+k3s1", "1.35"),
        ("1.36", "v1.36.3", "1.36"),
        ("1.37", "v1.38.0", "1.37"),  # older than the API server: no warning
    ],
)
def test_a_pinned_minor_is_run(pinned: str, apiserver: str, minor: str) -> None:
    chosen = choose(pinned, apiserver)
    assert (chosen.emulated, chosen.pinned, chosen.warning) == (minor, True, "")
    assert chosen.image == KUBE_SCHEDULER_IMAGES[minor]


@pytest.mark.parametrize(
    ("pinned", "apiserver", "reason"),
    [
        ("1.37", "v1.36.3", "Kubernetes 1.37 is newer than the API server (v1.36.3): a "
         "scheduler must not be newer than kube-apiserver (the version skew policy)"),
        ("1.36", "v1.35.4", "Kubernetes 1.36 is newer than the API server (v1.35.4): a "
         "scheduler must not be newer than kube-apiserver (the version skew policy)"),
        ("1.35", "v1.34.0", "Kubernetes 1.35 is newer than the API server (v1.34.0): a "
         "scheduler must not be newer than kube-apiserver (the version skew policy)"),
        ("1.34", "v1.36.3", "Kubernetes 1.34 is not one this operator runs schedulers of "
         "(1.35, 1.36, 1.37)"),
        ("1.38", "v1.38.0", "Kubernetes 1.38 is not one this operator runs schedulers of "
         "(1.35, 1.36, 1.37)"),
        ("v1.36.3", "v1.36.3", "'v1.36.3' is not a Kubernetes minor such as 1.37"),
        ("latest", "v1.36.3", "'latest' is not a Kubernetes minor such as 1.37"),
    ],
)  # fmt: skip
def test_a_pin_is_refused_naming_the_field(pinned: str, apiserver: str, reason: str) -> None:
    with pytest.raises(SpecError) as raised:
        choose(pinned, apiserver)
    assert (raised.value.path, raised.value.reason) == (FIELD, reason)
    assert type(raised.value).status_reason == "InvalidSpec"


@pytest.mark.parametrize(
    ("apiserver", "image"),
    [
        ("v1.35.4", "registry.k8s.io/kube-scheduler:v1.35.4"),
        ("v1.36.3+k3s1", "registry.k8s.io/kube-scheduler:v1.36.3"),
        ("v1.37.1", "registry.k8s.io/kube-scheduler:v1.37.2"),
        ("v1.38.2", "registry.k8s.io/kube-scheduler:v1.37.2"),
    ],
)
def test_kube_scheduler_is_the_image_of_the_api_servers_release(apiserver: str, image: str) -> None:
    shown = container(apiserver, engine="KubeScheduler")
    assert shown["image"] == image
    assert not any(flag.startswith("--emulated-version") for flag in shown["command"])


def test_a_pinned_minor_chooses_kube_schedulers_image() -> None:
    shown = container("v1.37.2", engine="KubeScheduler", kubernetesVersion="1.35")
    assert shown["image"] == "registry.k8s.io/kube-scheduler:v1.35.4"
    assert not any(flag.startswith("--emulated-version") for flag in shown["command"])


def test_a_custom_image_wins_and_the_pin_still_chooses_the_gates() -> None:
    image = "registry.example/kube-scheduler:v1.35.4-patched"
    spec = {"engine": "KubeScheduler", "image": image, "kubernetesVersion": "1.35"}
    assert container("v1.36.3", **spec)["image"] == image
    gate = newer_gate("1.35", "1.36")
    with pytest.raises(SpecError, match=f"unrecognized feature gate: {gate}"):
        judge(body(**spec, featureGates={gate: TABLES["1.36"][gate].default}), "v1.36.3")
    judge(body(**{**spec, "kubernetesVersion": "1.36"}, featureGates={gate: False}), "v1.36.3")


def test_the_runtime_is_told_the_pinned_minor_and_reads_the_api_servers_itself() -> None:
    pinned = container("v1.37.2", kubernetesVersion="v1.35")["command"]
    assert pinned[-1] == "--emulated-version=1.35"
    assert pinned[:2] == ["scheduler-runtime", "run"]
    unpinned = container("v1.37.2")["command"]
    assert not any(flag.startswith("--emulated-version") for flag in unpinned)
    assert container("v1.37.2")["image"] == container("v1.35.4")["image"]  # the project's


def newer_gate(old: str, new: str) -> str:
    """A gate the newer minor has, the older lacks, and that may be set off."""
    return next(
        name
        for name, spec in sorted(TABLES[new].items())
        if name not in TABLES[old] and spec.stage == "ALPHA" and not spec.locked
    )


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
def test_either_engine_is_judged_with_the_gates_of_the_minor_it_runs(engine: str) -> None:
    gate = newer_gate("1.35", "1.36")
    spec = {"engine": engine, "featureGates": {gate: False}}
    judge(body(**spec), "v1.36.3")
    with pytest.raises(SpecError) as raised:
        judge(body(**spec), "v1.35.4")
    assert (raised.value.path, raised.value.reason) == (
        "spec.featureGates",
        f"unrecognized feature gate: {gate}",
    )
    with pytest.raises(SpecError, match=f"unrecognized feature gate: {gate}"):
        judge(body(**spec, kubernetesVersion="1.35"), "v1.36.3")


def test_kube_scheduler_is_judged_with_the_plugins_its_minor_registers() -> None:
    plugins = {"multiPoint": {"enabled": [{"name": "PodGroupPodsCount"}]}}
    spec = {"engine": "KubeScheduler", "profiles": [{"plugins": plugins}]}
    judge(body(**spec), "v1.36.3")
    with pytest.raises(SpecError) as raised:
        judge(body(**spec), "v1.35.4")
    assert (raised.value.path, raised.value.reason) == (
        "spec.profiles[0].plugins.multiPoint.enabled[0].name",
        "plugin 'PodGroupPodsCount' is not in kube-scheduler 1.35: it came in 1.36",
    )


@pytest.mark.parametrize("engine", ["PythonRuntime", "KubeScheduler"])
def test_a_plugin_is_judged_by_its_gates_default_at_the_minor_run(engine: str) -> None:
    # NodeDeclaredFeatures: alpha and off in 1.35 (not among the defaults), beta and on in 1.36.
    plugins = {"filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}
    spec = {"engine": engine, "profiles": [{"plugins": plugins}]}
    assert judge(body(**spec), "v1.36.3").warnings == ()
    assert judge(body(**spec), "v1.35.4").warnings == (
        "spec.profiles[0].plugins.filter.enabled[0].name: plugin 'NodeDeclaredFeatures' does "
        "nothing while feature gate NodeDeclaredFeatures is off",
    )


def test_the_operator_docs_list_each_known_minor_and_its_release() -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "operator.md").read_text()
    rows = dict(re.findall(r"^\| `(1\.[0-9]+)` +\| `(v1\.[0-9]+\.[0-9]+)` +\|$", docs, re.M))
    assert rows == {
        minor: image.rpartition(":")[2] for minor, image in KUBE_SCHEDULER_IMAGES.items()
    }
