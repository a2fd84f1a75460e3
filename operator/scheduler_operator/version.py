"""The one place naming the project's container image and the upstream scheduler it pairs with."""

from __future__ import annotations

from typing import Final

VERSION: Final = "0.1.0"
IMAGE_REPOSITORY: Final = "ghcr.io/schedops/scheduler-operator"
# One image holds both programs: the operator and the Python scheduler runtime it deploys.
IMAGE: Final = f"{IMAGE_REPOSITORY}:{VERSION}"
# The upstream engine's default image follows the Kubernetes release pinned in tools/versions.env.
KUBE_SCHEDULER_IMAGE: Final = "registry.k8s.io/kube-scheduler:v1.36.3"
# The Kubernetes minor that image is: the gates and default plugins a profile is checked with.
KUBERNETES_MINOR: Final = ".".join(KUBE_SCHEDULER_IMAGE.rpartition(":v")[2].split(".")[:2])
