"""The image name and tag are set once (version.py) and agree everywhere they are used."""

from __future__ import annotations

from pathlib import Path

import yaml
from scheduler_operator import version
from scheduler_operator.parsing import parse
from scheduler_operator.releases import OFFLINE_APISERVER
from scheduler_operator.render import render

REPO = Path(__file__).resolve().parents[3]


def test_the_kustomization_deploys_the_image_named_in_version_py() -> None:
    kustomization = yaml.safe_load((REPO / "manifests" / "kustomization.yaml").read_text())
    [image] = kustomization["images"]
    assert f"{image['newName']}:{image['newTag']}" == version.IMAGE


def test_the_runtime_defaults_to_the_same_image() -> None:
    deployment = render(parse({"metadata": {"name": "s"}})).objects[-1]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == version.IMAGE


def test_the_upstream_image_matches_the_pinned_kubernetes_release() -> None:
    pins = dict(
        line.split("=", 1)
        for line in (REPO / "tools" / "versions.env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    # Without a cluster to ask, the operator renders as for one of the pinned release.
    assert pins["KUBERNETES_VERSION"] == OFFLINE_APISERVER
    deployment = render(parse({"metadata": {"name": "s"}, "spec": {"engine": "KubeScheduler"}}))
    container = deployment.objects[-1]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == f"registry.k8s.io/kube-scheduler:{pins['KUBERNETES_VERSION']}"


def test_the_package_version_is_the_image_tag() -> None:
    project = (REPO / "pyproject.toml").read_text()
    assert f'version = "{version.VERSION}"' in project


def test_the_sample_argo_cd_application_pins_this_release() -> None:
    application = yaml.safe_load((REPO / "manifests" / "argocd" / "application.yaml").read_text())
    assert application["spec"]["source"]["targetRevision"] == f"v{version.VERSION}"
