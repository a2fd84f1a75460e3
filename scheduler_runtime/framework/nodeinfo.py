"""One node and the pods on it, for plugins that look at one node at a time (and for
preemption, which edits copies of it). The columnar `Snapshot` mirrors its totals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler_runtime.framework.podinfo import HostPort, PodInfo, Taint, parse_taints
from scheduler_runtime.framework.quantity import PODS, resource_list

ANY_IP = "0.0.0.0"  # noqa: S104


def zone_key(labels: Mapping[str, str]) -> str:
    """utilnode.GetZoneKey: region and zone of a node, "" when it has neither."""
    region = labels.get("topology.kubernetes.io/region") or labels.get(
        "failure-domain.beta.kubernetes.io/region", ""
    )
    zone = labels.get("topology.kubernetes.io/zone") or labels.get(
        "failure-domain.beta.kubernetes.io/zone", ""
    )
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeInfo:
    """A node, its allocatable resources and what the pods on it request."""

    __slots__ = (
        "allocatable",
        "images",
        "labels",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "requested",
        "taints",
        "unschedulable",
        "used_ports",
    )

    def __init__(self, node: dict[str, Any]) -> None:
        self.pods: dict[str, PodInfo] = {}
        self.requested: dict[str, int] = {}
        self.non_zero_requested: dict[str, int] = {}
        self.used_ports: dict[HostPort, int] = {}
        self.set_node(node)

    def set_node(self, node: dict[str, Any]) -> None:
        """(Re)reads the node object; the pods stay."""
        metadata = node.get("metadata") or {}
        spec = node.get("spec") or {}
        status = node.get("status") or {}
        self.node = node
        self.name: str = metadata["name"]
        self.labels: Mapping[str, str] = metadata.get("labels") or {}
        self.taints: tuple[Taint, ...] = parse_taints(spec.get("taints"))
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable: dict[str, int] = resource_list(status.get("allocatable"))
        self.images: dict[str, int] = {
            name: int(image.get("sizeBytes") or 0)
            for image in status.get("images") or ()
            for name in image.get("names") or ()
        }

    @property
    def allowed_pod_number(self) -> int:
        return self.allocatable.get(PODS, 0)

    def add_pod(self, pod: PodInfo) -> None:
        self.pods[pod.id] = pod
        self._account(pod, 1)

    def remove_pod(self, pod_id: str) -> PodInfo | None:
        pod = self.pods.pop(pod_id, None)
        if pod is not None:
            self._account(pod, -1)
        return pod

    def _account(self, pod: PodInfo, sign: int) -> None:
        for name, value in pod.requests.items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        for name in ("cpu", "memory"):
            value = pod.non_zero_requests.get(name, 0)
            self.non_zero_requested[name] = self.non_zero_requested.get(name, 0) + sign * value
        for port in pod.host_ports:
            count = self.used_ports.get(port, 0) + sign
            if count > 0:
                self.used_ports[port] = count
            else:
                self.used_ports.pop(port, None)

    def port_conflicts(self, wanted: HostPort) -> bool:
        """HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every address of the node."""
        if wanted.ip == ANY_IP:
            return any(
                used.protocol == wanted.protocol and used.port == wanted.port
                for used in self.used_ports
            )
        return (
            wanted in self.used_ports
            or HostPort(ANY_IP, wanted.protocol, wanted.port) in self.used_ports
        )

    @property
    def pods_with_affinity(self) -> list[PodInfo]:
        return [pod for pod in self.pods.values() if pod.has_pod_affinity]

    def clone(self) -> NodeInfo:
        """An independent copy whose pods can be added and removed (preemption dry runs)."""
        copy = NodeInfo.__new__(NodeInfo)
        copy.node = self.node
        copy.name = self.name
        copy.labels = self.labels
        copy.taints = self.taints
        copy.unschedulable = self.unschedulable
        copy.allocatable = self.allocatable
        copy.images = self.images
        copy.pods = dict(self.pods)
        copy.requested = dict(self.requested)
        copy.non_zero_requested = dict(self.non_zero_requested)
        copy.used_ports = dict(self.used_ports)
        return copy
