"""The first run's build scripts without building anything: tools/build-binaries.sh builds (and
prints) only the components asked for, on a cache whose builds are all complete, and the
progress lines of tools/progress.sh quote each step's measured duration from tools/build-times."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks.tools import REPO, TOOLS, pinned_versions

KUBERNETES_BINARIES = [
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "kubelet",
    "kube-proxy",
]


def component_dirs(cache: Path) -> dict[str, Path]:
    """Each component's cache directory at the pinned versions."""
    v = pinned_versions()
    keys = {
        "kubernetes": "KUBERNETES_VERSION",
        "etcd": "ETCD_VERSION",
        "kwok": "KWOK_VERSION",
        "prometheus": "PROMETHEUS_VERSION",
        "helm": "HELM_VERSION",
        "scheduler-plugins": "SCHEDULER_PLUGINS_VERSION",
        # Built only when named (the tests that run them ask).
        "e2e-scheduling": "KUBERNETES_VERSION",
        "mpi-operator": "MPI_OPERATOR_VERSION",
        "kuberay": "KUBERAY_VERSION",
        "kueue": "KUEUE_VERSION",
        "jobset": "JOBSET_VERSION",
        "lws": "LWS_VERSION",
        "trainer": "TRAINER_VERSION",
        "spark-operator": "SPARK_OPERATOR_VERSION",
        "spark": "SPARK_VERSION",
    }
    return {name: cache / f"{name}-{v[key]}" for name, key in keys.items()}


