"""The repository's tools/ as Python calls them: the versions pinned in tools/versions.env and
the local cluster script tools/cluster.sh (shared with the tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / "tools"


def pinned_versions() -> dict[str, str]:
    """tools/versions.env, the one place the control plane's versions are pinned."""
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
