"""Quantiles the benchmark reports: raw samples, and Prometheus histograms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.stats import (
    histogram_buckets,
    histogram_quantile,
    percentile,
    share_beyond_finite_buckets,
)

INF = math.inf


def test_percentile_interpolates_between_closest_ranks() -> None:
    samples = [float(n) for n in range(1, 101)]
    assert percentile(samples, 0.5) == pytest.approx(50.5)
    assert percentile(samples, 0.99) == pytest.approx(99.01)
    assert percentile(samples, 0) == 1
    assert percentile(samples, 1) == 100


def test_percentile_of_one_sample_is_that_sample() -> None:
    assert percentile([0.25], 0.99) == 0.25


@pytest.mark.parametrize(("samples", "q", "reason"), [([], 0.5, "no samples"), ([1.0], 1.5, "q")])
def test_percentile_rejects_bad_input(samples: list[float], q: float, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        percentile(samples, q)


BUCKETS = [(0.001, 0.0), (0.002, 50.0), (0.004, 100.0), (INF, 100.0)]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (0.25, 0.0015),  # rank 25 of the 50 in (1 ms, 2 ms]
        (0.5, 0.002),
        (0.99, 0.00396),  # rank 99: 49 of the 50 in (2 ms, 4 ms]
        (1.0, 0.004),
    ],
)
def test_histogram_quantile_interpolates_inside_the_bucket(q: float, expected: float) -> None:
    assert histogram_quantile(q, BUCKETS) == pytest.approx(expected)


def test_lowest_bucket_starts_at_zero() -> None:
    assert histogram_quantile(0.5, [(0.5, 10.0), (INF, 10.0)]) == pytest.approx(0.25)


def test_rank_in_the_inf_bucket_is_the_highest_finite_bound() -> None:
    assert histogram_quantile(0.99, [(0.5, 1.0), (1.0, 1.0), (INF, 10.0)]) == 1.0


def test_non_positive_lowest_bound_is_returned_as_is() -> None:
    assert histogram_quantile(0.2, [(0.0, 5.0), (1.0, 5.0), (INF, 10.0)]) == 0.0


def test_empty_histogram_has_no_quantile() -> None:
    assert histogram_quantile(0.5, [(0.1, 0.0), (INF, 0.0)]) is None


@pytest.mark.parametrize(
    ("q", "buckets", "reason"),
    [
        (0.0, BUCKETS, "q must be"),
        (1.2, BUCKETS, "q must be"),
        (0.5, [(0.1, 1.0), (0.2, 2.0)], r"\+Inf"),
        (0.5, [(INF, 2.0)], "finite buckets"),
    ],
)
def test_histogram_quantile_rejects_bad_input(
    q: float, buckets: list[tuple[float, float]], reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        histogram_quantile(q, buckets)


@given(
    counts=st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=15),
    q=st.floats(min_value=0.01, max_value=1.0),
)
def test_histogram_quantile_stays_within_the_finite_bounds(counts: list[int], q: float) -> None:
    bounds = [0.001 * 2**i for i in range(len(counts))]
    cumulative = [float(sum(counts[: i + 1])) for i in range(len(counts))]
    buckets = [*zip(bounds, cumulative, strict=True), (INF, cumulative[-1])]
    value = histogram_quantile(q, buckets)
    if cumulative[-1] == 0:
        assert value is None
    else:
        assert value is not None
        assert 0 <= value <= bounds[-1]
        assert histogram_quantile(min(1.0, q + 0.01), buckets) >= value  # type: ignore[operator]


METRICS = """\
# HELP scheduler_scheduling_attempt_duration_seconds [STABLE] Scheduling attempt latency
# TYPE scheduler_scheduling_attempt_duration_seconds histogram
scheduler_scheduling_attempt_duration_seconds_bucket{profile="p",result="scheduled",le="0.001"} 3
scheduler_scheduling_attempt_duration_seconds_bucket{profile="p",result="scheduled",le="0.002"} 8
scheduler_scheduling_attempt_duration_seconds_bucket{profile="p",result="scheduled",le="+Inf"} 10
scheduler_scheduling_attempt_duration_seconds_sum{profile="p",result="scheduled"} 0.02
scheduler_scheduling_attempt_duration_seconds_count{profile="p",result="scheduled"} 10
scheduler_scheduling_attempt_duration_seconds_bucket{profile="p",result="error",le="0.001"} 0
scheduler_scheduling_attempt_duration_seconds_bucket{profile="p",result="error",le="0.002"} 1
scheduler_scheduling_attempt_duration_seconds_bucket{profile="p",result="error",le="+Inf"} 2
scheduler_scheduling_attempt_duration_seconds_sum{profile="p",result="error"} 0.01
scheduler_scheduling_attempt_duration_seconds_count{profile="p",result="error"} 2
# HELP scheduler_pending_pods Number of pending pods
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 4
"""


def test_buckets_are_summed_over_label_sets_and_sorted() -> None:
    buckets = histogram_buckets(METRICS, "scheduler_scheduling_attempt_duration_seconds")
    assert buckets == [(0.001, 3.0), (0.002, 9.0), (INF, 12.0)]


def test_a_missing_histogram_has_no_buckets() -> None:
    assert histogram_buckets(METRICS, "scheduler_e2e_scheduling_duration_seconds") == []


def test_share_beyond_the_finite_buckets() -> None:
    assert share_beyond_finite_buckets([(0.5, 6.0), (1.0, 8.0), (INF, 10.0)]) == 0.2
    assert share_beyond_finite_buckets(BUCKETS) == 0.0
    assert share_beyond_finite_buckets([(0.5, 0.0), (INF, 0.0)]) == 0.0
