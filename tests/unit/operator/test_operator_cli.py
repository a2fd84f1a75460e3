"""`scheduler-operator render` works offline and fails with one line naming the field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scheduler_operator.releases import OFFLINE_APISERVER

SAMPLE = """
apiVersion: scheduling.schedops.io/v1alpha1
kind: SchedulerProfile
metadata:
  name: tenant
spec:
  replicas: 2
"""


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler_operator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def test_render_prints_the_children_as_a_yaml_stream() -> None:
    done = run("render", "-f", "-", stdin=SAMPLE)
    assert done.returncode == 0, done.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(done.stdout)]
    assert kinds[0] == "ServiceAccount"
    assert kinds[-1] == "Deployment"
    assert len(kinds) == 10


def test_invalid_input_is_one_line_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SAMPLE.replace("replicas: 2", "replicas: 0"))
    done = run("render", "-f", str(bad))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: spec.replicas: ")


def test_an_unknown_plugin_for_the_engine_is_refused() -> None:
    stdin = (
        SAMPLE
        + "  engine: KubeScheduler\n  profiles: [{plugins: {score: {enabled: [{name: Nope}]}}}]\n"
    )
    done = run("render", "-f", "-", stdin=stdin)
    assert done.returncode == 2
    assert "spec.profiles[0].plugins.score.enabled[0].name: unknown plugin 'Nope'" in done.stderr


def test_unreadable_and_malformed_files_are_reported_without_a_traceback(tmp_path: Path) -> None:
    missing = run("render", "-f", str(tmp_path / "none.yaml"))
    assert missing.returncode == 2
    assert "No such file" in missing.stderr
    broken = run("render", "-f", "-", stdin="spec: [unclosed")
    assert broken.returncode == 2
    assert "Traceback" not in broken.stderr
    assert broken.stderr.count("\n") == 1


def test_only_a_scheduler_profile_is_rendered(tmp_path: Path) -> None:
    config_map = run(
        "render",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tenant}\ndata: {a: b}\n",
    )
    assert (config_map.returncode, config_map.stdout) == (2, "")
    assert config_map.stderr == (
        "error: kind: 'ConfigMap' is not a SchedulerProfile; expected kind: SchedulerProfile\n"
    )
    other_version = run("render", "-f", "-", stdin=SAMPLE.replace("v1alpha1", "v1beta1"))
    assert other_version.returncode == 2
    assert other_version.stderr == (
        "error: apiVersion: 'scheduling.schedops.io/v1beta1'; expected apiVersion: "
        "scheduling.schedops.io/v1alpha1\n"
    )


def test_a_yaml_error_keeps_the_file_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "f.yaml"
    bad.write_text(
        "apiVersion: scheduling.schedops.io/v1alpha1\nkind: SchedulerProfile\n"
        "metadata: {name: a b: c}\n"
    )
    done = run("render", "-f", str(bad))
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {bad}:3:21: did not find expected ',' or '}}' "
        "(while parsing a flow mapping at line 3, column 11)\n"
    )


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    bomb = "\n".join(lines) + "\n"
    assert len(bomb) < 400
    done = subprocess.run(
        [sys.executable, "-m", "scheduler_operator", "render", "-f", "-"],
        input=bomb,
        capture_output=True,
        text=True,
        check=False,
        timeout=20,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: <stdin>:")
    assert "aliases expand the document by more than 100000 nodes" in done.stderr
    assert done.stderr.count("\n") == 1


def test_deep_nesting_is_one_line_not_a_recursion_error() -> None:
    deep = SAMPLE + "  affinity: " + "{a: " * 500 + "b" + "}" * 500 + "\n"
    done = run("render", "-f", "-", stdin=deep)
    assert done.returncode == 2
    assert done.stderr.startswith("error: <stdin>:")
    assert "nested deeper than 100 levels" in done.stderr
    assert "Recursion" not in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("image: 2001-01-01", "spec.image: a date (2001-01-01) is not a JSON value: quote it"),
        ("image: !!binary aGVsbG8=", "spec.image: binary data (!!binary) is not a JSON value"),
        ("image: !!set {a: null}", "spec.image: a set (!!set) is not a JSON value"),
        ("nodeSelector: {1: a}", "spec.nodeSelector: key 1 is not a string: quote it"),
        ("affinity: {w: .nan}", "spec.affinity.w: nan is not a JSON number"),
    ],
)
def test_yaml_values_json_has_no_type_for_are_one_line_naming_the_field(
    field: str, expected: str
) -> None:
    done = run("render", "-f", "-", stdin=f"{SAMPLE}  {field}\n")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {expected}")
    assert done.stderr.count("\n") == 1


DEAD_CLUSTER = """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: x}}]
"""


@pytest.mark.parametrize(
    ("kubeconfig", "expected"),
    [
        ("dead", "cannot reach the API server at https://127.0.0.1:1: Connection refused"),
        ("missing", "no cluster configuration in kubeconfig "),
    ],
)
def test_run_without_a_reachable_cluster_is_one_line_and_exit_1(
    tmp_path: Path, kubeconfig: str, expected: str
) -> None:
    path = tmp_path / "kubeconfig"
    if kubeconfig == "dead":
        path.write_text(DEAD_CLUSTER)
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    done = subprocess.run(
        [sys.executable, "-m", "scheduler_operator", "run"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**env, "KUBECONFIG": str(path)},
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"scheduler-operator run: {expected}")


def test_render_is_for_the_api_server_version_given() -> None:
    stdin = SAMPLE + "  engine: KubeScheduler\n"
    images = {}
    for given in ((), ("--apiserver-version", "v1.35.4+k3s1")):
        done = run("render", "-f", "-", *given, stdin=stdin)
        assert done.returncode == 0, done.stderr
        deployment = list(yaml.safe_load_all(done.stdout))[-1]
        images[given] = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert list(images.values()) == [
        f"registry.k8s.io/kube-scheduler:{OFFLINE_APISERVER}",
        "registry.k8s.io/kube-scheduler:v1.35.4",
    ]
    too_old = run("render", "-f", "-", "--apiserver-version", "v1.30.0", stdin=stdin)
    assert too_old.returncode == 2
    assert too_old.stderr.startswith("error: spec.kubernetesVersion: unset, so the API server")
