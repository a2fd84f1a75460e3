"""The live runtime schedules as the API server's Kubernetes minor, read from the real API
server's /version at start, or as `--emulated-version` says; its log and /metrics say which."""

from __future__ import annotations

from collections.abc import Callable

from runtime_support import RuntimeProcess, scheduler_config, unique_scheduler_name

from benchmarks.tools import kubernetes_version


def emulated(runtime: RuntimeProcess) -> str:
    status, text = runtime.get("/metrics", as_admin=True)
    assert status == 200, text
    prefix = "scheduler_runtime_emulated_version"
    [line] = [found for found in text.splitlines() if found.startswith(prefix)]
    return line


def test_the_runtime_emulates_the_api_servers_minor(
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    server = kubernetes_version()
    minor = ".".join(server.removeprefix("v").split(".")[:2])
    runtime = start_runtime(scheduler_config(unique_scheduler_name()))
    assert emulated(runtime) == (
        f'scheduler_runtime_emulated_version_info{{apiserver="{server}",emulated="{minor}"}} 1.0'
    )
    assert f"emulating kube-scheduler {minor} ({server}): the API server is {server}" in (
        runtime.log()
    )


def test_the_flag_chooses_an_older_minor(start_runtime: Callable[..., RuntimeProcess]) -> None:
    server = kubernetes_version()
    runtime = start_runtime(
        scheduler_config(unique_scheduler_name()), args=("--emulated-version=1.35",)
    )
    assert emulated(runtime) == (
        f'scheduler_runtime_emulated_version_info{{apiserver="{server}",emulated="1.35"}} 1.0'
    )
    assert "emulating kube-scheduler 1.35 (v1.35.4): --emulated-version=1.35" in runtime.log()
