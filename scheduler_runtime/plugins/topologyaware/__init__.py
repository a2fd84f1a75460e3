"""TopologyPlacementGenerator (upstream's pkg/scheduler/framework/plugins/topologyaware, gate
TopologyAwareWorkloadScheduling): a `scheduling.k8s.io/v1alpha2` PodGroup with a topology
constraint is placed within one topology domain. Each domain (the nodes sharing a value of
the constraint's label key) becomes a placement to try the whole group in; once members are
placed, only their domain is offered."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.framework.interface import PluginBase, PodGroupCycleState
from scheduler_runtime.framework.podgroups import WORKLOAD_API, GroupKey, Placement
from scheduler_runtime.framework.status import SUCCESS, Code, Status


class TopologyPlacementGenerator(PluginBase[None]):
    name: ClassVar[str] = "TopologyPlacementGenerator"

    def generate_placements(
        self, state: PodGroupCycleState, group: GroupKey, parent: Placement
    ) -> tuple[list[Placement], Status]:
        groups = self.handle.pod_groups
        policy = groups.policy(group) if groups is not None else None
        if group.api != WORKLOAD_API or groups is None:
            return [parent], SUCCESS
        if policy is None:
            return [], _error(f'podgroup.scheduling.k8s.io "{group.name}" not found')
        key = policy.topology_key
        if key is None:
            return [parent], SUCCESS  # no constraint: one placement, every node
        required, problem = self._placed_domain(group, key)
        if problem:
            return [], _error(f"cannot determine domain for already scheduled pods: {problem}")
        snapshot = self.handle.snapshot
        domains: dict[str, list[str]] = {}
        for name in parent.nodes:
            info = snapshot.get(name)
            domain = info.labels.get(key) if info is not None else None
            if domain is not None and required in (None, domain):
                domains.setdefault(domain, []).append(name)
        return [Placement(domain, tuple(nodes)) for domain, nodes in domains.items()], SUCCESS

    def _placed_domain(self, group: GroupKey, key: str) -> tuple[str | None, str]:
        """The one domain the group's placed members are in (None: none placed yet), or
        why it cannot be told."""
        groups = self.handle.pod_groups
        state = groups.state(group) if groups is not None else None
        if state is None:
            return None, ""
        found: str | None = None
        placed = {**state.assigned, **state.assumed}
        for member, node in placed.items():
            pod = state.names.get(member, member)  # klog.KObj: namespace/name
            info = self.handle.snapshot.get(node)
            if info is None:
                return (
                    None,
                    f'getting node for pod {pod}: nodeinfo not found for node name "{node}"',
                )
            domain = info.labels.get(key)
            if domain is None:
                return None, f"no topology domain found for pod {pod}"
            if found is not None and found != domain:
                return None, f"more than 1 domain found for pod group: {found}, {domain}"
            found = domain
        return found, ""


def _error(message: str) -> Status:
    return Status(Code.ERROR, (message,))


__all__ = ["TopologyPlacementGenerator"]
