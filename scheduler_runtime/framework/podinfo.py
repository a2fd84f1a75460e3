"""A pod parsed once per scheduling attempt into what every plugin reads (`PodInfo`).

Pods are plain dicts as the API server sends them; nothing on the hot path touches client
model objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scheduler_runtime.framework.quantity import CPU, MEMORY, resource_list

DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core, for containers that request no cpu (scoring only)
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB, likewise


class Toleration(NamedTuple):
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        """core/v1 Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


class Taint(NamedTuple):
    key: str
    value: str
    effect: str


class HostPort(NamedTuple):
    ip: str
    protocol: str
    port: int


def parse_tolerations(raw: list[dict[str, Any]] | None) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            key=item.get("key") or "",
            operator=item.get("operator") or "",
            value=item.get("value") or "",
            effect=item.get("effect") or "",
        )
        for item in raw or ()
    )


def parse_taints(raw: list[dict[str, Any]] | None) -> tuple[Taint, ...]:
    return tuple(
        Taint(key=item.get("key") or "", value=item.get("value") or "", effect=item["effect"])
        for item in raw or ()
    )


def normalized_image_name(name: str) -> str:
    """An image without a tag or digest means `:latest` (as ImageLocality reads it)."""
    if name.rfind(":") <= name.rfind("/"):
        return f"{name}:latest"
    return name


