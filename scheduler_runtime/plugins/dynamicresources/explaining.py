"""What DynamicResources adds to a pod's explanation: the devices allocated on the chosen
node, request by request, and for nodes it rejected because their devices could not satisfy
the claims, which claim and which request could not be satisfied there.

The allocator only says whether all claims fit; to name the claim, the node is asked again
with the claims one more at a time, then with the failing claim's requests one more at a
time (a few more searches per node). That is done for the first `DIAGNOSED` such nodes only,
and the rest counted: explanations are built for every pod."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from scheduler_runtime.dra.allocator import AllocationError, Allocator, Node
from scheduler_runtime.dra.model import Claim
from scheduler_runtime.plugins.dynamicresources import resourceclaim as rc
from scheduler_runtime.plugins.dynamicresources.claims import StateData

DIAGNOSED = 8
CANNOT_ALLOCATE = "cannot allocate all claims"


class RejectedGroup(Protocol):
    """A group of rejected nodes as the explanation holds it (framework.explain.Rejected)."""

    @property
    def reason(self) -> str: ...

    @property
    def nodes(self) -> tuple[str, ...]: ...


NodeLabels = Mapping[str, Mapping[str, str]]


def allocated(data: StateData, node: str) -> list[dict[str, str]]:
    """The devices Filter found on the chosen node, by claim and request."""
    found = data.node_allocations.get(node)
    if found is None:
        return []
    rows: list[dict[str, str]] = []
    to_allocate = [claim for _, claim in data.claims.to_allocate()]
    for claim, allocation in zip(to_allocate, found.results, strict=False):
        for result in (allocation.get("devices") or {}).get("results") or ():
            rows.append(
                {
                    "claim": _claim_name(claim),
                    "request": str(result.get("request", "")),
                    "driver": str(result.get("driver", "")),
                    "pool": str(result.get("pool", "")),
                    "device": str(result.get("device", "")),
                }
            )
    return rows


def _claim_name(claim: Mapping[str, Any]) -> str:
    return rc.key(claim)


def unsatisfied(
    data: StateData, rejected: Sequence[RejectedGroup], labels: NodeLabels
) -> tuple[list[dict[str, str]], int]:
    """For the first nodes rejected as unable to allocate the claims, the claim and the
    request that could not be satisfied; and how many such nodes were not diagnosed."""
    nodes = [n for group in rejected if group.reason == CANNOT_ALLOCATE for n in group.nodes]
    if data.allocator is None or data.plain is None:
        return [], len(nodes)
    named = [c for _, c in data.claims.to_allocate()]
    rows = []
    for node in nodes[:DIAGNOSED]:
        found = diagnose(data.allocator, Node(node, labels.get(node, {})), data.plain.wanted)
        if found is not None:
            index, request = found
            rows.append({"node": node, "claim": _claim_name(named[index]), "request": request})
    return rows, max(0, len(nodes) - DIAGNOSED)


def diagnose(allocator: Allocator, node: Node, claims: Sequence[Claim]) -> tuple[int, str] | None:
    """The first claim that cannot be allocated together with those before it, and its first
    request that cannot be together with the requests before it (under the claim's
    constraints: a constraint broken by a request names that request)."""
    for index in range(len(claims)):
        if _fits(allocator, node, claims[: index + 1]):
            continue
        claim = claims[index]
        for count in range(1, len(claim.requests) + 1):
            partial = dataclasses.replace(claim, requests=claim.requests[:count])
            if not _fits(allocator, node, [*claims[:index], partial]):
                return index, claim.requests[count - 1].name
    return None


def _fits(allocator: Allocator, node: Node, claims: Sequence[Claim]) -> bool:
    try:
        return allocator.allocate(node, claims) is not None
    except AllocationError:
        return False


def details(
    data: StateData, node: str | None, rejected: Sequence[RejectedGroup], labels: NodeLabels
) -> dict[str, Any]:
    """The plugin's part of an explanation (framework.explain.plugin_details)."""
    said: dict[str, Any] = {}
    summary = []
    if node is not None:
        devices = allocated(data, node)
        if devices:
            said["allocated"] = devices
            summary.append(
                "devices: "
                + ", ".join(
                    f"{d['request']}={d['driver']}/{d['pool']}/{d['device']}" for d in devices
                )
            )
    rows, undiagnosed = unsatisfied(data, rejected, labels)
    if rows:
        said["unsatisfied"] = rows
        summary.append(
            "unsatisfied: " + ", ".join(f"{r['node']} {r['claim']}/{r['request']}" for r in rows)
        )
    if undiagnosed:
        said["notDiagnosed"] = undiagnosed
    if summary:
        said["summary"] = "; ".join(summary)
    return said


__all__ = ["DIAGNOSED", "allocated", "details", "diagnose", "unsatisfied"]
