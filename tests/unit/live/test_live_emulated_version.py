"""`scheduler-runtime run` and `simulate` schedule as one Kubernetes minor: `--emulated-version`
when given, else (run) the API server's, read from /version at start; the log and /metrics
say which."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from prometheus_client import generate_latest

from scheduler_runtime.cli import main
from scheduler_runtime.cli import run as run_cli
from scheduler_runtime.config import SchedulerConfiguration
from scheduler_runtime.config.features import unfollowed_defaults
from scheduler_runtime.config.versions import VersionError
from scheduler_runtime.live import run as live_run
from scheduler_runtime.live.kube import ApiError
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.run import RunOptions, apiserver_version

VALID = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "bin-packer"}],
}


class FakeRuntime:
    """Stands in for the live Runtime: keeps what it was started with."""

    started: ClassVar[list[tuple[SchedulerConfiguration, RunOptions]]] = []

    def __init__(self, config: SchedulerConfiguration, options: RunOptions) -> None:
        self.started.append((config, options))
        self.lost_lease = False

    def run(self) -> None:
        pass


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[SchedulerConfiguration, RunOptions]]:
    FakeRuntime.started = []
    monkeypatch.setattr(run_cli, "Runtime", FakeRuntime)
    return FakeRuntime.started


def serve(monkeypatch: pytest.MonkeyPatch, git_version: str | Exception) -> list[bool]:
    """The API server's /version, as run_command reads it; returns each call's `required`."""
    calls: list[bool] = []

    def fake(kubeconfig: str | None, *, required: bool) -> str:
        calls.append(required)
        if isinstance(git_version, Exception):
            raise git_version
        return git_version

    monkeypatch.setattr(run_cli, "apiserver_version", fake)
    return calls


def config_file(tmp_path: Path) -> str:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(VALID))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["run", *args])
    return code, capsys.readouterr().err.splitlines()


def test_run_emulates_the_api_servers_minor_and_says_so(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    started: list[tuple[SchedulerConfiguration, RunOptions]],
) -> None:
    calls = serve(monkeypatch, "v1.35.4-eks-1a2b")
    caplog.set_level(logging.INFO)
    flags = (
        "--config",
        config_file(tmp_path),
        "--feature-gates=GangScheduling=true,GenericWorkload=true",
    )
    code, _ = run(capsys, *flags)
    assert (code, calls) == (0, [True])
    [(config, options)] = started
    assert config.feature_gates.version == "1.35"
    assert "NodeDeclaredFeatures" not in config.profiles[0].plugin_names  # alpha in 1.35
    assert options.emulation is not None
    assert (options.emulation.version, options.emulation.apiserver) == ("1.35", "v1.35.4-eks-1a2b")
    assert "emulating kube-scheduler 1.35 (v1.35.4): the API server is v1.35.4-eks-1a2b" in (
        caplog.messages
    )


def test_a_newer_api_server_gets_the_newest_minor_and_a_warning_in_the_log(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    started: list[tuple[SchedulerConfiguration, RunOptions]],
) -> None:
    serve(monkeypatch, "v1.38.0-beta.0")
    code, _ = run(capsys, "--config", config_file(tmp_path))
    assert code == 0
    assert started[0][0].feature_gates.version == "1.37"
    assert started[0][0].profiles[0].enabled("filter")[0] == "NodeName"  # 1.37's order
    warning, *gates = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith("the API server is v1.38.0-beta.0, newer than Kubernetes 1.37")
    # Every gate on at 1.37 is followed: none is named.
    assert gates == unfollowed_defaults(started[0][0].feature_gates) == []


def test_the_flag_chooses_without_needing_the_api_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    started: list[tuple[SchedulerConfiguration, RunOptions]],
) -> None:
    calls = serve(monkeypatch, "")  # not read: the flag decides
    code, _ = run(capsys, "--config", config_file(tmp_path), "--emulated-version=kube=1.36")
    assert (code, calls) == (0, [False])
    config, options = started[0]
    assert config.feature_gates.version == "1.36"
    assert options.emulation is not None
    assert (options.emulation.version, options.emulation.apiserver) == ("1.36", "")


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ["--emulated-version=1.38"],
            "--emulated-version: emulation version 1.38 is not between [1.35, 1.37.0]",
        ),
        (
            ["--emulated-version=1.37", "--feature-gates=GangScheduling=true"],
            "--feature-gates: unrecognized feature gate: GangScheduling",
        ),
        # Refused by every minor: refused before the API server is asked, in 1.37's words.
        (
            ["--feature-gates=NoSuchGate=true"],
            "--feature-gates: unrecognized feature gate: NoSuchGate",
        ),
    ],
)
def test_what_the_flags_cannot_give_is_refused_before_the_cluster(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    started: list[tuple[SchedulerConfiguration, RunOptions]],
    flags: list[str],
    line: str,
) -> None:
    calls = serve(monkeypatch, "v1.36.3")
    code, lines = run(capsys, "--config", config_file(tmp_path), *flags)
    assert (code, lines, calls, started) == (2, [f"scheduler-runtime run: {line}"], [], [])


def test_gates_the_api_servers_minor_does_not_know_are_refused_once_it_is_read(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    started: list[tuple[SchedulerConfiguration, RunOptions]],
) -> None:
    serve(monkeypatch, "v1.37.2")
    code, lines = run(
        capsys, "--config", config_file(tmp_path), "--feature-gates=GangScheduling=true"
    )
    assert (code, started) == (2, [])
    assert lines == [
        "scheduler-runtime run: --feature-gates: unrecognized feature gate: GangScheduling"
    ]


def test_an_api_server_too_old_is_one_line_and_exit_1(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    started: list[tuple[SchedulerConfiguration, RunOptions]],
) -> None:
    serve(monkeypatch, "v1.34.2")
    code, lines = run(capsys, "--config", config_file(tmp_path))
    assert (code, started) == (1, [])
    assert lines == [
        "scheduler-runtime run: the API server is v1.34.2: the scheduler runtime emulates "
        "Kubernetes 1.35 to 1.37 (emulation version 1.34 is not between [1.35, 1.37.0])"
    ]
    serve(monkeypatch, VersionError("cannot read the API server's version (x)"))
    code, lines = run(capsys, "--config", config_file(tmp_path))
    assert (code, lines) == (1, ["scheduler-runtime run: cannot read the API server's version (x)"])


class FakeKube:
    """Answers /version after `failures` failed attempts."""

    def __init__(self, failures: list[Exception], answer: dict[str, Any]) -> None:
        self.failures = failures
        self.answer = answer
        self.asked = 0

    def get(self, path: str, timeout: float | None = None) -> dict[str, Any]:
        assert path == "/version"
        self.asked += 1
        if self.failures:
            raise self.failures.pop(0)
        return self.answer


def fake_cluster(monkeypatch: pytest.MonkeyPatch, kube: FakeKube) -> list[float]:
    monkeypatch.setattr(live_run, "load_client", lambda kubeconfig: object())
    monkeypatch.setattr(live_run, "Kube", lambda api: kube)
    return []


def test_the_api_servers_version_is_tried_again_while_it_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kube = FakeKube(
        [ConnectionRefusedError("refused"), ApiError(503, "ServiceUnavailable", "")],
        {"gitVersion": "v1.36.3"},
    )
    slept = fake_cluster(monkeypatch, kube)
    assert apiserver_version(None, required=True, sleep=slept.append) == "v1.36.3"
    assert (kube.asked, slept) == (3, [2.0, 4.0])


def test_an_api_server_that_never_answers_is_a_version_error_or_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kube = FakeKube([OSError("down")] * 9, {})
    slept = fake_cluster(monkeypatch, kube)
    with pytest.raises(VersionError) as caught:
        apiserver_version(None, required=True, sleep=slept.append)
    assert str(caught.value) == (
        "cannot read the API server's version (OSError: down): --emulated-version chooses the "
        "Kubernetes minor without it"
    )
    assert (kube.asked, slept) == (5, [2.0, 4.0, 8.0, 16.0])
    assert apiserver_version(None, required=False, sleep=slept.append) == ""
    assert kube.asked == 6  # once only when not required
    empty = FakeKube([], {"major": "1"})
    fake_cluster(monkeypatch, empty)
    assert apiserver_version(None, required=False) == ""


def test_metrics_say_which_minor_is_emulated() -> None:
    metrics = SchedulerMetrics()
    metrics.emulating("1.36", "v1.36.3")
    text = generate_latest(metrics.registry).decode()
    assert (
        'scheduler_runtime_emulated_version_info{apiserver="v1.36.3",emulated="1.36"} 1.0' in text
    )


STATE = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec: {containers: [{name: c, image: i}]}
"""


def simulate(capsys: pytest.CaptureFixture[str], tmp_path: Path, *flags: str) -> tuple[int, str]:
    state = tmp_path / "state.yaml"
    state.write_text(STATE)
    code = main(["simulate", "--config", config_file(tmp_path), "--state", str(state), *flags])
    return code, capsys.readouterr().err


def test_simulate_takes_the_flag_and_defaults_to_the_newest_minor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = simulate(
        capsys, tmp_path, "--feature-gates=GangScheduling=true,GenericWorkload=true"
    )
    assert (code, err) == (2, "error: --feature-gates: unrecognized feature gate: GangScheduling\n")
    flags = ("--emulated-version=1.36", "--feature-gates=GangScheduling=true,GenericWorkload=true")
    code, err = simulate(capsys, tmp_path, *flags)
    assert (code, err) == (0, "")
    code, err = simulate(capsys, tmp_path, "--emulated-version=1.34")
    assert (code, err) == (
        2,
        "error: --emulated-version: [emulation version 1.34 is not between [1.35, 1.37.0], "
        "minCompatibilityVersion version 1.35 is not between [1.35, 1.34]]\n",
    )
