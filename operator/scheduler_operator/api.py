"""The SchedulerProfile API's names: its group, version and kind, where its schedulers run by
default, and the Lease each scheduler holds."""

from __future__ import annotations

from typing import Final

GROUP = "scheduling.schedops.io"
VERSION = "v1alpha1"
KIND = "SchedulerProfile"
PLURAL = "schedulerprofiles"
SHORT_NAME = "schedprof"
API_VERSION = f"{GROUP}/{VERSION}"

# Where a SchedulerProfile's scheduler runs unless it says otherwise: a namespace of its own,
# which the install creates (manifests/) and the operator may write to.
DEFAULT_NAMESPACE: Final = "schedulers"
# A scheduler's Lease is its name behind this prefix, so no SchedulerProfile can name the Lease
# of a component it is not (kube-controller-manager, say) and take it over when it expires.
LEASE_PREFIX: Final = "schedulerprofile."


def scheduler_of_lease(lease_name: str) -> str | None:
    """The scheduler name a Lease is named after, None for a Lease no scheduler would hold."""
    return lease_name.removeprefix(LEASE_PREFIX) if lease_name.startswith(LEASE_PREFIX) else None
