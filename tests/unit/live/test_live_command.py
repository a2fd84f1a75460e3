"""`scheduler-runtime run` refuses bad input with one line and exit code 2, before it touches
any cluster; a kubeconfig it cannot load is one line and exit code 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler_runtime.cli import main


def write(tmp_path: Path, document: object) -> str:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


VALID = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "bin-packer"}],
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["run", *args])
    return code, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({**VALID, "podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds"),
        (
            {
                **VALID,
                "profiles": [
                    {"schedulerName": "a", "plugins": {"score": {"enabled": [{"name": "Nope"}]}}}
                ],
            },
            "Nope",
        ),
        (
            {**VALID, "leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s"}},
            "leaseDuration",
        ),
        ({**VALID, "kind": "Deployment"}, "kind"),
    ],
)
def test_invalid_configuration_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: dict[str, object], fragment: str
) -> None:
    code, lines = run(capsys, "--config", write(tmp_path, document), "--kubeconfig", "/nonexistent")
    assert code == 2
    assert len(lines) == 1
    assert lines[0].startswith("scheduler-runtime run: ")
    assert fragment in lines[0]


def test_missing_configuration_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(capsys, "--config", str(tmp_path / "absent.yaml"))
    assert code == 2
    missing = tmp_path / "absent.yaml"
    assert lines == [
        f"scheduler-runtime run: {missing}: cannot read the file: No such file or directory"
    ]


def test_bad_listen_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(capsys, "--config", write(tmp_path, VALID), "--listen", "10251")
    assert code == 2
    assert lines == [
        "scheduler-runtime run: --listen '10251': expected HOST:PORT with a port from 0 to 65535"
    ]


def test_unloadable_kubeconfig_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    code, lines = run(capsys, "--config", write(tmp_path, VALID), "--kubeconfig", str(kubeconfig))
    assert code == 1
    assert len(lines) == 1
    assert lines[0].startswith("scheduler-runtime run: cannot load the cluster configuration: ")
