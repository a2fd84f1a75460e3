"""The CRD comes from the model: the committed file is what `scheduler-operator crd` prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from scheduler_operator.crd import custom_resource_definition

REPO = Path(__file__).resolve().parents[3]
CRD_FILE = REPO / "crds" / "schedulerprofiles.scheduling.schedops.io.yaml"


def test_the_committed_crd_is_what_the_command_prints() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "scheduler_operator", "crd"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == CRD_FILE.read_text()


def walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return []
    found = [(path, node)]
    for key, child in node.get("properties", {}).items():
        found += walk(child, f"{path}.{key}")
    if "items" in node:
        found += walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        found += walk(node["additionalProperties"], f"{path}{{}}")
    return found


def schema() -> dict[str, Any]:
    version = custom_resource_definition()["spec"]["versions"][0]
    openapi: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return openapi


def test_the_schema_is_structural() -> None:
    for path, node in walk(schema()):
        assert not {"$ref", "anyOf", "allOf", "oneOf", "nullable", "title"} & node.keys(), path
        assert node.get("additionalProperties") is not False, path
        assert "type" in node or node.get("x-kubernetes-int-or-string"), path


def test_the_schema_has_defaults_enums_bounds_and_rules() -> None:
    spec = schema()["properties"]["spec"]["properties"]
    assert spec["engine"] == {
        "description": "Which scheduler program runs the generated KubeSchedulerConfiguration.",
        "enum": ["PythonRuntime", "KubeScheduler"],
        "type": "string",
        "default": "PythonRuntime",
    }
    assert spec["replicas"]["minimum"] == 1
    assert spec["replicas"]["default"] == 1
    profile = spec["profiles"]["items"]["properties"]
    points = profile["plugins"]["properties"]
    assert set(points) == {
        "multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
        "score", "reserve", "permit", "preBind", "bind", "postBind", "placementGenerate",
        "placementScore",
    }  # fmt: skip
    weight = points["score"]["properties"]["enabled"]["items"]["properties"]["weight"]
    assert (weight["minimum"], weight["maximum"]) == (1, 100)
    rules = [r["message"] for r in spec["profiles"]["x-kubernetes-validations"]]
    assert "profile schedulerNames must be unique" in rules
    args = profile["pluginConfig"]["items"]["properties"]["args"]
    assert args == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def test_the_resource_is_cluster_scoped_with_status_short_name_and_columns() -> None:
    crd = custom_resource_definition()
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"]["shortNames"] == ["schedprof"]
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    columns = {c["name"]: c for c in version["additionalPrinterColumns"]}
    assert list(columns) == [
        "Schedulers",
        "Engine",
        "Version",
        "Emulated",
        "Ready Replicas",
        "Ready",
        "Reason",
        "Age",
    ]
    assert columns["Reason"]["priority"] == columns["Emulated"]["priority"] == 1
    status = schema()["properties"]["status"]["properties"]
    shown = {"observedGeneration", "conditions", "readyReplicas", "leader", "configHash"}
    assert shown | {"version", "emulatedVersion"} <= set(status)


def test_the_crd_file_is_one_document() -> None:
    assert len(list(yaml.safe_load_all(CRD_FILE.read_text()))) == 1


def test_the_runtimes_plugin_models_keep_the_apis_bounds_and_no_runtime_default() -> None:
    profile = schema()["properties"]["spec"]["properties"]["profiles"]["items"]["properties"]
    for point in profile["plugins"]["properties"].values():
        assert point["x-kubernetes-validations"][0]["message"] == "'*' may only be used in disabled"
        for listed in ("enabled", "disabled"):
            assert point["properties"][listed]["maxItems"] == 64
            plugin = point["properties"][listed]["items"]["properties"]
            # Unset, a weight stays unset: the engine defaults it, not the API server.
            assert plugin["weight"] == {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "description": "Score weight; only score plugins use it.",
            }
            assert (plugin["name"]["minLength"], plugin["name"]["maxLength"]) == (1, 253)
    name = profile["pluginConfig"]["items"]["properties"]["name"]
    assert (name["minLength"], name["maxLength"]) == (1, 253)
