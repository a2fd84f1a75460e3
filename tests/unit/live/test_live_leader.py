"""Leader election bookkeeping: identities as kube-scheduler makes them, and when a holder's
record counts as expired (observed on our clock, crediting the holder's renewTime by at most
one retry period)."""

from __future__ import annotations

import datetime
import re

import pytest

from scheduler_runtime.live.kube import micro_time
from scheduler_runtime.live.leader import LeaderElector, LeaseConfig, identity

NOW = 1_800_000_000.0
CONFIG = LeaseConfig(
    name="lease", namespace="ns", lease_duration=15, renew_deadline=10, retry_period=2
)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def elector(clock: Clock) -> LeaderElector:
    return LeaderElector(
        None,  # type: ignore[arg-type]  # these checks never talk to the API
        CONFIG,
        "me_1",
        on_started_leading=lambda: None,
        on_stopped_leading=lambda: None,
        wall_clock=clock,
    )


def record(holder: str, renewed_at: float, duration: int = 15) -> dict[str, object]:
    moment = datetime.datetime.fromtimestamp(renewed_at, datetime.UTC)
    return {
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "renewTime": micro_time(moment),
        }
    }


def test_identity_is_hostname_underscore_uuid() -> None:
    assert re.fullmatch(r"web-0_[0-9a-f-]{36}", identity("web-0"))
    assert identity("web-0") != identity("web-0")


@pytest.mark.parametrize(
    ("renewed_ago", "expires_after"),
    [
        (1.0, 14.0),  # renewed a second before we looked: that second counts
        (60.0, 13.0),  # an old renewTime (or a skewed clock) is credited one retry period only
        (-30.0, 15.0),  # a renewTime in our future counts from when we saw it
    ],
)
def test_holder_expires_lease_duration_after_its_last_renewal(
    renewed_ago: float, expires_after: float
) -> None:
    clock = Clock()
    candidate = elector(clock)
    candidate._observe(record("other_2", NOW - renewed_ago))
    assert candidate.leader == "other_2"
    clock.now = NOW + expires_after - 0.01
    assert candidate.leader_is_healthy()
    clock.now = NOW + expires_after
    assert not candidate.leader_is_healthy()


def test_an_unchanged_record_does_not_extend_the_lease() -> None:
    clock = Clock()
    candidate = elector(clock)
    candidate._observe(record("other_2", NOW))
    clock.now = NOW + 10
    candidate._observe(record("other_2", NOW))  # same record read again: not a renewal
    clock.now = NOW + 15
    assert not candidate.leader_is_healthy()


def test_released_lease_has_no_healthy_leader() -> None:
    candidate = elector(Clock())
    candidate._observe(record("", NOW, duration=1))
    assert candidate.leader == ""
    assert not candidate.leader_is_healthy()
