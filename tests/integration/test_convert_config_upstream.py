"""What `scheduler-runtime convert-config` writes, kube-scheduler of the pinned release takes
(it refuses the v1beta2 original)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from cluster import Cluster

OLD = """\
apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
healthzBindAddress: 0.0.0.0:10251
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: image-locality-scheduler
    plugins:
      score:
        disabled: [{name: '*'}]
        enabled: [{name: ImageLocality, weight: 1}]
  - schedulerName: spread
    plugins:
      score:
        enabled: [{name: SelectorSpread}]
"""


def kube_scheduler_takes(cluster: Cluster, config: dict[str, object], workdir: Path) -> str:
    path = workdir / "config.yaml"
    written = workdir / "written.yaml"
    path.write_text(
        yaml.safe_dump({**config, "clientConnection": {"kubeconfig": str(cluster.kubeconfig)}})
    )
    done = subprocess.run(
        [
            str(cluster.bin_dir / "kube-scheduler"),
            "--config",
            str(path),
            "--secure-port",
            "0",
            "--write-config-to",
            str(written),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return "" if done.returncode == 0 and written.exists() else done.stderr


def test_kube_scheduler_takes_the_converted_configuration(cluster: Cluster, tmp_path: Path) -> None:
    original = yaml.safe_load(OLD)
    assert "v1beta2" in kube_scheduler_takes(cluster, original, tmp_path)
    old = tmp_path / "old.yaml"
    old.write_text(OLD)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "scheduler-runtime"), "convert-config", str(old)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert kube_scheduler_takes(cluster, yaml.safe_load(done.stdout), tmp_path) == ""
