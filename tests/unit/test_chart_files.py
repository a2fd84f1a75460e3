"""The Helm chart and the monitoring files, without a cluster or a binary: the files the chart
shares with the kustomize tree are current copies, the chart names the image of version.py, and
the dashboard is what tools/dashboard.py declares, well formed. (Rendering and comparing the
chart with kustomize's tree: tests/integration/test_helm_chart.py.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from scheduler_operator import version

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "scheduler-operator"
MONITORING = REPO / "manifests" / "components" / "monitoring"


@pytest.mark.parametrize("tool", ["chart.py", "dashboard.py"])
def test_the_written_files_are_current(tool: str) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / tool), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_chart_copies_hold_what_their_sources_hold() -> None:
    crd = "schedulerprofiles.scheduling.schedops.io.yaml"
    assert (CHART / "crds" / crd).read_text() == (REPO / "crds" / crd).read_text()
    rule = yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())
    assert yaml.safe_load((CHART / "files" / "alert-rules.yaml").read_text()) == rule["spec"]
    podgroups = (
        REPO / "manifests" / "components" / "podgroup-crd" / "podgroups.scheduling.x-k8s.io.yaml"
    )
    assert (CHART / "files" / podgroups.name).read_text() == podgroups.read_text()
    samples = sorted(p.name for p in (REPO / "manifests" / "samples").glob("*.yaml"))
    assert sorted(p.name for p in (CHART / "files" / "samples").glob("*")) == samples


def test_the_chart_installs_the_image_of_version_py() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert chart["appVersion"] == version.VERSION
    assert values["image"]["repository"] == version.IMAGE_REPOSITORY
    assert values["image"]["tag"] == ""  # the appVersion


def test_every_value_is_declared_in_the_schema() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def undeclared(given: dict[str, Any], declared: dict[str, Any], at: str) -> list[str]:
        declared = (
            schema["definitions"][declared["$ref"].rsplit("/", 1)[1]]
            if ("$ref" in declared)
            else declared
        )
        if declared.get("type") != "object" or "properties" not in declared:
            return []
        missing = [f"{at}.{k}" for k in given if k not in declared["properties"]]
        return missing + [
            name
            for key, value in given.items()
            if isinstance(value, dict) and key in declared["properties"]
            for name in undeclared(value, declared["properties"][key], f"{at}.{key}")
        ]

    assert undeclared(values, schema, "") == []


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((MONITORING / "dashboard.json").read_text())
    return loaded


def test_the_dashboard_panels_are_laid_out_without_overlap() -> None:
    panels = dashboard()["panels"]
    assert [p["id"] for p in panels] == list(range(1, len(panels) + 1))
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24
        taken = {
            (x, y)
            for x in range(grid["x"], grid["x"] + grid["w"])
            for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not cells & taken, panel["title"]
        cells |= taken


def test_every_panel_queries_the_chosen_data_source_and_names_its_job() -> None:
    variables = {v["name"] for v in dashboard()["templating"]["list"]}
    assert variables == {"datasource", "namespace", "schedulerprofile"}
    for panel in dashboard()["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}"
            assert re.search(r'job="scheduler-(operator-)?metrics"', target["expr"]), target


def test_the_dashboard_config_map_carries_grafana_s_sidecar_label() -> None:
    kustomization = yaml.safe_load((MONITORING / "kustomization.yaml").read_text())
    [generator] = kustomization["configMapGenerator"]
    assert generator["options"]["labels"]["grafana_dashboard"] == "1"
    assert generator["files"] == ["scheduler-operator.json=dashboard.json"]


def test_the_argo_cd_helm_application_installs_this_release_of_the_chart() -> None:
    application = yaml.safe_load(
        (REPO / "manifests" / "argocd" / "application-helm.yaml").read_text()
    )
    source = application["spec"]["source"]
    assert source["targetRevision"] == f"v{version.VERSION}"
    assert (REPO / source["path"] / "Chart.yaml").is_file()
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert set(source["helm"]["valuesObject"]) <= set(schema["properties"])
