"""The one place naming the project's container image and the upstream scheduler it pairs with."""

from __future__ import annotations

from typing import Final

VERSION: Final = "0.1.0"
IMAGE_REPOSITORY: Final = "ghcr.io/schedops/scheduler-operator"
# One image holds both programs: the operator and the Python scheduler runtime it deploys.
IMAGE: Final = f"{IMAGE_REPOSITORY}:{VERSION}"
# Where the upstream engine's images come from; the tag is the release of the cluster's minor
# (releases.py).
KUBE_SCHEDULER_REPOSITORY: Final = "registry.k8s.io/kube-scheduler"
