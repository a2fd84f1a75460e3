"""The feature gates the scheduler reads, as plugins see them (upstream's
pkg/scheduler/framework/plugins/feature.Features): one flag per gate, named after it.

The values come from the configuration (`scheduler_runtime.config.features` parses
kube-scheduler's `--feature-gates` and holds every gate's spec); the defaults here are
kube-scheduler 1.37's (the pinned reference), so a framework built without a configuration
behaves as upstream's does out of the box. Plugins read
`handle.features`, never process-global state.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Features:
    """Whether each gate the scheduler reads is on (field = the gate's name in snake case)."""

    composite_pod_group: bool = False
    dra_admin_access: bool = True
    dra_consumable_capacity: bool = True
    dra_derived_attributes: bool = False
    dra_device_binding_conditions: bool = True
    dra_device_compatibility_groups: bool = False
    dra_device_taint_rules: bool = True
    dra_device_taints: bool = True
    dra_extended_resource: bool = True
    dra_fractional_capacity_range: bool = False
    dra_list_type_attributes: bool = False
    dra_node_allocatable_resources: bool = False
    dra_optional_node_operations: bool = False
    dra_partitionable_devices: bool = True
    dra_prioritized_list: bool = True
    dra_resource_claim_device_status: bool = True
    dra_scheduler_filter_timeout: bool = True
    dra_workload_resource_claims: bool = False
    dynamic_resource_allocation: bool = True
    gang_scheduling: bool = False
    generic_workload: bool = False
    in_place_pod_level_resources_vertical_scaling: bool = True
    in_place_pod_vertical_scaling: bool = True
    in_place_pod_vertical_scaling_scheduler_preemption: bool = False
    inter_pod_affinity_hostname_fast_path: bool = False
    match_label_keys_in_pod_topology_spread: bool = True
    node_declared_features: bool = True
    node_inclusion_policy_in_pod_topology_spread: bool = True
    nominated_node_name_for_expectation: bool = True
    opportunistic_batching: bool = True
    pod_group_preemption_policy: bool = False
    pod_level_resources: bool = True
    scheduler_async_api_calls: bool = False
    scheduler_async_preemption: bool = True
    scheduler_pop_from_backoff_q: bool = True
    scheduler_pre_queueing_hints: bool = False
    scheduler_queueing_hints: bool = True
    sidecar_containers: bool = True
    storage_capacity_scoring: bool = True
    taint_toleration_comparison_operators: bool = False
    topology_aware_workload_scheduling: bool = False
    volume_attributes_class: bool = True
    volume_limit_scaling: bool = True
    workload_aware_preemption: bool = False
    # The emulated minor. What a release changed without a gate (a message, an order) follows
    # it, so that the runtime reads as the kube-scheduler of that minor does.
    release: tuple[int, int] = (1, 37)

    @classmethod
    def gate_names(cls) -> dict[str, str]:
        """Gate name -> field name, for every gate this class carries."""
        return {gate_name(f.name): f.name for f in fields(cls) if f.name != "release"}

    def since(self, major: int, minor: int) -> bool:
        """Whether the emulated release is `major.minor` or newer."""
        return self.release >= (major, minor)


_ACRONYMS = {"dra": "DRA", "api": "API", "q": "Q"}


def gate_name(field_name: str) -> str:
    """`dra_prioritized_list` -> `DRAPrioritizedList`, `scheduler_pop_from_backoff_q` ->
    `SchedulerPopFromBackoffQ`: the gate a field stands for."""
    return "".join(_ACRONYMS.get(word, word.capitalize()) for word in field_name.split("_"))


__all__ = ["Features", "gate_name"]
