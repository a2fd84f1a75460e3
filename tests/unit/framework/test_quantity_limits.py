"""Quantities and weights within what the API server takes: what it refuses is refused by
`simulate` too, naming the object and the field, at once and in one line with exit code 2;
what it stores beyond int64 counts as the most the scheduler counts, never as a number built
in full (memory: "1e+2147483648" hung simulate and grew it past 900 MB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler_runtime.cli import main
from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.framework.quantity import MAX_AMOUNT, QuantityError, amount

DATA = Path(__file__).parents[2] / "data" / "simulate"
CONFIG = DATA / "config.yaml"


def pod(requests: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "schedulerName": "what-if",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
            **spec,
        },
    }


def node(cpu: Any) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "4Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *objects: dict[str, Any]
) -> tuple[int, str, str]:
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(objects))
    # At 1.36, where the runtime follows every default (so stderr holds only what is asked).
    code = main(
        ["simulate", "--config", str(CONFIG), "--state", str(state), "--emulated-version=1.36"]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def preferring(weight: Any) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}
    return {"nodeAffinity": {PREFERRED: [{"weight": weight, "preference": term}]}}


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        # As the API server words them (kubectl create --dry-run=server of the same objects).
        (
            [node("2"), pod({"memory": "-1"})],
            'Pod default/web: spec.containers[0].resources.requests[memory]: Invalid value: "-1":'
            " must be greater than or equal to 0",
        ),
        (
            [node("2"), pod({"cpu": "-110"})],
            'Pod default/web: spec.containers[0].resources.requests[cpu]: Invalid value: "-110":'
            " must be greater than or equal to 0",
        ),
        (
            [node("-5"), pod({})],
            'Node n1: status.allocatable[cpu]: Invalid value: "-5": must be greater than or '
            "equal to 0",
        ),
        # The API server never answers a request holding it (the exponent wraps in int32).
        (
            [node("2"), pod({"memory": "1e+2147483648"})],
            "Pod default/web: spec.containers[0].resources.requests[memory]: Invalid value: "
            '"1e+2147483648": the exponent is out of range',
        ),
        # json: cannot unmarshal number 1e+26 into ... weight of type int32.
        (
            [node("2"), pod({}, affinity=preferring(1e26))],
            f"Pod default/web: spec.affinity.nodeAffinity.{PREFERRED}[0].weight: Invalid value: "
            "1e+26: must be an integer in the range 1-100",
        ),
        (
            [node("2"), pod({}, affinity=preferring(101))],
            f"Pod default/web: spec.affinity.nodeAffinity.{PREFERRED}[0].weight: Invalid value: "
            "101: must be an integer in the range 1-100",
        ),
    ],
)
def test_what_the_api_server_refuses_is_refused_naming_the_object_and_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    objects: list[dict[str, Any]],
    expected: str,
) -> None:
    code, out, err = simulate(tmp_path, capsys, *objects)
    assert (code, out) == (2, "")
    assert err == f"error: {expected}\n"


def test_what_it_stores_beyond_int64_counts_as_the_most_the_scheduler_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The API server stores cpu: 1e999 on a node and a pod; a pod asking for it fits only a
    node that has it."""
    assert amount("cpu", "1e999") == amount("memory", "1e19") == MAX_AMOUNT
    assert amount("memory", "1e2147483647") == MAX_AMOUNT  # never built in full
    assert amount("cpu", "1e-40") == 1
    code, out, err = simulate(tmp_path, capsys, node("1e999"), pod({"cpu": "1e999"}))
    assert (code, err) == (0, "")
    assert out.splitlines()[1].split()[:3] == ["default", "web", "n1"]
    code, out, _ = simulate(tmp_path, capsys, node("64"), pod({"cpu": "1e999"}))
    assert code == 0
    assert "Insufficient cpu" in out


def test_a_negative_quantity_is_no_amount() -> None:
    with pytest.raises(QuantityError, match="must be greater than or equal to 0"):
        amount("memory", "-1")


def test_a_plugin_weight_beyond_int32_is_refused_as_kube_scheduler_refuses_it() -> None:
    """kube-scheduler: json: cannot unmarshal number 3000000000 into ... weight of type int32."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "x",
                "plugins": {
                    "score": {"enabled": [{"name": "TaintToleration", "weight": 3 * 10**9}]}
                },
            }
        ],
    }
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.plugins\.score\.enabled\[0\]\.weight"):
        load_configuration(config)
