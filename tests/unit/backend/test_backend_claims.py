"""The backend's DRA state (upstream's DRA manager over the assume cache): claims as the
informer and the scheduler's own writes know them, the devices they and the allocations in
flight take, and the events each change sends to the queue."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from scheduler_runtime.backend.claims import DRAState
from scheduler_runtime.framework.dra import ClaimCacheError
from scheduler_runtime.framework.events import ActionType, ClusterEvent


def claim(version: int, *devices: str, share: str | None = None, **extra: Any) -> dict[str, Any]:
    results = [
        {
            "request": "r",
            "driver": "d",
            "pool": "p",
            "device": name,
            **({"shareID": share} if share else {}),
        }
        for name in devices
    ]
    status = {"allocation": {"devices": {"results": results}}} if devices else {}
    return {
        "metadata": {"name": "c", "namespace": "ns", "uid": "u", "resourceVersion": str(version)},
        "status": {**status, **extra},
    }


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, ActionType]] = []

    def __call__(self, event: ClusterEvent, old: Any, new: Any) -> None:
        self.seen.append((event.resource, event.action))


@pytest.fixture
def events() -> Recorder:
    return Recorder()


def test_only_newer_versions_replace_a_claim(events: Recorder) -> None:
    state = DRAState(events)
    state.upsert("ResourceClaim", claim(2))
    state.upsert("ResourceClaim", claim(1, "dev"))  # older: ignored, as the assume cache does
    assert state.claims.get("ns", "c") == claim(2)
    assert events.seen == [("resource.k8s.io/ResourceClaim", ActionType.ADD)]


def test_an_assumed_claim_shows_until_restored_and_counts_its_devices(events: Recorder) -> None:
    state = DRAState(events)
    state.upsert("ResourceClaim", claim(2))
    state.claims.assume_after_api_call(claim(3, "dev"))
    assert state.claims.get("ns", "c") == claim(3, "dev")
    assert state.claims.allocated_devices().devices == {("d", "p", "dev")}
    state.claims.restore("ns", "c")
    assert state.claims.get("ns", "c") == claim(2)
    assert state.claims.allocated_devices().devices == set()
    update = ("resource.k8s.io/ResourceClaim", ActionType.UPDATE_OTHER)
    assert events.seen[1:] == [update, update]


def test_the_informer_catches_up_with_an_assumption(events: Recorder) -> None:
    state = DRAState(events)
    state.upsert("ResourceClaim", claim(2))
    state.claims.assume_after_api_call(claim(3, "dev"))
    state.upsert("ResourceClaim", claim(3, "dev"))  # the same version: nothing new
    state.upsert("ResourceClaim", claim(4, "dev", reservedFor=[{"uid": "x"}]))
    state.claims.restore("ns", "c")  # the informer's version is the latest now
    assert state.claims.get("ns", "c") == claim(4, "dev", reservedFor=[{"uid": "x"}])
    assert state.claims.allocated_devices().devices == {("d", "p", "dev")}


def test_assuming_an_unknown_or_older_claim_is_refused() -> None:
    state = DRAState(Recorder())
    with pytest.raises(ClaimCacheError, match='could not find ResourceClaim "ns/c"'):
        state.claims.assume_after_api_call(claim(1))
    state.upsert("ResourceClaim", claim(5))
    with pytest.raises(ClaimCacheError, match=r"out of sync \(stored: 5, assume: 4\)"):
        state.claims.assume_after_api_call(claim(4))


def test_allocations_in_flight_take_devices_until_the_last_sharer_is_done() -> None:
    state = DRAState(Recorder())
    flying = claim(1, "dev")
    state.claims.signal_pending_allocation("u", flying)
    state.claims.signal_pending_allocation("u", flying)  # a second pod shares it
    assert state.claims.pending_allocation("u") == flying["status"]["allocation"]
    assert state.claims.allocated_devices().devices == {("d", "p", "dev")}
    assert not state.claims.maybe_remove_pending_allocation("u", force=False)
    assert state.claims.maybe_remove_pending_allocation("u", force=False)
    assert state.claims.allocated_devices().devices == set()
    state.claims.signal_pending_allocation("u", flying)
    assert state.claims.maybe_remove_pending_allocation("u", force=True)


def test_shares_of_a_device_count_as_the_device_without_consumable_capacity() -> None:
    shared = claim(1, "dev", share="s1")
    with_capacity = DRAState(Recorder())
    with_capacity.upsert("ResourceClaim", shared)
    assert with_capacity.claims.allocated_devices().shared == {("d", "p", "dev", "s1")}
    without = DRAState(Recorder(), consumable_capacity=False)
    without.upsert("ResourceClaim", shared)
    taken = without.claims.allocated_devices()
    assert (taken.devices, taken.shared) == ({("d", "p", "dev")}, set())


def test_admin_access_takes_no_device() -> None:
    state = DRAState(Recorder())
    admin = claim(1, "dev")
    admin["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    state.upsert("ResourceClaim", admin)
    assert state.claims.allocated_devices().devices == set()


def test_slices_change_their_revision_only_when_they_change(events: Recorder) -> None:
    state = DRAState(events)
    piece = {"metadata": {"name": "s", "resourceVersion": "1"}, "spec": {"driver": "d"}}
    state.upsert("ResourceSlice", piece)
    revision, slices = state.slices()
    state.upsert("ResourceSlice", dict(piece))
    assert state.slices() == (revision, slices)
    state.replace("ResourceSlice", [])
    assert state.slices()[0] > revision
    assert state.slices()[1] == ()
    assert events.seen == [
        ("resource.k8s.io/ResourceSlice", ActionType.ADD),
        ("resource.k8s.io/ResourceSlice", ActionType.DELETE),
    ]


def test_a_class_backs_its_extended_resource_before_the_queue_hears_of_it() -> None:
    seen: list[Any] = []
    state: DRAState

    def record(event: ClusterEvent, old: Any, new: Any) -> None:
        seen.append(state.extended_resource_class("example.com/gpu"))

    state = DRAState(record)
    cls = {"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": "example.com/gpu"}}
    state.upsert("DeviceClass", cls)
    assert seen == [cls]
    assert state.extended_resource_class("deviceclass.resource.kubernetes.io/gpu") == cls
    state.delete("DeviceClass", cls)
    assert state.extended_resource_class("example.com/gpu") is None


def test_a_wait_for_a_claim_ends_when_the_informer_reports_it(events: Recorder) -> None:
    """PreBind waits for the claim it created to reach the cache: woken by the watch's
    report, not by polling, and told when it never came."""
    state = DRAState(events)
    assert not state.claims.wait_known("ns", "c", 0.05)
    reporter = threading.Timer(0.05, state.upsert, ("ResourceClaim", claim(1)))
    reporter.start()
    assert state.claims.wait_known("ns", "c", 30)
    reporter.join()
    assert state.claims.wait_known("ns", "c", 0)  # known already: no wait at all
