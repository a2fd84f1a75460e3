"""The runtime's `--feature-gates` at the pinned release's minor against the real kube-scheduler
of that release: the same gates with the same stages, defaults and locks, and the same
refusals in the same words.
kube-scheduler checks its flags before `--version` prints, so each case is one short run of
the binary; where it reports several errors, their order is Go's map order, so those are
compared as sets."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from cluster import Cluster

from benchmarks.tools import kubernetes_minor
from scheduler_runtime.config import ConfigError
from scheduler_runtime.config.features import known, parse_feature_gates

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / ".venv" / "bin" / "scheduler-runtime"
ERROR = re.compile(r'"command failed" err=(".*")\s*$', re.MULTILINE)
# A gate whose default follows --min-compatibility-version says so after a comma (1.37+).
HELP_GATE = re.compile(
    r"^\s+kube:(\w+)=true\|false \((ALPHA|BETA) - default=(true|false)\)(?:, or .*)?$", re.M
)
SPECIAL = ("AllAlpha", "AllBeta")
MINOR = kubernetes_minor()  # the control plane's
KNOWN = known(MINOR)


def kube_scheduler_refusal(cluster: Cluster, flag: str) -> str | None:
    """kube-scheduler's error for `--feature-gates=flag` (None: it accepts the gates)."""
    done = subprocess.run(
        [str(cluster.bin_dir / "kube-scheduler"), f"--feature-gates={flag}", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if done.returncode == 0:
        assert done.stdout.startswith(f"Kubernetes v{MINOR}."), done.stdout
        return None
    found = ERROR.search(done.stderr)
    assert found, done.stderr
    refusal: str = json.loads(found.group(1))
    return refusal


def runtime_refusal(flag: str) -> str | None:
    try:
        parse_feature_gates(flag, MINOR)
    except ConfigError as error:
        return error.reason
    return None


def errors_of(refusal: str | None) -> set[str] | None:
    """An aggregate's errors, whatever their order ("[a, b]" splits where ", " starts one)."""
    if refusal is None:
        return None
    if not refusal.startswith("["):
        return {refusal}
    inner = refusal[1:-1]
    starts = [m.start() for m in re.finditer(r"(?:^|, )(?=cannot set|\w+ is enabled, but)", inner)]
    bounds = [*starts, len(inner)]
    return {inner[a:b].removeprefix(", ") for a, b in pairwise(bounds)}


def flip(names: list[str]) -> str:
    return ",".join(f"{name}={str(not KNOWN[name].default).lower()}" for name in names)


def test_the_gate_table_is_what_kube_scheduler_registers() -> None:
    """kube_feature_gates/ is current: tools/feature_gates.py reads each release's
    kube-scheduler's own feature gate (a program linked against its app) and finds the same
    tables."""
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "feature_gates.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr


def test_every_gate_the_runtime_knows_is_kube_schedulers_and_takes_its_default(
    cluster: Cluster,
) -> None:
    flag = ",".join(f"{name}={str(spec.default).lower()}" for name, spec in KNOWN.items())
    assert kube_scheduler_refusal(cluster, flag) is None
    assert runtime_refusal(flag) is None


def test_the_gates_kube_scheduler_lists_have_the_same_stage_and_default(cluster: Cluster) -> None:
    """--help lists the alpha and beta gates (GA and deprecated ones are hidden)."""
    shown = subprocess.run(
        [str(cluster.bin_dir / "kube-scheduler"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    listed = {name: (stage, default == "true") for name, stage, default in HELP_GATE.findall(shown)}
    ours = {
        name: (spec.stage, spec.default)
        for name, spec in KNOWN.items()
        if spec.stage in ("ALPHA", "BETA")
    }
    assert len(listed) > 100
    assert listed == ours


def test_locked_gates_are_refused_alike(cluster: Cluster) -> None:
    locked = flip([name for name, spec in KNOWN.items() if spec.locked])
    theirs = errors_of(kube_scheduler_refusal(cluster, locked))
    assert theirs is not None
    assert len(theirs) == sum(spec.locked for spec in KNOWN.values())
    assert errors_of(runtime_refusal(locked)) == theirs


def test_every_unlocked_gate_flipped_breaks_the_same_dependencies(cluster: Cluster) -> None:
    unlocked = flip([n for n, spec in KNOWN.items() if not spec.locked and n not in SPECIAL])
    theirs = errors_of(kube_scheduler_refusal(cluster, unlocked))
    assert theirs, "flipping every gate breaks some dependency"
    assert errors_of(runtime_refusal(unlocked)) == theirs


@pytest.mark.parametrize(
    "flag",
    [
        "NoSuchGate=true",
        "NodeDeclaredFeatures",
        "NodeDeclaredFeatures=maybe",
        "NodeDeclaredFeatures= FALSE ",
        'NodeDeclaredFeatures=é\\"x',
        "GangScheduling=true",
        "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true",
        "NodeDeclaredFeatures=false",
        "kube:NodeDeclaredFeatures=true",
        "wardle:FeatureA=true",
        "AllAlpha=true",
        "AllBeta=false",
        "AllAlpha=true,AllBeta=false",
        "DRAPrioritizedList=false",
        "APIResponseCompression=false,WatchList=false",
    ],
)
def test_refusals_and_acceptances_match(cluster: Cluster, flag: str) -> None:
    assert errors_of(runtime_refusal(flag)) == errors_of(kube_scheduler_refusal(cluster, flag))


@pytest.mark.parametrize("command", ["run", "simulate"])
def test_the_runtimes_commands_say_what_kube_scheduler_says(
    cluster: Cluster, tmp_path: Path, command: str
) -> None:
    flags = ["--feature-gates=GangScheduling=true", f"--emulated-version={MINOR}"]
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    state = tmp_path / "state.yaml"
    state.write_text("")
    done = subprocess.run(
        [str(RUNTIME), command, f"--config={config}", f"--state={state}", *flags]
        if command == "simulate"
        else [str(RUNTIME), command, f"--config={config}", *flags],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    refusal = kube_scheduler_refusal(cluster, "GangScheduling=true")
    assert line.endswith(f"--feature-gates: {refusal}")
