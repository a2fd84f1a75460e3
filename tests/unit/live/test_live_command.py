"""`scheduler-runtime run` refuses bad input with one line and exit code 2, before it touches
any cluster; a kubeconfig it cannot load is one line and exit code 1."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from scheduler_runtime.cli import main
from scheduler_runtime.cli import run as run_module
from scheduler_runtime.cli.run import arguments, cluster_kubeconfig, serving_options
from scheduler_runtime.live.run import RunOptions
from scheduler_runtime.live.serving import ServingOptions


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


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--secure-port", "70000"], "--secure-port 70000: expected a port from 0 to 65535"),
        (["--tls-cert-file", "x.crt"], "--tls-cert-file and --tls-private-key-file go together"),
        (
            ["--authorization-always-allow-paths", "/healthz,/a*/b"],
            "--authorization-always-allow-paths: only trailing * allowed in '/a*/b'",
        ),
    ],
)
def test_bad_serving_flags_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    code, lines = run(capsys, "--config", write(tmp_path, VALID), *flags)
    assert code == 2
    assert lines == [f"scheduler-runtime run: {message}"]


def parsed(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    arguments(parser)
    return parser.parse_args(["--config", "c.yaml", *flags])


def test_the_secure_port_is_on_by_default_and_the_plain_port_off() -> None:
    args = parsed()
    assert args.listen is None
    options = serving_options(args)
    assert options == ServingOptions()
    assert (options.secure_port, options.bind_address) == (10259, "0.0.0.0")
    assert options.always_allow_paths == ("/healthz", "/readyz", "/livez")
    assert (options.token_cache_ttl, options.authorized_ttl, options.unauthorized_ttl) == (
        10.0,
        10.0,
        10.0,
    )


def test_serving_flags_read_as_kube_schedulers() -> None:
    options = serving_options(
        parsed(
            "--secure-port=0",
            "--bind-address=127.0.0.1",
            "--cert-dir=/var/run/certs",
            "--authentication-kubeconfig=authn.yaml",
            "--authorization-kubeconfig=authz.yaml",
            "--authentication-token-webhook-cache-ttl=1m30s",
            "--authorization-webhook-cache-authorized-ttl=500ms",
            "--authorization-webhook-cache-unauthorized-ttl=0",
            "--authorization-always-allow-paths=/healthz, /metrics,/debug/*",
        )
    )
    assert options.secure_port == 0
    assert options.cert_dir == "/var/run/certs"
    assert (options.authentication_kubeconfig, options.authorization_kubeconfig) == (
        "authn.yaml",
        "authz.yaml",
    )
    assert (options.token_cache_ttl, options.authorized_ttl, options.unauthorized_ttl) == (
        90.0,
        0.5,
        0.0,
    )
    assert options.always_allow_paths == ("/healthz", "/metrics", "/debug/*")


@pytest.mark.parametrize("text", ["10", "1x", "s", "-1s", "1s2"])
def test_a_cache_ttl_is_a_go_duration(text: str) -> None:
    with pytest.raises(SystemExit):
        parsed(f"--authentication-token-webhook-cache-ttl={text}")


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ["--feature-gates=NoSuchGate=true"],
            "--feature-gates: unrecognized feature gate: NoSuchGate",
        ),
        (
            ["--feature-gates=GangScheduling=true"],
            "--feature-gates: GangScheduling is enabled, but depends on features that are "
            "disabled: [GenericWorkload]",
        ),
        (
            ["--feature-gates=GenericWorkload=true", "--feature-gates=kube:GangScheduling=true"],
            "--feature-gates: set kube feature gates with default empty prefix or kube: prefix "
            "consistently, do not mix use",
        ),
        (
            ["--feature-gates=TaintTolerationComparisonOperators=true"],
            "--feature-gates: TaintTolerationComparisonOperators=true is not supported by the "
            "scheduler runtime: it schedules as kube-scheduler v1.36.3 does with "
            "TaintTolerationComparisonOperators=false, the default",
        ),
    ],
)
def test_feature_gates_are_refused_in_one_line_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], line: str
) -> None:
    # The gates of 1.36, the minor these refusals are of.
    code, lines = run(capsys, "--config", write(tmp_path, VALID), "--emulated-version=1.36", *flags)
    assert code == 2
    assert lines == [f"scheduler-runtime run: {line}"]


@pytest.mark.parametrize(
    ("flag", "configured", "chosen"),
    [
        (None, "", None),  # neither: the pod's in-cluster configuration
        ("flag.yaml", "", "flag.yaml"),
        (None, "file.yaml", "file.yaml"),
        ("flag.yaml", "file.yaml", "file.yaml"),  # kube-scheduler ignores --kubeconfig then
    ],
)
def test_cluster_kubeconfig_prefers_the_configurations_client_connection(
    flag: str | None, configured: str, chosen: str | None
) -> None:
    assert cluster_kubeconfig(flag, configured) == chosen


class StoppedError(Exception):
    """Ends a run before it starts a runtime."""


@pytest.mark.parametrize("flags", [[], ["--kubeconfig", "/flag/kubeconfig"]])
@pytest.mark.parametrize("emulated", [[], ["--emulated-version=1.36"]])
def test_client_connection_kubeconfig_reaches_the_cluster_with_config_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    flags: list[str],
    emulated: list[str],
) -> None:
    """`--config` alone, as kube-scheduler is run: the API server's version and the runtime
    both come from clientConnection.kubeconfig (it was parsed and ignored, and the run failed
    with `Service host/port is not set.`); a --kubeconfig beside it is ignored, with a warning."""
    asked: list[str | None] = []

    def version(kubeconfig: str | None, *, required: bool) -> str:
        asked.append(kubeconfig)
        return "v1.36.3"

    def runtime(config: object, options: RunOptions) -> None:
        asked.append(options.kubeconfig)
        raise StoppedError

    monkeypatch.setattr(run_module, "apiserver_version", version)
    monkeypatch.setattr(run_module, "Runtime", runtime)
    document = {**VALID, "clientConnection": {"kubeconfig": "/file/kubeconfig"}}
    with pytest.raises(StoppedError):
        main(["run", "--config", write(tmp_path, document), *emulated, *flags])
    assert asked == ["/file/kubeconfig", "/file/kubeconfig"]
    ignored = [r.getMessage() for r in caplog.records if "--kubeconfig" in r.getMessage()]
    assert ignored == (
        [
            "--kubeconfig /flag/kubeconfig is ignored: the configuration's "
            "clientConnection.kubeconfig /file/kubeconfig is used, as kube-scheduler does"
        ]
        if flags
        else []
    )
