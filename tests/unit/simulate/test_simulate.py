"""`scheduler-runtime simulate`: state files in, placements in queue order out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_runtime.cli import main
from scheduler_runtime.config import FeatureGates, documents, load_configuration_file
from scheduler_runtime.config.features import unfollowed_defaults
from scheduler_runtime.simulate import Simulation, StateError, read_state, simulate

DATA = Path(__file__).parents[2] / "data" / "simulate"
CONFIG = DATA / "config.yaml"
STATE = DATA / "state.yaml"


# What simulate says at the newest minor about the gates the runtime does not follow there
# (test_the_gates_the_newest_minor_turns_on_unfollowed_are_named), left out of `err` below.
UNFOLLOWED = "".join(f"warning: {line}\n" for line in unfollowed_defaults(FeatureGates()))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.replace(UNFOLLOWED, "", 1)


def test_no_gate_the_newest_minor_turns_on_goes_unfollowed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--config", str(CONFIG), "--state", str(STATE)]) == 0
    assert capsys.readouterr().err == ""
    flags = ["--config", str(CONFIG), "--state", str(STATE), "--emulated-version=1.36"]
    assert main(["simulate", *flags]) == 0
    assert capsys.readouterr().err == ""


def test_json_output_in_scheduling_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--config", str(CONFIG), "--state", str(STATE), "-o", "json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    explanations = [placement.pop("explanation") for placement in document["placements"]]
    assert [e["pod"] for e in explanations] == ["default/web", "jobs/batch", "default/too-big"]
    assert document == {
        "placements": [
            {"namespace": "default", "name": "web", "node": "small", "message": None},
            {"namespace": "jobs", "name": "batch", "node": "big", "message": None},
            {
                "namespace": "default",
                "name": "too-big",
                "node": None,
                "message": "0/2 nodes are available: 1 Insufficient cpu, "
                "1 node(s) had untolerated taint(s). "
                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                "scheduling.",
            },
        ]
    }


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--config", str(CONFIG), "--state", str(STATE), "--seed", "3")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "NODE", "MESSAGE"]
    assert lines[1].split() == ["default", "web", "small"]
    assert lines[3].startswith("default     too-big   <none>   0/2 nodes are available:")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--config", "missing.yaml", "--state", str(STATE)], "missing.yaml: cannot read"),
        (["--config", str(STATE), "--state", str(STATE)], "apiVersion:"),
        (["--config", str(CONFIG), "--state", "missing.yaml"], "missing.yaml: cannot read"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("error: ")
    assert expected in err


def test_bad_quantity_names_the_pod(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(
        yaml.safe_dump(
            {
                "kind": "Pod",
                "metadata": {"name": "bad", "namespace": "ns"},
                "spec": {
                    "schedulerName": "what-if",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}],
                },
            }
        )
    )
    code, _, err = run(capsys, "--config", str(CONFIG), "--state", str(state))
    assert code == 2
    assert err.startswith(
        "error: Pod ns/bad: spec.containers[0].resources.requests[cpu]: invalid quantity 'lots'"
    )


def nodes_and_pods(node_count: int, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    nodes = [
        {
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
        }
        for i in range(node_count)
    ]
    return nodes + pods


def pending(name: str, cpu: str, priority: int = 0, created: str = "2026-01-01T00:00:00Z") -> Any:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
        "spec": {
            "schedulerName": "what-if",
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def test_each_placement_counts_for_the_next_and_priority_goes_first() -> None:
    config = load_configuration_file(CONFIG)
    objects = nodes_and_pods(
        1,
        [
            pending("first-come", "1500m", created="2026-01-01T00:00:00Z"),
            pending("important", "1500m", priority=100, created="2026-01-01T00:00:05Z"),
        ],
    )
    placements = simulate(config, objects, seed=1)
    assert [(p.name, p.node) for p in placements] == [("important", "n0"), ("first-come", None)]
    assert placements[1].message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_pods_of_other_schedulers_bound_and_finished_pods() -> None:
    config = load_configuration_file(CONFIG)
    done = pending("done", "2")
    done["spec"]["nodeName"] = "n0"
    done["status"] = {"phase": "Succeeded"}
    other = pending("other", "1")
    other["spec"]["schedulerName"] = "default-scheduler"
    gated = pending("gated", "1")
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    placements = simulate(config, nodes_and_pods(1, [done, other, gated, pending("p", "2")]))
    assert [(p.name, p.node) for p in placements] == [("p", "n0")]


def test_same_seed_same_placements() -> None:
    config = load_configuration_file(CONFIG)
    objects = nodes_and_pods(5, [pending(f"p{i}", "100m") for i in range(20)])
    first = simulate(config, objects, seed=11)
    assert first == simulate(config, objects, seed=11)
    assert len({p.node for p in first}) > 1


def test_yaml_stream_and_typed_lists(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    node_list = {"kind": "NodeList", "items": [nodes_and_pods(1, [])[0] | {"kind": None}]}
    del node_list["items"][0]["kind"]
    state.write_text(yaml.safe_dump_all([node_list, pending("p", "1")]))
    objects = read_state(state)
    assert [o["kind"] for o in objects] == ["Node", "Pod"]
    state.write_text("- a\n- b\n")
    with pytest.raises(StateError, match="document 0 is not an object"):
        read_state(state)


def test_preemption_makes_room_and_the_pod_is_placed_on_retry() -> None:
    config = load_configuration_file(CONFIG)
    victim = pending("victim", "2")
    victim["spec"]["nodeName"] = "n0"
    placements = simulate(config, nodes_and_pods(1, [victim, pending("vip", "2", priority=1000)]))
    assert [(p.name, p.node, p.message) for p in placements] == [("vip", "n0", None)]


objects = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["kind", "metadata", "spec", "status", "name", "items", "containers"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(documents=st.lists(objects, max_size=3))
def test_any_state_file_gives_placements_or_one_error_line(
    documents: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(documents))
    capsys.readouterr()
    code, out, err = run(capsys, "--config", str(CONFIG), "--state", str(state), "-o", "json")
    if code == 0:
        assert "placements" in json.loads(out)
    else:
        assert code == 2
        assert err.count("\n") == 1


def test_step_runs_one_cycle_at_a_time() -> None:
    simulation = Simulation(load_configuration_file(CONFIG), seed=1)
    simulation.load(nodes_and_pods(2, [pending("a", "1"), pending("b", "1")]))
    assert simulation.step()
    assert [p.name for p in simulation.placements.values()] == ["a"]
    assert simulation.step()
    assert not simulation.step()
    assert [p.name for p in simulation.run()] == ["a", "b"]


def test_yaml_errors_name_the_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "state.yaml"
    broken.write_text("kind: Node\nmetadata: {name: n1\n")
    code, _, err = run(capsys, "--config", str(CONFIG), "--state", str(broken))
    assert code == 2
    assert err == (
        f"error: {broken}:3:1: did not find expected ',' or '}}' "
        "(while parsing a flow mapping at line 2, column 11)\n"
    )
    bad_config = tmp_path / "config.yaml"
    bad_config.write_text("apiVersion: [\n")
    code, _, err = run(capsys, "--config", str(bad_config), "--state", str(STATE))
    assert code == 2
    assert err.startswith(f"error: {bad_config}:2:1: ")
    assert "<unicode string>" not in err


@pytest.mark.parametrize("which", ["--config", "--state"])
def test_alias_bombs_and_deep_nesting_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    hostile = {
        "bomb.yaml": "\n".join(lines) + "\n",
        "deep.yaml": "kind: Pod\nspec: " + "{a: " * 500 + "b" + "}" * 500 + "\n",
    }
    for name, text in hostile.items():
        path = tmp_path / name
        path.write_text(text)
        files = {"--config": str(CONFIG), "--state": str(STATE), which: str(path)}
        code, out, err = run(capsys, *(item for pair in files.items() for item in pair))
        assert (code, out) == (2, "")
        assert err.startswith(f"error: {path}:")
        assert err.count("\n") == 1
        assert "Recursion" not in err


def scheduler_profile(spec: str) -> str:
    return (
        "apiVersion: scheduling.schedops.io/v1alpha1\nkind: SchedulerProfile\n"
        "metadata: {name: what-if}\n" + spec
    )


def test_a_scheduler_profile_is_taken_for_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(scheduler_profile("spec:\n  replicas: 2\n"))
    code, out, err = run(capsys, "--config", str(profile), "--state", str(STATE), "-o", "json")
    assert (code, err) == (0, "")
    placed = {p["name"]: p["node"] for p in json.loads(out)["placements"]}
    assert placed == {"web": "small", "batch": "big", "too-big": None}
    profile.write_text(
        scheduler_profile("spec:\n  profiles:\n  - plugins: {score: {enabled: [{name: Nope}]}}\n")
    )
    code, out, err = run(capsys, "--config", str(profile), "--state", str(STATE))
    assert (code, out) == (2, "")
    assert err == (
        f"error: {profile}: spec.profiles[0].plugins.score.enabled[0].name: unknown plugin 'Nope'\n"
    )


BAD_EXPRESSION = {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (
            {
                "affinity": {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": BAD_EXPRESSION,
                            }
                        ]
                    }
                }
            },
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".labelSelector",
        ),
        (
            {
                "affinity": {
                    "podAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 1,
                                "podAffinityTerm": {
                                    "topologyKey": "zone",
                                    "namespaceSelector": BAD_EXPRESSION,
                                },
                            }
                        ]
                    }
                }
            },
            "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            ".podAffinityTerm.namespaceSelector",
        ),
        (
            {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": BAD_EXPRESSION,
                    }
                ]
            },
            "spec.topologySpreadConstraints[0].labelSelector",
        ),
    ],
)
def test_a_bad_selector_operator_names_the_object_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: dict[str, Any], field: str
) -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"schedulerName": "what-if", "containers": [{"name": "c"}], **spec},
    }
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all([*nodes_and_pods(1, []), pod]))
    code, out, err = run(capsys, "--config", str(CONFIG), "--state", str(state))
    assert (code, out) == (2, "")
    assert err == (
        f"error: Pod default/web: {field}.matchExpressions[0].operator: 'Equals' is not a "
        "valid selector operator\n"
    )


def test_a_state_is_read_by_libyaml_or_the_c_json_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What makes a large state fast to load (the timings are the benchmark's): PyYAML's
    pure-Python scanner never runs, and JSON goes through the standard library's C decoder."""

    def slow_path(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("PyYAML's pure-Python scanner was used")

    monkeypatch.setattr(yaml.scanner.Scanner, "check_token", slow_path)
    monkeypatch.setattr(yaml.scanner.Scanner, "get_token", slow_path)
    objects = read_state(STATE)
    assert {obj["kind"] for obj in objects} >= {"Node", "Pod"}
    listed = tmp_path / "state.json"
    items = [{"metadata": {"name": f"n{i}"}} for i in range(3)]
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": items}))
    calls: list[bytes] = []
    original = json.loads
    assert json.scanner.c_make_scanner is not None  # type: ignore[attr-defined]

    def loads(data: bytes, **kwargs: Any) -> Any:
        calls.append(data)
        return original(data, **kwargs)

    monkeypatch.setattr(documents.json, "loads", loads)
    assert [obj["kind"] for obj in read_state(listed)] == ["Node"] * 3
    assert len(calls) == 1


def test_feature_gates_change_the_default_plugins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pod that needs a node feature no node declares: NodeDeclaredFeatures (on by default)
    keeps it off every node; with the gate off (and the gates that depend on it), it fits."""
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    state = tmp_path / "state.yaml"
    state.write_text(
        yaml.safe_dump_all(
            [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": "plain"},
                    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
                },
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "restarts-all", "namespace": "default"},
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "image": "busybox",
                                "restartPolicy": "Never",
                                "restartPolicyRules": [rule],
                            }
                        ]
                    },
                },
            ]
        )
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    code, out, err = run(capsys, "--config", str(config), "--state", str(state), "-o", "json")
    assert (code, err) == (0, "")
    [placement] = json.loads(out)["placements"]
    assert placement["node"] is None
    assert placement["message"].startswith(
        "0/1 nodes are available: 1 node(s) didn't match Pod's required features."
    )
    off = (
        "--feature-gates=NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
        "InPlacePodLevelResourcesVerticalScaling=false,"
        "InPlacePodVerticalScalingInitContainers=false,RestartAllContainersOnContainerExits=false"
    )
    # NodeDeclaredFeatures is locked on from 1.37: turning it off is 1.36's.
    code, out, err = run(
        capsys,
        "--config",
        str(config),
        "--state",
        str(state),
        "-o",
        "json",
        off,
        "--emulated-version=1.36",
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["placements"][0]["node"] == "plain"


def test_a_refused_feature_gate_is_one_line_without_the_config_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "--config", str(CONFIG), "--state", str(STATE), "--feature-gates=Nope=true"
    )
    assert (code, out) == (2, "")
    assert err == "error: --feature-gates: unrecognized feature gate: Nope\n"


def test_a_plugin_named_while_its_gate_is_off_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"plugins": {"filter": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}
                ],
            }
        )
    )
    off = (
        "--feature-gates=NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
        "InPlacePodLevelResourcesVerticalScaling=false,"
        "InPlacePodVerticalScalingInitContainers=false,RestartAllContainersOnContainerExits=false"
    )
    code, _, err = run(
        capsys, "--config", str(config), "--state", str(STATE), off, "--emulated-version=1.36"
    )
    assert code == 0
    assert err == (
        f"warning: {config}: profiles[0].plugins.filter.enabled[0].name: plugin "
        "'NodeDeclaredFeatures' does nothing while feature gate NodeDeclaredFeatures is off\n"
    )
