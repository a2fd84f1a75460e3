"""PodDisruptionBudgets as preemption reads them (filterPodsWithPDBViolation)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.framework.labelselector import LabelSelector, SelectorError, parse_selector
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class Budget:
    namespace: str
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @classmethod
    def parse(cls, pdb: dict[str, Any]) -> Budget | None:
        """None for a budget whose selector does not parse (it matches no pod)."""
        metadata = pdb.get("metadata") or {}
        status = pdb.get("status") or {}
        try:
            selector = parse_selector((pdb.get("spec") or {}).get("selector"), "spec.selector")
        except SelectorError:
            return None
        return cls(
            namespace=metadata.get("namespace") or "default",
            selector=selector,
            disruptions_allowed=int(status.get("disruptionsAllowed") or 0),
            disrupted_pods=frozenset(status.get("disruptedPods") or {}),
        )

    def covers(self, pod: PodInfo) -> bool:
        """A budget in the pod's namespace whose selector (not empty) matches the pod."""
        return (
            self.namespace == pod.namespace
            and not self.selector.everything
            and self.selector.matches(pod.labels)
        )


@dataclass(frozen=True, slots=True)
class Budgets:
    items: tuple[Budget, ...]

    @classmethod
    def of(cls, snapshot: Snapshot) -> Budgets:
        parsed = (Budget.parse(pdb) for pdb in snapshot.objects.all("PodDisruptionBudget"))
        return cls(tuple(b for b in parsed if b is not None))


def split_by_pdb_violation(
    pods: Sequence[PodInfo], budgets: Budgets
) -> tuple[list[PodInfo], list[PodInfo]]:
    """(pods whose eviction would exceed a budget, the others), each in the given order.
    Evictions are counted against each budget in turn; pods a budget already lists as
    disrupted do not count again."""
    allowed = [b.disruptions_allowed for b in budgets.items]
    violating: list[PodInfo] = []
    sparing: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for index, budget in enumerate(budgets.items):
                if not budget.covers(pod) or pod.name in budget.disrupted_pods:
                    continue
                allowed[index] -= 1
                violated = violated or allowed[index] < 0
        (violating if violated else sparing).append(pod)
    return violating, sparing


def count_pdb_violations(
    victims: Sequence[Sequence[PodInfo]], budgets: Budgets
) -> tuple[list[tuple[int, int]], list[int]]:
    """FilterVictimsWithPDBViolation for victims of one or more pods, each whole: (index and
    number of violating pods of each victim with any, indexes of the others), in the given
    order. A pod violates at the first budget its eviction takes below zero."""
    allowed = [b.disruptions_allowed for b in budgets.items]

    def violates(pod: PodInfo) -> bool:
        if not pod.labels:
            return False
        for index, budget in enumerate(budgets.items):
            if not budget.covers(pod) or pod.name in budget.disrupted_pods:
                continue
            allowed[index] -= 1
            if allowed[index] < 0:
                return True
        return False

    violating: list[tuple[int, int]] = []
    sparing: list[int] = []
    for index, pods in enumerate(victims):
        count = sum(violates(pod) for pod in pods)
        if count:
            violating.append((index, count))
        else:
            sparing.append(index)
    return violating, sparing