def _container_requests(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    # The API server defaults a missing request to the limit; state files may predate that.
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return resource_list(merged)


def _non_missing(requests: dict[str, int]) -> dict[str, int]:
    with_defaults = dict(requests)
    with_defaults.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    with_defaults.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return with_defaults


def _add(total: dict[str, int], extra: Mapping[str, int]) -> None:
    for name, value in extra.items():
        total[name] = total.get(name, 0) + value


def _maximum(total: dict[str, int], other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if value > total.get(name, 0):
            total[name] = value


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


@dataclass(frozen=True, slots=True)
class _Resized:
    """What in-place resizing has given each container (by name), and whether the pending
    resize is infeasible."""

    given: Mapping[str, dict[str, int]]
    infeasible: bool

    @classmethod
    def of(cls, status: Mapping[str, Any]) -> _Resized:
        conditions = status.get("conditions") or ()
        resize = next((c for c in conditions if c.get("type") == "PodResizePending"), None)
        given: dict[str, dict[str, int]] = {}
        statuses = (
            *(status.get("containerStatuses") or ()),
            *(status.get("initContainerStatuses") or ()),
        )
        for container in statuses:
            resources = container.get("resources")
            if resources is not None:
                effective = resource_list(resources.get("requests"))
                _maximum(effective, resource_list(container.get("allocatedResources")))
                given[container.get("name", "")] = effective
        return cls(given, resize is not None and resize.get("reason") == "Infeasible")

    def requests(self, container: Mapping[str, Any]) -> dict[str, int]:
        """determineContainerReqs: the larger of spec, status and allocated requests; only
        status and allocated when the resize is infeasible."""
        requests = _container_requests(container)
        given = self.given.get(container.get("name", ""))
        if given is None:
            return requests
        effective = dict(given)
        if not self.infeasible:
            _maximum(effective, requests)
        return effective


def pod_requests(
    spec: Mapping[str, Any], *, non_missing: bool, status: Mapping[str, Any] | None = None
) -> dict[str, int]:
    """resourcehelper.PodRequests: containers summed, init containers as a running maximum
    (restartable sidecars accumulate), then pod overhead; `non_missing` fills in the 100m /
    200Mi defaults per container, as scoring does. With a `status`, containers count what
    in-place resizing has actually given them."""
    fill = _non_missing if non_missing else dict
    resized = _Resized.of(status or {})
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        _add(total, fill(resized.requests(container)))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.get("initContainers") or ():
        requests = fill(resized.requests(container))
        if _is_sidecar(container):
            _add(total, requests)
            _add(sidecars, requests)
            current = dict(sidecars)
        else:
            current = dict(requests)
            _add(current, sidecars)
        _maximum(init_peak, current)
    _maximum(total, init_peak)
    pod_level = resource_list((spec.get("resources") or {}).get("requests"))
    for name in (CPU, MEMORY):
        if name in pod_level:
            total[name] = pod_level[name]
    _add(total, resource_list(spec.get("overhead")))
    return total


def _host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    containers = [c for c in spec.get("initContainers") or () if _is_sidecar(c)]
    containers += list(spec.get("containers") or ())
    return tuple(
        HostPort(port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", port["hostPort"])  # noqa: S104
        for container in containers
        for port in container.get("ports") or ()
        if (port.get("hostPort") or 0) > 0
    )


def _images(spec: Mapping[str, Any]) -> tuple[str, ...]:
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    return tuple(normalized_image_name(c["image"]) for c in containers if c.get("image"))


@dataclass(eq=False, slots=True)
class PodInfo:
    """What the scheduler needs from a pod, computed once; `pod` is the API object."""

    pod: dict[str, Any]
    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    scheduler_name: str
    node_name: str
    priority: int
    creation_timestamp: str
    requests: Mapping[str, int]
    non_zero_requests: Mapping[str, int]
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    affinity: Mapping[str, Any]
    host_ports: tuple[HostPort, ...]
    images: tuple[str, ...]
    scheduling_gates: tuple[str, ...]
    container_count: int
    # Plugins keep what they parsed from the pod here, keyed by plugin name, so that it is
    # parsed once per pod rather than once per cycle.
    parsed: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """namespace/name: how people name the pod (logs, events, /explain)."""
        return f"{self.namespace}/{self.name}"

    @property
    def id(self) -> str:
        """The key state is kept by: the UID, as a pod re-created under the same name is
        another pod (namespace/name only for an object without one)."""
        return self.uid or self.key

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.pod.get("spec") or {}

    @property
    def non_zero_cpu(self) -> int:
        return self.non_zero_requests.get(CPU, 0)

    @property
    def non_zero_memory(self) -> int:
        return self.non_zero_requests.get(MEMORY, 0)

    @property
    def has_pod_affinity(self) -> bool:
        return bool(self.affinity.get("podAffinity") or self.affinity.get("podAntiAffinity"))

    @property
    def preemption_policy(self) -> str:
        return self.spec.get("preemptionPolicy") or "PreemptLowerPriority"

    @property
    def nominated_node_name(self) -> str:
        return (self.pod.get("status") or {}).get("nominatedNodeName") or ""

    def with_node(self, node_name: str) -> PodInfo:
        """A copy that is bound (or assumed) to `node_name`."""
        pod = {**self.pod, "spec": {**self.spec, "nodeName": node_name}}
        return PodInfo(
            pod=pod,
            namespace=self.namespace,
            name=self.name,
            uid=self.uid,
            labels=self.labels,
            scheduler_name=self.scheduler_name,
            node_name=node_name,
            priority=self.priority,
            creation_timestamp=self.creation_timestamp,
            requests=self.requests,
            non_zero_requests=self.non_zero_requests,
            tolerations=self.tolerations,
            node_selector=self.node_selector,
            affinity=self.affinity,
            host_ports=self.host_ports,
            images=self.images,
            scheduling_gates=self.scheduling_gates,
            container_count=self.container_count,
            parsed=self.parsed,
        )


def pod_id(pod: Mapping[str, Any]) -> str:
    """PodInfo.id of a pod object."""
    metadata = pod.get("metadata") or {}
    uid = metadata.get("uid")
    if uid:
        return str(uid)
    return f"{metadata.get('namespace') or 'default'}/{metadata.get('name') or ''}"


def pod_info(pod: dict[str, Any]) -> PodInfo:
    """Parses a pod (a dict as decoded from the API server's JSON)."""
    metadata = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    return PodInfo(
        pod=pod,
        namespace=metadata.get("namespace") or "default",
        name=metadata.get("name") or "",
        uid=metadata.get("uid") or "",
        labels=metadata.get("labels") or {},
        scheduler_name=spec.get("schedulerName") or "default-scheduler",
        node_name=spec.get("nodeName") or "",
        priority=int(spec.get("priority") or 0),
        creation_timestamp=metadata.get("creationTimestamp") or "",
        requests=pod_requests(spec, non_missing=False, status=pod.get("status")),
        non_zero_requests=pod_requests(spec, non_missing=True, status=pod.get("status")),
        tolerations=parse_tolerations(spec.get("tolerations")),
        node_selector=spec.get("nodeSelector") or {},
        affinity=spec.get("affinity") or {},
        host_ports=_host_ports(spec),
        images=_images(spec),
        scheduling_gates=tuple(g["name"] for g in spec.get("schedulingGates") or ()),
        container_count=len(spec.get("containers") or ()) + len(spec.get("initContainers") or ()),
    )
