"""DynamicResources (upstream's pkg/scheduler/framework/plugins/dynamicresources of
kube-scheduler 1.36.3, dynamicresources.go): a pod's ResourceClaims must exist (PreEnqueue),
their classes too (PreFilter), and a node must have devices for every claim that is not
allocated yet while allocated ones must be available there (Filter); PostFilter deallocates a
claim that stands in the way; Score prefers nodes where prioritized lists got their first
choices; Reserve takes the devices in memory (in flight) so no other pod gets them, PreBind
writes `status.allocation` and `status.reservedFor` and waits for devices' binding
conditions. Statuses, reasons and messages are upstream's.

The scheduler's DRA state comes from the handle (`handle.dra`), its API calls go through
`handle.services.resource_claims`."""

from __future__ import annotations

import logging
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from scheduler_runtime.config.args import DynamicResourcesArgs
from scheduler_runtime.dra.allocator import (
    AllocationError,
    AllocationTimeoutError,
    Allocator,
    Features,
    Node,
    NodeAllocationError,
)
from scheduler_runtime.dra.cel import Cache as CelCache
from scheduler_runtime.dra.model import (
    Claim,
    ModelError,
    _node_selector,
    parse_claim,
)
from scheduler_runtime.framework.dra import (
    ClaimAPIError,
    Object,
    ResourceClaimClient,
    SharedDRAManager,
    copied,
)
from scheduler_runtime.framework.events import (
    DEVICE_CLASS,
    NODE,
    POD,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    ActionType,
    ClusterEventWithHint,
    QueueingHint,
    on,
)
from scheduler_runtime.framework.features import Features as GateFeatures
from scheduler_runtime.framework.interface import (
    CycleState,
    Handle,
    PluginBase,
    PodGroupCycleState,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
    PostFilterResult,
    PreFilterResult,
    StateNeed,
    default_normalize_score,
)
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podgroups import GroupPolicy
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import verdicts_from_statuses
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SKIP, SUCCESS, Code, NodeVerdicts, Status
from scheduler_runtime.framework.types import Diagnosis
from scheduler_runtime.plugins.dynamicresources import binding, explaining, extendedclaim
from scheduler_runtime.plugins.dynamicresources import resourceclaim as rc
from scheduler_runtime.plugins.dynamicresources.answers import Miss, NodeAnswers
from scheduler_runtime.plugins.dynamicresources.claims import (
    ClaimInfo,
    ClaimStore,
    ClaimWrites,
    NodeAllocation,
    PlainClaims,
    PodGroupStateData,
    StateData,
    Variant,
)
from scheduler_runtime.plugins.dynamicresources.parsed import NoDRA, ParsedDRA

log = logging.getLogger(__name__)

NAME = "DynamicResources"
STATE_KEY = NAME
# resourceapi.FirstAvailableDeviceRequestMaxSize: a first choice scores this much.
FIRST_AVAILABLE_MAX_SIZE = 8

NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE = "still not schedulable"
GROUP_CLAIMS_DONE = "deallocation and deletion of ResourceClaims completed"
DEALLOCATED = "deallocation of ResourceClaim completed"
DELETED = "deletion of ResourceClaim completed"
NOT_AVAILABLE = "resourceclaim not available on the node"
CANNOT_ALLOCATE = "cannot allocate all claims"
CANNOT_ALLOCATE_STATUS = Status.unresolvable(CANNOT_ALLOCATE)
NOT_AVAILABLE_STATUS = Status.unresolvable(NOT_AVAILABLE)
EMPTY_CLAIM = parse_claim({"metadata": {}, "spec": {}})


class DRAUnavailableError(RuntimeError):
    """The framework lends the plugin no way to make API calls (a bare framework)."""


def pod_claim_names(pod: Mapping[str, Any]) -> Sequence[tuple[str, Mapping[str, Any]]]:
    """The entries of the pod's spec.resourceClaims, by name."""
    claims = (pod.get("spec") or {}).get("resourceClaims") or ()
    return [(str(c.get("name", "")), c) for c in claims]


