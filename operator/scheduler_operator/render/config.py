"""The KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) a SchedulerProfile asks for."""

from __future__ import annotations

from typing import Any

from scheduler_runtime.config import PluginSet

from ..model import LeaderElection, Profile, SchedulerProfile, extension_points


def scheduler_configuration(profile: SchedulerProfile) -> dict[str, Any]:
    """One configuration for either engine; unset fields keep kube-scheduler's defaults."""
    spec = profile.spec
    election = spec.leader_election or LeaderElection()
    leader_election = {
        "leaderElect": spec.leader_elect(),
        "resourceLock": "leases",
        "resourceName": profile.lease_name,
        "resourceNamespace": spec.namespace,
        "leaseDuration": election.lease_duration,
        "renewDeadline": election.renew_deadline,
        "retryPeriod": election.retry_period,
    }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": leader_election,
        "profiles": [profile_configuration(p) for p in profile.profiles()],
    }


def profile_configuration(profile: Profile) -> dict[str, Any]:
    rendered: dict[str, Any] = {"schedulerName": profile.scheduler_name}
    if profile.percentage_of_nodes_to_score is not None:
        rendered["percentageOfNodesToScore"] = profile.percentage_of_nodes_to_score
    if profile.plugins is not None:
        rendered["plugins"] = {
            point: plugin_set(plugins)
            for point, plugins in extension_points(profile.plugins).items()
        }
    if profile.plugin_config:
        rendered["pluginConfig"] = [
            {"name": c.name, "args": c.args or {}} for c in profile.plugin_config
        ]
    return rendered


def plugin_set(plugins: PluginSet) -> dict[str, list[dict[str, Any]]]:
    rendered: dict[str, list[dict[str, Any]]] = {}
    if plugins.enabled:
        # An unset weight (0) is left out, so the engine applies its own default.
        rendered["enabled"] = [p.model_dump(exclude_defaults=True) for p in plugins.enabled]
    if plugins.disabled:
        rendered["disabled"] = [{"name": p.name} for p in plugins.disabled]
    return rendered
