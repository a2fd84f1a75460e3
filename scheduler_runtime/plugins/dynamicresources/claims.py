"""What the DynamicResources plugin keeps for one pod through a scheduling cycle (upstream's
claimStore, claims.go, and stateData): the pod's claims in `spec.resourceClaims` order,
followed by the special claim for extended resources backed by DRA, if any; what is known
about each; and what Filter found on each node."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from scheduler_runtime.dra.allocator import Allocator, Features
from scheduler_runtime.dra.model import Claim, NodeSelector
from scheduler_runtime.framework.dra import Object, ResourceClaimClient, SharedDRAManager
from scheduler_runtime.plugins.dynamicresources.resourceclaim import allocation

# The name of the claim for extended resources while it only exists in memory: not a valid
# claim name, so it never clashes with a real one.
SPECIAL_CLAIM_NAME = "<extended-resources>"


class ClaimStore:
    """The pod's claims, the user's first, then the special claim for extended resources."""

    __slots__ = ("claims", "initial_extended_uid", "user_owned")

    def __init__(self, claims: list[Object], extended: Object | None = None) -> None:
        self.claims: list[Object] = list(claims)
        self.user_owned = len(claims)
        self.initial_extended_uid = ""
        if extended is not None:
            self.claims.append(extended)
            self.initial_extended_uid = str((extended.get("metadata") or {}).get("uid") or "")

    def empty(self) -> bool:
        return not self.claims

    def __len__(self) -> int:
        return len(self.claims)

    def all(self) -> Iterator[tuple[int, Object]]:
        return enumerate(list(self.claims))

    def user_claims(self) -> Iterator[tuple[int, Object]]:
        return enumerate(self.claims[: self.user_owned])

    def to_allocate(self) -> Iterator[tuple[int, Object]]:
        """The claims without an allocation, with their index in the store."""
        return ((i, c) for i, c in enumerate(list(self.claims)) if allocation(c) is None)

    def extended_claim(self) -> Object | None:
        return None if self.user_owned == len(self.claims) else self.claims[self.user_owned]

    def no_user_claim(self) -> bool:
        return self.user_owned == 0

    def get(self, index: int) -> Object:
        return self.claims[index]

    def set(self, index: int, claim: Object) -> None:
        self.claims[index] = claim

    def update_extended_claim(self, claim: Object) -> None:
        self.claims[self.user_owned] = claim


class ClaimWrites:
    """PreBind's writes of one claim, one at a time (binding.py says why): a lock per claim
    being written, kept only while someone holds or waits for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claims: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def one_at_a_time(self, key: str) -> Iterator[None]:
        with self._lock:
            lock, users = self._claims.get(key, (threading.Lock(), 0))
            self._claims[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                lock, users = self._claims[key]
                if users == 1:
                    del self._claims[key]
                else:
                    self._claims[key] = (lock, users - 1)


class PluginContext(Protocol):
    """What the plugin's helpers (PreBind, extended resources) use of the plugin."""

    @property
    def features(self) -> Features: ...

    @property
    def binding_timeout(self) -> float: ...

    @property
    def dra(self) -> SharedDRAManager: ...

    @property
    def client(self) -> ResourceClaimClient: ...

    @property
    def claim_writes(self) -> ClaimWrites: ...


@dataclass(slots=True)
class ClaimInfo:
    """informationForClaim: where an allocated claim is available, and the allocation
    Reserve made (or a pending one found in PreFilter), None when nothing is allocated."""

    available_on: NodeSelector | None = None
    allocation: Mapping[str, Any] | None = None
    waits_for_binding: bool = False  # allocated with devices that have binding conditions


@dataclass(slots=True)
class NodeAllocation:
    """What Filter found on a node: an allocation per claim to allocate (in the order of
    the claims to allocate, then the pending ones), the node's variant of the special claim
    and the pod's container-to-request mappings for it."""

    results: Sequence[Mapping[str, Any]]
    extended_claim: Object | None = None
    mappings: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Variant:
    """The special claim for extended resources as one node needs it: its requests, the
    pod's container mappings, and what the allocator is asked (its fingerprint, parsed)."""

    claim: Object
    mappings: list[dict[str, str]]
    fingerprint: str
    parsed: Claim


@dataclass(frozen=True, slots=True)
class PlainClaims:
    """A pod whose claims all wait to be allocated and that asks for no extended resources:
    what Filter hands the allocator on every node (parsed claims, their specs as keys)."""

    wanted: list[Claim]
    asked: tuple[str, ...]


@dataclass(slots=True)
class StateData:
    """stateData, written by PreFilter; Filter runs write `unavailable` and
    `node_allocations` under the lock."""

    claims: ClaimStore = field(default_factory=lambda: ClaimStore([]))
    extended_resources: Mapping[str, int] = field(default_factory=dict)
    allocator: Allocator | None = None
    parsed: dict[int, Claim] = field(default_factory=dict)  # claims to allocate, by index
    # What the claims to allocate ask for (their specs), and when what is taken of each pool
    # last changed: a node's earlier answer for the same requests holds while both stay.
    fingerprints: dict[int, str] = field(default_factory=dict)
    plain: PlainClaims | None = None
    prioritized: bool = False  # some claim has a prioritized list (Score has work)
    pool_stamps: Mapping[tuple[str, str], int] = field(default_factory=dict)
    extended_backed: frozenset[str] = frozenset()  # the pod's resources a class backs
    extended_variants: dict[tuple[str, ...], Variant] = field(default_factory=dict)
    infos: list[ClaimInfo] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, NodeAllocation] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clone(self) -> StateData:
        return self  # as upstream's: shared by the cycle's copies


@dataclass(slots=True)
class PodGroupStateData:
    """podGroupStateData, kept in a pod group's cycle state: the UIDs of the claims whose
    allocation a member reserved in this cycle. The next members share those allocations
    (the claim tracker counts who shares each); a claim leaves the set when the last sharer
    is unreserved. Only the group's synchronous cycle sees it, so it needs no lock."""

    pending_allocations: set[str] = field(default_factory=set)
    # podsStateData: each member tried in the cycle (namespace/name) and its state, for the
    # group's PodGroupPostFilter.
    pods: dict[str, StateData] = field(default_factory=dict)


__all__ = [
    "SPECIAL_CLAIM_NAME",
    "ClaimInfo",
    "ClaimStore",
    "NodeAllocation",
    "PlainClaims",
    "PluginContext",
    "PodGroupStateData",
    "StateData",
]
