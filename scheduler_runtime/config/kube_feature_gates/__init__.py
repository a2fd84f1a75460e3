"""The feature gates of each Kubernetes minor the runtime emulates, oldest first: the minor
("1.36"), the release its table was read from, and the table (see each module). Written by
tools/feature_gates.py: do not edit."""

from __future__ import annotations

from typing import Final

from scheduler_runtime.config.kube_feature_gates import v1_35, v1_36, v1_37

Gate = tuple[str, bool, str, bool, tuple[str, ...]]

RELEASES: Final[dict[str, tuple[str, tuple[Gate, ...]]]] = {
    "1.35": (v1_35.KUBERNETES_VERSION, v1_35.GATES),
    "1.36": (v1_36.KUBERNETES_VERSION, v1_36.GATES),
    "1.37": (v1_37.KUBERNETES_VERSION, v1_37.GATES),
}
