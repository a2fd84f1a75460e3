"""Local processes as the benchmark and the tests run them: a free port to give one, a stop
that cannot hang (shared with the tests), and the CPU time one has used."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

# The components whose CPU a scheduler's requests and watches cost: what it takes from the
# control-plane node's CPUs besides its own.
CONTROL_PLANE = ("kube-apiserver", "etcd")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(process: subprocess.Popen[bytes], timeout: float = 20) -> int:
    """SIGTERM, as the kubelet sends it; SIGKILL when it takes longer than `timeout`.
    Returns the exit status."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    return int(process.returncode)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used (utime + stime of /proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def control_plane_cpu_seconds(kubeconfig: Path) -> float | None:
    """The CPU time the local cluster's API server and etcd have used, from the pid files
    kwokctl keeps beside the kubeconfig; None for a cluster whose processes are not here."""
    pids = kubeconfig.parent / "pids"
    try:
        return sum(cpu_seconds(int((pids / f"{name}.pid").read_text())) for name in CONTROL_PLANE)
    except (OSError, ValueError):
        return None


def control_plane_meter(kubeconfig: Path) -> Callable[[], float | None]:
    """Reads the control plane's CPU now; the function returned gives the CPU seconds it has
    used since (None when either reading could not be taken)."""
    before = control_plane_cpu_seconds(kubeconfig)

    def used() -> float | None:
        now = control_plane_cpu_seconds(kubeconfig)
        return None if before is None or now is None else now - before

    return used
