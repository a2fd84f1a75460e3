"""The repository's tools/ as Python calls them: the versions pinned in tools/versions.env, the
local cluster script tools/cluster.sh and the binaries tools/build-binaries.sh builds (shared
with the tests)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / "tools"


def pinned_versions() -> dict[str, str]:
    """tools/versions.env, the one place the built binaries' versions are pinned."""
    pairs = (
        line.split("=", 1)
        for line in (TOOLS / "versions.env").read_text().splitlines()
        if "=" in line and not line.lstrip().startswith("#")
    )
    return {key.strip(): value.strip() for key, value in pairs}


def kubernetes_version() -> str:
    """The Kubernetes release the local clusters run: the pinned one, or KUBE_VERSION's (the
    version matrix and the upgrade kit set it; tools/build-binaries.sh reads the same)."""
    return os.environ.get("KUBE_VERSION") or pinned_versions()["KUBERNETES_VERSION"]


def kubernetes_minor() -> str:
    """kubernetes_version()'s minor, as the runtime names what it emulates ("1.37")."""
    return ".".join(kubernetes_version().removeprefix("v").split(".")[:2])


def shared_cluster_name() -> str:
    """The local cluster the tests share: $TEST_CLUSTER_NAME (parallel runs keep apart), else
    "test-" and the release ("test-1-37-2"), so that neither a run of the version matrix nor a
    checkout with another pin ever remakes a cluster of another release."""
    if name := os.environ.get("TEST_CLUSTER_NAME"):
        return name
    return "test-" + kubernetes_version().removeprefix("v").replace(".", "-")


def cluster_tool(*args: str) -> str:
    """Runs tools/cluster.sh; a failure carries the tool's own explanation."""
    done = subprocess.run(
        [str(TOOLS / "cluster.sh"), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"tools/cluster.sh {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )
    return done.stdout.strip()


def built_binary(name: str) -> Path:
    """A binary tools/build-binaries.sh built (kubectl, prometheus, promtool, helm, ...), built
    first if the cache lacks it."""
    for directory in cluster_tool("bin").splitlines():
        if (candidate := Path(directory) / name).is_file():
            return candidate
    raise RuntimeError(f"tools/build-binaries.sh builds no binary named {name!r}")