ON_DEMAND = (
    "e2e-scheduling",
    "mpi-operator",
    "kuberay",
    "kueue",
    "jobset",
    "lws",
    "trainer",
    "spark-operator",
    "spark",
)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A cache in which every component is built (empty files stand for the binaries)."""
    root = tmp_path / "cache"
    for name, directory in component_dirs(root).items():
        directory.mkdir(parents=True)
        (directory / ".complete").touch()
        if name == "kubernetes":
            for binary in KUBERNETES_BINARIES:
                (directory / binary).touch(mode=0o755)
    return root


def run(cache: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBE_VERSION", "PROGRESS_FD")}
    env["SCHEDULER_OPERATOR_CACHE"] = str(cache)
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=60)


def test_the_components_are_listed_in_their_printed_order(cache: Path) -> None:
    done = run(cache, str(TOOLS / "build-binaries.sh"), "--list")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == list(component_dirs(cache))


def test_the_control_plane_is_all_a_cluster_builds(cache: Path) -> None:
    done = run(cache, str(TOOLS / "build-binaries.sh"), "control-plane")
    assert done.returncode == 0, done.stderr
    dirs = component_dirs(cache)
    assert done.stdout.split() == [str(dirs[c]) for c in ("kubernetes", "etcd", "kwok")]
    # One line per cached step, and none for what was not asked for.
    cached = [line for line in done.stderr.splitlines() if ": cached in " in line]
    assert len(cached) == 3
    assert not any(c in done.stderr for c in ("Prometheus", "helm", "scheduler-plugins"))


def test_without_arguments_every_component_the_tests_share_is_built(cache: Path) -> None:
    done = run(cache, str(TOOLS / "build-binaries.sh"))
    assert done.returncode == 0, done.stderr
    shared = [str(d) for name, d in component_dirs(cache).items() if name not in ON_DEMAND]
    assert done.stdout.split() == shared


def test_an_on_demand_component_is_built_only_when_named(cache: Path) -> None:
    done = run(cache, str(TOOLS / "build-binaries.sh"), "kuberay", "e2e-scheduling")
    assert done.returncode == 0, done.stderr
    dirs = component_dirs(cache)
    assert done.stdout.split() == [str(dirs["e2e-scheduling"]), str(dirs["kuberay"])]


def test_the_cluster_script_gives_the_directories_asked_for(cache: Path) -> None:
    done = run(cache, str(TOOLS / "cluster.sh"), "bin", "helm", "kubernetes")
    assert done.returncode == 0, done.stderr
    dirs = component_dirs(cache)
    assert done.stdout.split() == [str(dirs["kubernetes"]), str(dirs["helm"])]


def test_a_kubernetes_build_missing_a_binary_is_not_cached(cache: Path, tmp_path: Path) -> None:
    (component_dirs(cache)["kubernetes"] / "kubelet").unlink()
    # A go that fails at once: the build starts (its progress line) and stops there.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "go").write_text("#!/bin/sh\nexit 1\n")
    (fake / "go").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    env.pop("KUBE_VERSION", None)
    env["SCHEDULER_OPERATOR_CACHE"] = str(cache)
    done = subprocess.run(
        [str(TOOLS / "build-binaries.sh"), "kubernetes"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode != 0
    version = pinned_versions()["KUBERNETES_VERSION"]
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"building Kubernetes {version} binaries: kubelet (about "), first
    assert first.endswith(f" on 2 cores, once; cached in {component_dirs(cache)['kubernetes']})")


def test_an_unknown_component_is_refused_by_name(cache: Path) -> None:
    done = run(cache, str(TOOLS / "build-binaries.sh"), "control-plane", "grafana")
    assert done.returncode == 2
    assert 'unknown component "grafana"' in done.stderr
    assert done.stdout == ""


def measured() -> dict[str, int]:
    """tools/build-times: STEP SECONDS."""
    lines = (TOOLS / "build-times").read_text().splitlines()
    pairs = (line.split() for line in lines if line.strip() and not line.startswith("#"))
    return {step: int(seconds) for step, seconds in pairs}


def test_every_step_that_announces_itself_has_a_measured_duration() -> None:
    sources = [*(TOOLS.glob("*.sh")), REPO / "Makefile"]
    steps = {
        match
        for source in sources
        for match in re.findall(r"progress(?:_begin|\.sh run) ([a-z0-9-]+) \"", source.read_text())
    }
    components = run(Path("/nonexistent"), str(TOOLS / "build-binaries.sh"), "--list")
    assert set(components.stdout.split()) <= steps
    assert steps <= set(measured()), steps - set(measured())


@pytest.mark.parametrize(
    ("seconds", "expected"), [(40, "about 40 s"), (89, "about 89 s"), (720, "about 12 min")]
)
def test_the_progress_lines_quote_the_measured_duration(
    tmp_path: Path, seconds: int, expected: str
) -> None:
    times = tmp_path / "build-times"
    times.write_text(f"# a comment\nother 1\nstep {seconds}\n")
    done = subprocess.run(
        [str(TOOLS / "progress.sh"), "run", "step", "building it", "/the/cache", "echo", "ran"],
        capture_output=True,
        text=True,
        env={**os.environ, "PROGRESS_TIMES": str(times)},
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    begin, end = done.stderr.splitlines()
    assert begin == f"building it ({expected} on 2 cores, once; cached in /the/cache)"
    assert re.fullmatch(r"building it: done in \d+ s", end), end


def test_a_step_without_a_measured_duration_does_not_run(tmp_path: Path) -> None:
    times = tmp_path / "build-times"
    times.write_text("other 1\n")
    done = subprocess.run(
        [str(TOOLS / "progress.sh"), "run", "step", "building it", "/c", "echo", "ran"],
        capture_output=True,
        text=True,
        env={**os.environ, "PROGRESS_TIMES": str(times)},
        check=False,
        timeout=60,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert 'no duration for the step "step"' in done.stderr


def test_the_demo_asks_only_for_what_it_runs() -> None:
    done = subprocess.run(
        ["make", "-n", "-B", "demo"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "tools/demo.sh" in done.stdout
    assert "build-binaries.sh" not in done.stdout
    # Every script the demo runs names the components it needs, all of the control plane's.
    control_plane = {"kubernetes", "etcd", "kwok", "control-plane"}
    for script in ("demo.sh", "cluster.sh", "images.sh", "node.sh"):
        text = (TOOLS / script).read_text()
        calls = re.findall(r"build-binaries\.sh\"?(?: ([a-z -]*))?(?=[)|\n])", text)
        assert calls, script
        for call in calls:  # "" is a call without arguments: every component
            assert call, script
            assert set(call.split()) <= control_plane, (script, call)
