"""Local processes as the benchmark and the tests run them: a free port to give one, and a
stop that cannot hang (shared with the tests)."""

from __future__ import annotations

import socket
import subprocess


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
