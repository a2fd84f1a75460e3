"""The repository's tools/ as Python calls them: the versions pinned in tools/versions.env, the
local cluster script tools/cluster.sh and the binaries tools/build-binaries.sh builds (shared
with the tests)."""

from __future__ import annotations

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
