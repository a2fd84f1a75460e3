"""What a scheduling attempt produces: per-node failure statuses, the FitError and its
message (byte-for-byte upstream's FitError.Error), the queued pod."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Slots, Snapshot
from scheduler_runtime.framework.status import Code, NodeVerdicts, Status

NO_NODE_AVAILABLE = "0/{} nodes are available"
NO_NODES_REGISTERED = "no nodes available to schedule pods"


@dataclass(slots=True)
class Rejection:
    """The nodes one filter plugin rejected in one pass, with their reasons (columnar)."""

    plugin: str
    slots: Slots
    unresolvable: np.ndarray
    reasons: list[tuple[str, np.ndarray]]

    @classmethod
    def from_verdicts(cls, plugin: str, slots: Slots, verdicts: NodeVerdicts) -> Rejection:
        rejected = verdicts.rejected
        return cls(
            plugin=plugin,
            slots=slots[rejected],
            unresolvable=verdicts.unresolvable[rejected],
            reasons=[(reason, mask[rejected]) for reason, mask in verdicts.reasons if mask.any()],
        )

    def status(self, position: int) -> Status:
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if self.unresolvable[position]
            else Code.UNSCHEDULABLE
        )
        reasons = tuple(reason for reason, mask in self.reasons if mask[position])
        return Status(code, reasons, self.plugin)

    def truncated(self, keep: np.ndarray) -> Rejection:
        return Rejection(
            self.plugin,
            self.slots[keep],
            self.unresolvable[keep],
            [(reason, mask[keep]) for reason, mask in self.reasons],
        )


@dataclass
class NodeToStatus:
    """Why each evaluated node failed; nodes never evaluated share `absent` (upstream's
    NodeToStatus with its absent-nodes status)."""

    snapshot: Snapshot
    rejections: list[Rejection] = field(default_factory=list)
    absent: Status = field(default_factory=Status.unresolvable)
    extra: dict[str, Status] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(r.slots) for r in self.rejections) + len(self.extra)

    def set(self, node_name: str, status: Status) -> None:
        self.extra[node_name] = status

    def items(self) -> Iterator[tuple[str, Status]]:
        """Every node with its own status."""
        for rejection in self.rejections:
            for position, slot in enumerate(rejection.slots):
                yield self.snapshot.name(int(slot)), rejection.status(position)
        yield from self.extra.items()

    def get(self, node_name: str) -> Status:
        if node_name in self.extra:
            return self.extra[node_name]
        slot = self.snapshot.slot(node_name)
        for rejection in self.rejections:
            hits = np.flatnonzero(rejection.slots == slot)
            if len(hits):
                return rejection.status(int(hits[0]))
        return self.absent

    def reason_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for rejection in self.rejections:
            for reason, mask in rejection.reasons:
                hits = int(np.count_nonzero(mask))
                if hits:
                    counts[reason] += hits
        for status in self.extra.values():
            counts.update(status.reasons)
        return counts


@dataclass
class Diagnosis:
    node_to_status: NodeToStatus
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits the pod; `str()` is the FailedScheduling message users know."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        message = NO_NODE_AVAILABLE.format(self.num_all_nodes) + ":"
        diagnosis = self.diagnosis
        if diagnosis.pre_filter_msg:
            message += f" {diagnosis.pre_filter_msg}."
        else:
            counts = diagnosis.node_to_status.reason_counts()
            absent = self.num_all_nodes - len(diagnosis.node_to_status)
            if absent > 0:
                for reason in diagnosis.node_to_status.absent.reasons:
                    counts[reason] += absent
            histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
            if histogram:
                message += f" {', '.join(histogram)}."
        if diagnosis.post_filter_msg:
            message += f" {diagnosis.post_filter_msg}"  # no period: the plugins end their own
        return message


class NoNodesAvailableError(Exception):
    """The cluster has no nodes at all."""

    def __init__(self) -> None:
        super().__init__(NO_NODES_REGISTERED)


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(eq=False, slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue; `timestamp` is when it was (re)queued."""

    pod_info: PodInfo
    timestamp: float
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
