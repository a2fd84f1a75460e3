"""The node features a pod needs, as k8s.io/component-helpers/nodedeclaredfeatures (v0.36.3)
infers them for scheduling: each feature a node can declare in `status.declaredFeatures`,
and whether a pod's spec needs it. Features that matter only to updates (in-place resize)
or to the kubelet never make a pod need a node."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

Spec = Mapping[str, Any]

RESTART_ALL_CONTAINERS = "RestartAllContainers"


def _restarts_all_containers(spec: Spec) -> bool:
    """restartallcontainers: a container or init container with a restart rule whose
    action restarts all containers."""
    containers = [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]
    return any(
        (rule or {}).get("action") == RESTART_ALL_CONTAINERS
        for container in containers
        for rule in (container or {}).get("restartPolicyRules") or ()
    )


def _user_namespace_on_host_network(spec: Spec) -> bool:
    """usernamespaceshostnetwork: host network in a user namespace (hostUsers false)."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


def _never(spec: Spec) -> bool:
    return False


# Every feature of the library's registry (features.AllFeatures), by name; none has a
# maximum version yet, so all apply to kube-scheduler 1.36.
INFER_FOR_SCHEDULING: Final[Mapping[str, Callable[[Spec], bool]]] = {
    "ExtendWebSocketsToKubelet": _never,
    "InPlacePodLevelResourcesVerticalScaling": _never,
    "InPlacePodVerticalScalingInitContainers": _never,
    "RestartAllContainersOnContainerExits": _restarts_all_containers,
    "UserNamespacesHostNetworkSupport": _user_namespace_on_host_network,
}


def required_features(spec: Spec) -> frozenset[str]:
    """Framework.InferForPodScheduling: the features a pod with this spec needs of a node."""
    return frozenset(name for name, needs in INFER_FOR_SCHEDULING.items() if needs(spec))


def declared_features(node: Mapping[str, Any]) -> frozenset[str]:
    """What a node declares; names the library does not know are ignored (TryMap), and
    cannot satisfy anything since no pod can need them."""
    declared = (node.get("status") or {}).get("declaredFeatures") or ()
    return frozenset(name for name in declared if name in INFER_FOR_SCHEDULING)
