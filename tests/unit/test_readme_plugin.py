"""The README's ten-line plugin works as the README says: its package, installed with the entry
point it shows, is found by `scheduler-runtime simulate` and decides where a pod goes under the
SchedulerProfile it shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SECTION = "## A plugin in ten lines"
ENTRY_POINT_GROUP = "scheduler_runtime.plugins"

NODES = """
apiVersion: v1
kind: Node
metadata: {name: big, labels: {kubernetes.io/hostname: big}}
status: {allocatable: {cpu: "64", memory: 256Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: small, labels: {kubernetes.io/hostname: small, example.com/spot: "SPOT"}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  schedulerName: SCHEDULER
  containers: [{name: web, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def readme_blocks() -> dict[str, str]:
    """The section's code blocks by language (one each: python, toml, yaml)."""
    text = (REPO / "README.md").read_text()
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^```(\w+)\n(.*?)^```$", section, flags=re.S | re.M))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A directory holding the README's package as pip would install it, and the profile."""
    blocks = readme_blocks()
    entry_points = tomllib.loads(blocks["toml"])["project"]["entry-points"][ENTRY_POINT_GROUP]
    ((name, target),) = entry_points.items()
    module = target.split(":")[0]
    site = tmp_path_factory.mktemp("site")
    (site / module).mkdir()
    (site / module / "__init__.py").write_text(blocks["python"])
    dist_info = site / f"{module}-0.1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {target}\n")
    return site, blocks["yaml"]


def simulate(tmp_path: Path, site: Path | None, profile: str, spot: str) -> str:
    """Where `scheduler-runtime simulate` puts a pod that fits both nodes under the profile, with
    `small` labelled `example.com/spot: <spot>`, the package installed when site is given; or
    the one-line error."""
    scheduler = yaml.safe_load(profile)["metadata"]["name"]
    (tmp_path / "spot.yaml").write_text(profile)
    (tmp_path / "state.yaml").write_text(
        NODES.replace("SPOT", spot) + "---" + POD.replace("SCHEDULER", scheduler)
    )
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if site is not None:
        environment["PYTHONPATH"] = str(site)
    command = Path(sys.executable).parent / "scheduler-runtime"
    done = subprocess.run(
        [str(command), "simulate", "--config", "spot.yaml", "--state", "state.yaml", "-o", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    if done.returncode != 0:
        return done.stderr.strip()
    (placement,) = json.loads(done.stdout)["placements"]
    return str(placement["node"])


def test_the_plugin_sends_the_pod_to_the_spot_node(
    installed: tuple[Path, str], tmp_path: Path
) -> None:
    site, profile = installed
    assert simulate(tmp_path, site, profile, spot="true") == "small"


def test_without_the_label_the_defaults_choose_the_emptier_node(
    installed: tuple[Path, str], tmp_path: Path
) -> None:
    site, profile = installed
    assert simulate(tmp_path, site, profile, spot="false") == "big"


def test_without_the_package_the_profile_is_refused_naming_the_field(
    installed: tuple[Path, str], tmp_path: Path
) -> None:
    _, profile = installed
    assert simulate(tmp_path, None, profile, spot="true") == (
        "error: spot.yaml: spec.profiles[0].plugins.score.enabled[0].name: "
        "unknown plugin 'PreferSpot'"
    )
