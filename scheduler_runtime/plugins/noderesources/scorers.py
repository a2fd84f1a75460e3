"""The resource scoring strategies over many nodes at once (integer arithmetic as upstream:
Go's division truncates toward zero)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler_runtime.config.args import UtilizationShapePoint
from scheduler_runtime.framework.interface import MAX_NODE_SCORE
from scheduler_runtime.framework.snapshot import Int64s

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


def go_div(numerator: Int64s, denominator: Int64s | int) -> Int64s:
    """Integer division truncating toward zero, as Go does."""
    quotient: Int64s = np.sign(numerator) * (np.abs(numerator) // np.abs(denominator))
    return quotient * np.sign(denominator)


def _safe(allocatable: Int64s) -> Int64s:
    safe: Int64s = np.where(allocatable == 0, 1, allocatable)
    return safe


def least_allocated(requested: Int64s, allocatable: Int64s) -> Int64s:
    """(capacity - requested) * 100 / capacity, 0 when over capacity."""
    scores = (allocatable - requested) * MAX_NODE_SCORE // _safe(allocatable)
    result: Int64s = np.where((allocatable == 0) | (requested > allocatable), 0, scores)
    return result


def most_allocated(requested: Int64s, allocatable: Int64s) -> Int64s:
    """min(requested, capacity) * 100 / capacity."""
    scores = np.minimum(requested, allocatable) * MAX_NODE_SCORE // _safe(allocatable)
    result: Int64s = np.where(allocatable == 0, 0, scores)
    return result


def weighted_mean(per_resource: Sequence[tuple[Int64s, Int64s, int]]) -> Int64s:
    """Weighted mean over the resources a node has (allocatable > 0), truncated."""
    total = np.zeros_like(per_resource[0][0])
    weights = np.zeros_like(per_resource[0][0])
    for scores, allocatable, weight in per_resource:
        present = allocatable != 0
        total += np.where(present, scores * weight, 0)
        weights += np.where(present, weight, 0)
    mean: Int64s = np.where(weights == 0, 0, total // np.where(weights == 0, 1, weights))
    return mean


def broken_linear(shape: Sequence[tuple[int, int]], utilization: Int64s) -> Int64s:
    """helper.BuildBrokenLinearFunction: piecewise-linear interpolation between points."""
    result = np.full_like(utilization, shape[-1][1])
    done = np.zeros(utilization.shape, dtype=np.bool_)
    for index, (point_utilization, point_score) in enumerate(shape):
        here = ~done & (utilization <= point_utilization)
        if index == 0:
            value = np.full_like(utilization, point_score)
        else:
            previous_utilization, previous_score = shape[index - 1]
            value = previous_score + go_div(
                (point_score - previous_score) * (utilization - previous_utilization),
                point_utilization - previous_utilization,
            )
        result = np.where(here, value, result)
        done |= here
    return result


def requested_to_capacity_ratio(
    shape_points: Sequence[UtilizationShapePoint],
    per_resource: Sequence[tuple[Int64s, Int64s, int]],
) -> Int64s:
    """Each resource's utilization through the shape (scores scaled 0-10 -> 0-100); the
    weighted mean counts only resources scoring above 0, rounded half away from zero."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    shape = [(p.utilization, p.score * scale) for p in shape_points]
    total = np.zeros_like(per_resource[0][0])
    weights = np.zeros_like(per_resource[0][0])
    for requested, allocatable, weight in per_resource:
        full = (allocatable == 0) | (requested > allocatable)
        utilization = np.where(
            full, MAX_UTILIZATION, requested * MAX_UTILIZATION // _safe(allocatable)
        )
        scores = broken_linear(shape, utilization)
        counted = (allocatable != 0) & (scores > 0)
        total += np.where(counted, scores * weight, 0)
        weights += np.where(counted, weight, 0)
    ratio = total / np.where(weights == 0, 1, weights)
    rounded: Int64s = np.where(weights == 0, 0, np.floor(ratio + 0.5)).astype(np.int64)
    return rounded


def balanced(fractions: Sequence[tuple[Int64s, Int64s]]) -> Int64s:
    """balancedResourceScorer: 100 x (1 - standard deviation of the usage fractions), with
    the sums taken resource by resource in order so the floats match upstream's."""
    if len(fractions) == 2 and all((allocatable != 0).all() for _, allocatable in fractions):
        return _balanced_pair(fractions)
    shape = fractions[0][0].shape
    present_count = np.zeros(shape, dtype=np.int64)
    total = np.zeros(shape, dtype=np.float64)
    first = np.zeros(shape, dtype=np.float64)
    second = np.zeros(shape, dtype=np.float64)
    columns = []
    for requested, allocatable in fractions:
        present = allocatable != 0
        ratio = np.where(present, requested / np.where(present, allocatable, 1), 0.0)
        fraction = np.minimum(ratio, 1.0)
        columns.append((fraction, present))
        first = np.where(present & (present_count == 0), fraction, first)
        second = np.where(present & (present_count == 1), fraction, second)
        total = total + np.where(present, fraction, 0.0)
        present_count += present
    std = np.where(present_count == 2, np.abs((first - second) / 2), 0.0)
    many = present_count > 2
    if many.any():
        count = np.maximum(present_count, 1)
        mean = total / count
        squares = np.zeros(shape, dtype=np.float64)
        for fraction, present in columns:
            squares = squares + np.where(present, (fraction - mean) * (fraction - mean), 0.0)
        std = np.where(many, np.sqrt(squares / count), std)
    scores: Int64s = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    return scores


def _balanced_pair(fractions: Sequence[tuple[Int64s, Int64s]]) -> Int64s:
    """The common case, two resources that every node has: std = |f1 - f2| / 2."""
    (requested_1, allocatable_1), (requested_2, allocatable_2) = fractions
    first = np.minimum(requested_1 / allocatable_1, 1.0)
    second = np.minimum(requested_2 / allocatable_2, 1.0)
    scores: Int64s = ((1 - np.abs((first - second) / 2)) * MAX_NODE_SCORE).astype(np.int64)
    return scores