class DynamicResources(PluginBase[DynamicResourcesArgs]):
    name: ClassVar[str] = NAME
    args_type = DynamicResourcesArgs
    costly_filter: ClassVar[bool] = True  # one allocator search per node
    # Upstream's plugin reads at every point the state its PreFilter writes.
    state_needs: ClassVar[Mapping[str, StateNeed]] = {
        point: StateNeed("preFilter")
        for point in ("filter", "postFilter", "score", "reserve", "preBind")
    }

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        super().__init__(args, handle)
        gates = handle.features
        self.features = allocator_features(gates)
        self.filter_timeout, self.binding_timeout = effective_timeouts(self.args, gates)
        self.says_nothing_undone = gates.since(1, 37)
        self.cel_cache = CelCache(features=self.features.cel)
        # Without a scheduler around the framework there are no DRA objects at all.
        self.dra: SharedDRAManager = handle.dra if handle.dra is not None else NoDRA()
        self.parsed = ParsedDRA(self.dra)
        self.answers = NodeAnswers()
        self.claim_writes = ClaimWrites()

    # ----- what the plugin writes

    @property
    def client(self) -> ResourceClaimClient:
        client = self.handle.services.resource_claims
        if client is None:
            raise DRAUnavailableError("the scheduler makes no ResourceClaim API calls here")
        return client

    # ----- queueing

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """With queueing hints on (their 1.36 default), a node's taints are left out."""
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        node_actions |= ActionType.UPDATE_NODE_ALLOCATABLE
        return (
            on(NODE, node_actions),
            on(RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE, self._after_claim_change),
            on(
                POD,
                ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM,
                self._after_pod_change,
            ),
            on(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
            on(RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE),
        )

    def pre_enqueue(self, pod: PodInfo) -> Status:
        if not pod.spec.get("resourceClaims"):
            return SUCCESS
        try:
            self._pod_claims(pod)
        except rc.ClaimError as error:
            return Status.unresolvable(str(error))
        return SUCCESS

    def _pod_claims(self, pod: PodInfo | Mapping[str, Any]) -> list[tuple[str, Object]]:
        """foreachPodResourceClaim: each claim the pod names, once it exists, is not being
        deleted and (when made from a template) belongs to the pod; ClaimError otherwise.
        Which claims a PodInfo names is worked out once (queueing hints ask often)."""
        info = pod if isinstance(pod, PodInfo) else _PodRef(pod)
        names = info.parsed.get(NAME) if isinstance(info, PodInfo) else None
        if names is None:
            names = _claim_names(info)
            if isinstance(info, PodInfo):
                info.parsed[NAME] = names
        if isinstance(names, str):
            raise rc.ClaimError(names)
        found: list[tuple[str, Object]] = []
        for name, claim_name, must_check_owner in names:
            claim = self.dra.claims.get(info.namespace, claim_name)
            if claim is None:
                raise rc.ClaimError(f'could not find ResourceClaim "{info.namespace}/{claim_name}"')
            if (claim.get("metadata") or {}).get("deletionTimestamp"):
                raise rc.ClaimError(f'resourceclaim "{claim_name}" is being deleted')
            if must_check_owner:
                rc.is_for_pod(info, claim)
            found.append((name, claim))
        return found

    def _after_claim_change(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        """isSchedulableAfterClaimChange."""
        if isinstance(pod.parsed.get(NAME), str):
            return QueueingHint.SKIP  # a claim not made yet: only the pod's update helps
        try:
            uses_claim = any(rc.uid(claim) == rc.uid(new) for _, claim in self._pod_claims(pod))
        except rc.ClaimError:
            return QueueingHint.SKIP
        if old is not None and rc.allocation(old) is not None and rc.allocation(new) is None:
            return QueueingHint.QUEUE  # deallocated: its devices may help this pod
        if not uses_claim:
            return QueueingHint.SKIP
        # A new claim of the pod's, or a change to its status (not only its finalizers).
        changed = old is None or (old.get("status") or {}) != (new.get("status") or {})
        return QueueingHint.QUEUE if changed else QueueingHint.SKIP

    def _after_pod_change(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        """isSchedulableAfterPodChange: the pod's own claims were made."""
        if ((new or {}).get("metadata") or {}).get("uid") != pod.uid:
            return QueueingHint.SKIP
        try:
            self._pod_claims(new)
        except rc.ClaimError:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # ----- PreFilter

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status]:
        data = StateData()
        state.write(STATE_KEY, data)
        try:
            group = pod_group_state(state)
        except TypeError as error:
            return None, Status.as_error(error)
        if group is not None:  # every member tried, claims or not (its PodGroupPostFilter)
            group.pods[pod.key] = data
        has_claims = bool(pod.spec.get("resourceClaims"))
        if not has_claims and not self._may_use_extended_resources(pod):
            return None, SKIP
        try:
            user_claims = [claim for _, claim in self._pod_claims(pod)]
        except rc.ClaimError as error:
            return None, Status.unresolvable(str(error))
        claims = ClaimStore(user_claims, extendedclaim.pre_filter(self, pod, data))
        if claims.empty():
            return None, SKIP
        status = self._check_claims(data, claims, group)
        if status is not None:
            return None, status
        data.claims = claims
        data.prioritized = any(
            request.get("firstAvailable")
            for _, claim in claims.all()
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
        )
        return None, SUCCESS

    def _check_claims(
        self, data: StateData, claims: ClaimStore, group: PodGroupStateData | None
    ) -> Status | None:
        """Where allocated claims are available; that claims to allocate are not being
        allocated for another pod (an allocation a member before this one reserved in the
        group's cycle is shared instead) and name classes that exist; then the allocator."""
        data.infos = [ClaimInfo() for _ in range(len(claims))]
        extended = claims.extended_claim()
        to_allocate = 0
        for index, claim in claims.all():
            allocation = rc.allocation(claim)
            if allocation is not None:
                # CanBeReserved is always true in 1.36: an allocated claim is never "in use".
                status = self._available_on(data, index, allocation)
            else:
                to_allocate += 1
                shared = self._share_pending(data, index, claim, group)
                if shared is not None:  # the allocator is still made: PreBind writes it
                    status = self._reachable_from(data, index, shared)
                else:
                    status = self._check_unallocated(claim, extended)
            if status is not None:
                return status
        if to_allocate:
            return self._prepare_allocator(data, claims, extended)
        return None

    def _share_pending(
        self, data: StateData, index: int, claim: Object, group: PodGroupStateData | None
    ) -> Mapping[str, Any] | None:
        """The claim's allocation in flight for a member tried before in this group's cycle,
        which this member takes as its own (Reserve shares it, PreBind writes it) instead of
        waiting until it is written: the gang, waiting at Permit for this member, would never
        be complete. None when there is none."""
        uid = rc.uid(claim)
        if group is None or uid not in group.pending_allocations:
            return None
        pending = self.dra.claims.pending_allocation(uid)
        if pending is None:
            return None
        data.infos[index].allocation = pending
        log.debug("reusing pending allocation of resourceclaim %s for pod", rc.key(claim))
        return pending

    def _reachable_from(
        self, data: StateData, index: int, shared: Mapping[str, Any]
    ) -> Status | None:
        """Filter keeps the member sharing an allocation on the nodes its node selector
        names, as for an allocated claim. Past upstream, whose Filter lets such a member on
        any node: one where the devices are out of reach, which the binding member that
        writes the allocation first may then keep."""
        raw = shared.get("nodeSelector")
        if raw is None:
            return None
        try:
            data.infos[index].available_on = _node_selector(raw)
        except (ValueError, TypeError) as error:
            return Status.as_error(error)
        return None

    def _check_unallocated(self, claim: Object, extended: Object | None) -> Status | None:
        if self.dra.claims.pending_allocation(rc.uid(claim)) is not None:
            return Status.unresolvable(
                f"resource claim {rc.key(claim)} is in the process of being allocated"
            )
        if claim is extended:
            return None  # checked by Filter, once it knows the node's requests
        return self._check_requests(claim)

    def _may_use_extended_resources(self, pod: PodInfo) -> bool:
        return self.features.extended_resource and extendedclaim.has_backed_resource(self.dra, pod)

    def _available_on(
        self, data: StateData, index: int, allocation: Mapping[str, Any]
    ) -> Status | None:
        results = (allocation.get("devices") or {}).get("results") or ()
        data.infos[index].waits_for_binding = any(r.get("bindingConditions") for r in results)
        raw = allocation.get("nodeSelector")
        if raw is None:
            return None
        try:
            data.infos[index].available_on = _node_selector(raw)
        except (ValueError, TypeError) as error:
            return Status.as_error(error)
        return None

    def _check_requests(self, claim: Object) -> Status | None:
        """Every request names a class that exists (validateDeviceClass)."""
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
        for request in requests:
            name = str(request.get("name", ""))
            exactly = request.get("exactly")
            first_available = request.get("firstAvailable") or ()
            if exactly is not None:
                status = self._check_class(str(exactly.get("deviceClassName") or ""), name)
            elif first_available:
                if not self.features.prioritized_list:
                    return Status.unresolvable(
                        f"resource claim {rc.key(claim)}, request {name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                status = None
                for sub in first_available:
                    qualified = f"{name}/{sub.get('name', '')}"
                    status = self._check_class(str(sub.get("deviceClassName") or ""), qualified)
                    if status is not None:
                        break
            else:
                return Status.unresolvable(
                    f"resource claim {rc.key(claim)}, request {name}: unknown request type"
                )
            if status is not None:
                return status
        return None

    def _check_class(self, class_name: str, request: str) -> Status | None:
        if not class_name:
            return Status.as_error(RuntimeError(f"request {request}: unsupported request type"))
        if self.dra.device_class(class_name) is None:
            return Status.unresolvable(
                f"request {request}: device class {class_name} does not exist"
            )
        return None

    def _prepare_allocator(
        self, data: StateData, claims: ClaimStore, extended: Object | None
    ) -> Status | None:
        """The allocator for this pod: the devices taken now, the slices and classes; it is
        asked only for the claims without an allocation in flight to share."""
        for index, claim in claims.to_allocate():
            if claim is extended or data.infos[index].allocation is not None:
                continue
            try:
                data.parsed[index] = parse_claim(claim)
            except ModelError as error:
                return Status.as_error(error)
        parsed = self.parsed
        state, data.pool_stamps = parsed.allocated_state()
        data.allocator = Allocator(
            self.features, state, parsed.classes(), parsed.slice_index(), self.cel_cache
        )
        data.fingerprints = {
            index: sys.intern(repr((claim.get("spec") or {}).get("devices")))
            for index, claim in claims.to_allocate()
            if data.infos[index].allocation is None
        }
        if extended is None and len(data.parsed) == len(claims):
            order = sorted(data.parsed)
            data.plain = PlainClaims(
                [data.parsed[i] for i in order], tuple(data.fingerprints[i] for i in order)
            )
        return None

    # ----- Filter

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data: StateData = state.read(STATE_KEY)
        if data.claims.empty():
            return SUCCESS
        return self._filter(data, pod, node)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> NodeVerdicts:
        data: StateData = state.read(STATE_KEY)
        if data.claims.empty():
            return NodeVerdicts.passing(len(slots))
        nodes = [snapshot.info(int(slot)) for slot in slots]
        if data.plain is not None:
            statuses = self._filter_plain(data, data.plain, nodes)
        else:
            statuses = [self._filter(data, pod, node) for node in nodes]
        return verdicts_from_statuses(self.name, statuses)

    def _filter_plain(
        self, data: StateData, plain: PlainClaims, nodes: list[NodeInfo]
    ) -> list[Status]:
        """Filter for a pod whose claims all wait to be allocated, and that asks for no
        extended resources (the usual pod): the allocator's answer is all there is to it,
        and most nodes answer as they did for the pod before."""
        allocator = data.allocator
        assert allocator is not None
        answers, stamps, asked = self.answers, data.pool_stamps, plain.asked
        answers.valid_for(allocator.index, allocator.classes)
        allocations = data.node_allocations
        statuses: list[Status] = []
        for node in nodes:
            known = answers.known(node.name, node.labels, asked, stamps)
            if isinstance(known, Miss):
                try:
                    results = self._answer(data, node, plain.wanted, asked)
                except AllocationError as error:
                    statuses.append(self._allocation_failed(node, error))
                    continue
            else:
                results = known
            if results is None or len(results) != len(plain.wanted):
                statuses.append(CANNOT_ALLOCATE_STATUS)
                continue
            allocations[node.name] = NodeAllocation(results)
            statuses.append(SUCCESS)
        return statuses

    def _filter(self, data: StateData, pod: PodInfo, node: NodeInfo) -> Status:
        variant, status = extendedclaim.filter_node(self, data, pod, node)
        if status is not None:
            return status
        if variant is None and data.claims.no_user_claim():
            return SUCCESS
        unavailable = self._unavailable_claims(data, node)
        allocations: list[Mapping[str, Any]] = []
        if data.allocator is not None:
            result = self._allocate(data, node, variant)
            if isinstance(result, Status):
                return result
            allocations = result
        if unavailable:
            with data.lock:
                data.unavailable.update(unavailable)
            return NOT_AVAILABLE_STATUS
        if data.allocator is not None:
            with data.lock:
                data.node_allocations[node.name] = (
                    NodeAllocation(allocations, variant.claim, variant.mappings)
                    if variant is not None
                    else NodeAllocation(allocations)
                )
        return SUCCESS

    def _unavailable_claims(self, data: StateData, node: NodeInfo) -> list[int]:
        """Allocated claims the node cannot use: not available there, or (with binding
        conditions) failed or timed out binding."""
        unavailable: list[int] = []
        for index, claim in data.claims.all():
            selector = data.infos[index].available_on
            if selector is not None and not selector.matches(node.labels, node.name):
                unavailable.append(index)
                continue
            if rc.allocation(claim) is None or not data.infos[index].waits_for_binding:
                continue
            if self.features.binding_and_status:
                try:
                    ready = binding.claim_ready(claim)
                except binding.BindingFailedError:
                    unavailable.append(index)
                    continue
                if not ready and binding.timed_out(claim, self.binding_timeout, self.client.now):
                    unavailable.append(index)
        return unavailable

    def _allocate(
        self, data: StateData, node: NodeInfo, variant: Variant | None
    ) -> list[Mapping[str, Any]] | Status:
        """The allocations for the claims still to allocate on this node (pending ones
        last), or the status that rejects the node."""
        assert data.allocator is not None
        extended = data.claims.extended_claim()
        wanted = []
        asked: list[str] = []
        pending: list[Mapping[str, Any]] = []
        for index, claim in data.claims.to_allocate():
            if data.infos[index].allocation is not None:
                pending.append(data.infos[index].allocation)  # type: ignore[arg-type]
                continue
            if claim is extended and variant is not None:
                wanted.append(variant.parsed)
                asked.append(variant.fingerprint)
            elif claim is extended:  # met by a device plugin here: nothing to allocate
                wanted.append(EMPTY_CLAIM)
                asked.append(repr(None))
            else:
                wanted.append(data.parsed[index])
                asked.append(data.fingerprints[index])
        try:
            results = self._answer(data, node, wanted, tuple(asked))
        except AllocationError as error:
            return self._allocation_failed(node, error)
        if results is None or len(results) != len(wanted):
            return CANNOT_ALLOCATE_STATUS
        return [*results, *pending]

    @staticmethod
    def _allocation_failed(node: NodeInfo, error: AllocationError) -> Status:
        """A timeout is the pod's Error (retried with backoff); a problem of the node's pools
        rejects the node; any other is the claims' or classes' and fails the pod."""
        if isinstance(error, AllocationTimeoutError):
            return Status.as_error(
                TimeoutError(f"node {node.name}: timed out trying to allocate devices")
            )
        if isinstance(error, NodeAllocationError):
            return Status.unresolvable(str(error))
        return Status.as_error(error)

    def _answer(
        self, data: StateData, node: NodeInfo, wanted: list[Claim], asked: tuple[str, ...]
    ) -> list[dict[str, Any]] | None:
        """The allocator's answer for the node: the node's last one when the same was asked
        and nothing it depends on changed (answers.py), else a new search."""
        allocator = data.allocator
        assert allocator is not None
        answers = self.answers
        answers.valid_for(allocator.index, allocator.classes)
        known = answers.known(node.name, node.labels, asked, data.pool_stamps)
        if not isinstance(known, Miss):
            return known
        deadline = None
        if self.filter_timeout > 0:
            deadline = time.monotonic() + self.filter_timeout
        results = allocator.allocate(Node(node.name, node.labels), wanted, deadline)
        answers.keep(
            node.name, node.labels, asked, data.pool_stamps, results, features=self.features
        )
        return results

    # ----- PostFilter

    def post_filter(
        self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        data: StateData | None = state.get(STATE_KEY)
        if data is None:
            # An earlier PreFilter rejected the pod before this one ran: upstream's PostFilter
            # then fails reading its state, and its error ends the message ("... not found").
            return None, Status.as_error(LookupError("not found"))
        if data.claims.empty():
            return None, self._nothing_undone(NO_CLAIMS_TO_DEALLOCATE)
        return self._deallocate_or_delete(data, pod)

    def pod_group_post_filter(
        self,
        state: PodGroupCycleState,
        group: GroupPolicy | None,
        unscheduled: Sequence[PodInfo],
        schedule: PodGroupSchedulingFunc,
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """PodGroupPostFilter (1.37), after a group's cycle found no room: what PostFilter
        does for one pod, for each member not placed (a claim of its own deallocated, a stale
        extended-resource claim deleted). None for a group with a topology constraint; an
        error when no member reached PreFilter in the cycle (upstream's `not found`). It
        never reruns the group's algorithm nor nominates."""
        return None, self._pod_group_post_filter(state, group, unscheduled)

    def _pod_group_post_filter(
        self, state: PodGroupCycleState, group: GroupPolicy | None, unscheduled: Sequence[PodInfo]
    ) -> Status:
        topology = self.handle.features.topology_aware_workload_scheduling
        if topology and group is not None and group.topology_key:
            return Status.unschedulable()
        found = state.get(STATE_KEY)
        if not isinstance(found, PodGroupStateData):
            return Status.as_error(LookupError("not found"))
        for pod in unscheduled:
            data = found.pods.get(pod.key)
            if data is not None and not data.claims.empty():
                _, status = self._deallocate_or_delete(data, pod)
                if status.code == Code.ERROR:
                    return status
        return Status.unschedulable(GROUP_CLAIMS_DONE)

    def _deallocate_or_delete(
        self, data: StateData, pod: PodInfo
    ) -> tuple[PostFilterResult | None, Status]:
        """deallocateOrDeletePodClaims: one unavailable claim only this pod holds is
        deallocated, or its stale extended-resource claim deleted."""
        extended = data.claims.extended_claim()
        extended_stale = extended is not None and not extendedclaim.in_memory(extended)
        for index in sorted(data.unavailable):
            claim = data.claims.get(index)
            if claim is extended:
                if extended_stale:
                    break
                continue
            if rc.allocation(claim) is None:
                continue  # an allocation shared in flight, out of reach: nothing to undo
            reserved = rc.reserved_for(claim)
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                return self._deallocate(claim)
        if extended is not None and extended_stale:
            try:
                extendedclaim.delete_claim(self.client, extended)
            except ClaimAPIError as error:
                return None, Status.as_error(error)
            return None, Status.unschedulable(DELETED)
        return None, self._nothing_undone(STILL_NOT_SCHEDULABLE)

    def _nothing_undone(self, why: str) -> Status:
        """PostFilter undid nothing: 1.36 says why, 1.37 says nothing."""
        return Status.unschedulable() if self.says_nothing_undone else Status.unschedulable(why)

    def _deallocate(self, claim: Object) -> tuple[PostFilterResult | None, Status]:
        status = {
            k: v
            for k, v in (claim.get("status") or {}).items()
            if k not in ("reservedFor", "allocation", "devices")
        }
        try:
            self.client.update_claim_status({**claim, "status": status})
        except ClaimAPIError as error:
            return None, Status.as_error(error)
        return None, Status.unschedulable(DEALLOCATED)

    # ----- Score

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        data: StateData = state.read(STATE_KEY)
        return self._score(data, node.name)

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        data: StateData = state.read(STATE_KEY)
        scores = np.zeros(len(slots), dtype=np.int64)
        if data.claims.empty() or not self.features.prioritized_list or not data.prioritized:
            return scores  # only subrequests chosen score
        for position, slot in enumerate(slots):
            score, status = self._score(data, snapshot.name(int(slot)))
            if status.code == Code.ERROR:
                raise RuntimeError(status.message())
            scores[position] = score
        return scores

    def _score(self, data: StateData, node_name: str) -> tuple[int, Status]:
        if data.claims.empty() or not self.features.prioritized_list:
            return 0, SUCCESS
        found = data.node_allocations.get(node_name)
        if found is None:
            return 0, SUCCESS
        try:
            return compute_score(data.claims, found), SUCCESS
        except IndexError as error:
            return 0, Status.as_error(error)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    # ----- Reserve

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        data: StateData = state.read(STATE_KEY)
        if data.claims.empty():
            return SUCCESS
        with_allocator = sum(1 for _ in data.claims.to_allocate())
        if with_allocator == 0 or data.allocator is None:
            return SUCCESS
        extended = data.claims.extended_claim()
        to_allocate = list(data.claims.to_allocate())
        user_claims_to_allocate = any(claim is not extended for _, claim in to_allocate)
        found = data.node_allocations.get(node_name)
        if found is None or not found.results:
            if not user_claims_to_allocate:
                return SUCCESS  # only the special claim, met by a device plugin here
            return Status.as_error(RuntimeError("claim allocation not found for node"))
        if len(found.results) != len(to_allocate) or len(found.results) != with_allocator:
            return Status.as_error(
                RuntimeError(
                    f"internal error, have {len(found.results)} allocations, "
                    f"{len(to_allocate)} claims to allocate, want {with_allocator} claims"
                )
            )
        return self._take(state, data, to_allocate, found)

    def _take(
        self,
        state: CycleState,
        data: StateData,
        to_allocate: list[tuple[int, Object]],
        found: NodeAllocation,
    ) -> Status:
        """Puts the node's allocations in flight, each claim's (a shared one is counted
        once more); in a group's cycle, notes them for the members after this one. Filter
        lists the new allocations first and the shared ones last, so a shared claim keeps
        the allocation PreFilter found for it (upstream pairs them by position alone, which
        mixes them up when a pod has both kinds)."""
        try:
            group = pod_group_state(state)
        except TypeError as error:
            return Status.as_error(error)
        extended = data.claims.extended_claim()
        fresh = iter(found.results)
        for index, claim in to_allocate:
            shared = data.infos[index].allocation
            allocation = shared if shared is not None else next(fresh)
            data.infos[index].allocation = allocation
            allocated = (found.extended_claim or claim) if claim is extended else claim
            pending = copied(allocated)
            metadata = pending.setdefault("metadata", {})
            finalizers = list(metadata.get("finalizers") or ())
            if rc.FINALIZER not in finalizers:
                metadata["finalizers"] = [*finalizers, rc.FINALIZER]
            pending["status"] = {**(pending.get("status") or {}), "allocation": allocation}
            self.dra.claims.signal_pending_allocation(rc.uid(allocated), pending)
            if group is not None:  # the group's next members share it
                group.pending_allocations.add(rc.uid(allocated))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        data: StateData | None = state.get(STATE_KEY)
        if data is None or data.claims.empty():
            return
        try:
            group = pod_group_state(state)
        except TypeError:
            return
        tracker = self.dra.claims
        for _, claim in data.claims.user_claims():
            # The allocation stays in flight while another member still shares it.
            if tracker.maybe_remove_pending_allocation(rc.uid(claim), False):
                tracker.restore(*rc.where(claim))
                if group is not None:
                    group.pending_allocations.discard(rc.uid(claim))
            if rc.allocation(claim) is not None and rc.is_reserved_for_pod(pod, claim):
                self._unreserve_claim(claim, pod)
        extendedclaim.unreserve(self, data)

    def _unreserve_claim(self, claim: Object, pod: PodInfo) -> None:
        """Removes the pod from the claim's reservedFor (a strategic-merge patch, so the
        latest claim is not needed); a failure is logged: the next attempt comes here again."""
        patch = {
            "metadata": {"uid": rc.metadata(claim).get("uid")},
            "status": {"reservedFor": [{"$patch": "delete", "uid": pod.uid}]},
        }
        try:
            self.client.patch_claim_status(*rc.where(claim), patch)
        except ClaimAPIError as error:
            log.error("unreserve resourceclaim %s: %s", rc.key(claim), error)

    # ----- explanations

    def explain_cycle(
        self,
        state: CycleState,
        pod: PodInfo,
        node: str | None,
        rejected: Sequence[explaining.RejectedGroup],
    ) -> dict[str, Any]:
        """The devices allocated per request on the chosen node, and on rejected nodes
        which claim and request could not be satisfied (explaining.py)."""
        data: StateData | None = state.get(STATE_KEY)
        if data is None or data.claims.empty():
            return {}
        return explaining.details(data, node, rejected, _NodeLabels(self.handle.snapshot))

    # ----- PreBind

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success when PreBind has claims to write, Skip otherwise."""
        data: StateData = state.read(STATE_KEY)
        return SKIP if data.claims.empty() else SUCCESS

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        data: StateData = state.read(STATE_KEY)
        if data.claims.empty():
            return SUCCESS
        try:
            for index, claim in data.claims.all():
                if not rc.is_reserved_for_pod(pod, claim):
                    data.claims.set(index, binding.bind_claim(self, data, index, pod, node_name))
        except binding.BindError as error:
            return Status.as_error(error)
        if not self.features.binding_and_status or not binding.has_binding_conditions(data):
            return SUCCESS
        return binding.wait_for_binding_conditions(self, data, pod, node_name)


def pod_group_state(state: CycleState) -> PodGroupStateData | None:
    """getPodGroupStateData: the plugin's data in the group's cycle state, made on first
    use; None outside a group's cycle. TypeError when another plugin took its key."""
    cycle = state.pod_group_cycle
    if cycle is None:
        return None
    found = cycle.get(STATE_KEY)
    if found is None:
        found = PodGroupStateData()
        cycle.write(STATE_KEY, found)
    if not isinstance(found, PodGroupStateData):
        raise TypeError("state is not podGroupStateData")
    return found


def allocator_features(gates: GateFeatures) -> Features:
    """AllocatorFeatures: the DRA gates the allocator follows, from the configuration's."""
    return Features(
        admin_access=gates.dra_admin_access,
        prioritized_list=gates.dra_prioritized_list,
        partitionable_devices=gates.dra_partitionable_devices,
        device_taints=gates.dra_device_taints,
        device_binding_conditions=gates.dra_device_binding_conditions,
        resource_claim_device_status=gates.dra_resource_claim_device_status,
        consumable_capacity=gates.dra_consumable_capacity,
        extended_resource=gates.dra_extended_resource,
        list_type_attributes=gates.dra_list_type_attributes,
        device_in_runtime_errors=gates.since(1, 37),
        cel_stored_list_types=gates.since(1, 37),
        cel_includes=gates.since(1, 36),
    )


def effective_timeouts(args: DynamicResourcesArgs, gates: GateFeatures) -> tuple[float, float]:
    """The args' timeouts as the plugin applies them: filterTimeout counts only with
    DRASchedulerFilterTimeout (the configuration refuses either timeout set while its gates
    are off, as ValidateDynamicResourcesArgs does)."""
    filter_timeout = args.filter_timeout if gates.dra_scheduler_filter_timeout else 0.0
    return filter_timeout, args.binding_timeout


class _NodeLabels(Mapping[str, Mapping[str, str]]):
    """Node labels by name, read from the snapshot as asked."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def __getitem__(self, name: str) -> Mapping[str, str]:
        info = self.snapshot.get(name)
        if info is None:
            raise KeyError(name)
        return info.labels

    def __iter__(self) -> Iterator[str]:
        return iter(self.snapshot.names(self.snapshot.order()))

    def __len__(self) -> int:
        return len(self.snapshot)


class _PodRef:
    """The namespace, name, UID and status of a pod given as its API object (queueing hints
    see the object, not a PodInfo)."""

    __slots__ = ("name", "namespace", "pod", "uid")

    def __init__(self, pod: Mapping[str, Any]) -> None:
        metadata = pod.get("metadata") or {}
        self.pod = pod
        self.namespace = str(metadata.get("namespace") or "default")
        self.name = str(metadata.get("name") or "")
        self.uid = str(metadata.get("uid") or "")


ClaimNames = list[tuple[str, str, bool]] | str


def _claim_names(pod: rc.PodLike) -> ClaimNames:
    """The pod's claims by name (its name for each, the claim's, whether the claim must be
    checked to be the pod's), or why one is not known yet (upstream's message)."""
    names: list[tuple[str, str, bool]] = []
    try:
        for name, pod_claim in pod_claim_names(pod.pod):
            claim_name, must_check_owner = rc.claim_name(pod, pod_claim)
            if claim_name is not None:
                names.append((name, claim_name, must_check_owner))
    except rc.ClaimError as error:
        return str(error)
    return names


def compute_score(claims: ClaimStore, found: NodeAllocation) -> int:
    """computeScore: 8 for each subrequest chosen first, 7 for a second choice, and so on;
    IndexError when Filter left fewer allocations than claims to allocate."""
    score = 0
    position = 0
    for _, claim in claims.all():
        allocation = rc.allocation(claim)
        if allocation is None:
            if position >= len(found.results):
                raise IndexError(
                    f"number of allocations {len(found.results)} is smaller than number of "
                    "claims needing allocation"
                )
            allocation = found.results[position]
            position += 1
        chosen = {
            str(result.get("request", ""))
            for result in (allocation.get("devices") or {}).get("results") or ()
            if rc.is_sub_request_ref(str(result.get("request", "")))
        }
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if request.get("exactly") is not None:
                continue
            for rank, sub in enumerate(request.get("firstAvailable") or ()):
                if f"{request.get('name', '')}/{sub.get('name', '')}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - rank
    return score


def new_uid() -> str:
    return str(uuid.uuid4())


Clock = Callable[[], float]

__all__ = ["NAME", "DynamicResources", "compute_score", "pod_claim_names"]
