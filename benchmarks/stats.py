"""Quantiles of raw samples, and of Prometheus histograms as `histogram_quantile()` reads them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

# (upper bound `le`, cumulative count), sorted by bound; the last bound is +Inf.
Bucket = tuple[float, float]


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) of samples, interpolated linearly between closest ranks."""
    if not samples:
        raise ValueError("percentile: no samples")
    if not 0 <= q <= 1:
        raise ValueError(f"percentile: q must be within [0, 1], got {q}")
    return float(np.quantile(np.asarray(samples, dtype=float), q))


def histogram_buckets(metrics_text: str, name: str) -> list[Bucket]:
    """The cumulative buckets of histogram `name` on a /metrics page, summed over its label sets."""
    totals: dict[float, float] = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name != name:
            continue
        for sample in family.samples:
            if sample.name == f"{name}_bucket":
                bound = float(sample.labels["le"])
                totals[bound] = totals.get(bound, 0.0) + sample.value
    return sorted(totals.items())


def counter_by_label(metrics_text: str, name: str, label: str) -> dict[str, float]:
    """Counter `name` on a /metrics page, summed per value of `label`."""
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name != name.removesuffix("_total"):
            continue
        for sample in family.samples:
            if sample.name == name:
                value = sample.labels.get(label, "")
                totals[value] = totals.get(value, 0.0) + sample.value
    return totals


def share_beyond_finite_buckets(buckets: Sequence[Bucket]) -> float:
    """The share of observations above the highest finite bound, where quantiles saturate."""
    if len(buckets) < 2 or not buckets[-1][1]:
        return 0.0
    return (buckets[-1][1] - buckets[-2][1]) / buckets[-1][1]


def histogram_quantile(q: float, buckets: Sequence[Bucket]) -> float | None:
    """Prometheus's histogram_quantile(): the bucket holding rank q*count, interpolated linearly.

    The lowest bucket starts at 0; a rank that falls in the +Inf bucket yields the highest finite
    bound. None when the histogram is empty (Prometheus says NaN)."""
    if not 0 < q <= 1:
        raise ValueError(f"histogram_quantile: q must be within (0, 1], got {q}")
    if len(buckets) < 2 or buckets[-1][0] != math.inf:
        raise ValueError("histogram_quantile: needs finite buckets and a final +Inf bucket")
    total = buckets[-1][1]
    if total == 0:
        return None
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for index, (bound, count) in enumerate(buckets[:-1]):
        if count >= rank:
            if index == 0 and bound <= 0:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (
                count - lower_count
            )
        lower_bound, lower_count = bound, count
    return lower_bound
