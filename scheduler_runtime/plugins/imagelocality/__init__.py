"""ImageLocality: prefer nodes that already hold the pod's images, weighted by how widely
each image is spread (so one node holding it does not attract everything)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.interface import MAX_NODE_SCORE, CycleState, PluginBase
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.snapshot import Int64s, Slots, Snapshot
from scheduler_runtime.framework.status import SUCCESS, Status

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def calculate_priority(sum_scores: Int64s, containers: int) -> Int64s:
    """Clamps the summed image scores to [23MiB, 1000MiB x containers] and scales to 0-100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * containers
    clamped = np.clip(sum_scores, MIN_THRESHOLD, max_threshold)
    scores: Int64s = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
    return scores


class ImageLocality(PluginBase[None]):
    name: ClassVar[str] = "ImageLocality"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        snapshot = self.handle.snapshot
        total = len(snapshot)
        summed = 0
        for image in pod.images:
            size = node.images.get(image)
            if size is not None:
                summed += int(float(size) * (snapshot.image_node_count[image] / total))
        scores = calculate_priority(np.array([summed], dtype=np.int64), pod.container_count)
        return int(scores[0]), SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        total = len(snapshot)
        summed = np.zeros(len(slots), dtype=np.int64)
        found = False
        for image in pod.images:
            sizes = snapshot.image_sizes.get(image)
            if sizes is None:
                continue
            found = True
            spread = snapshot.image_node_count[image] / total
            summed += (sizes[slots].astype(np.float64) * spread).astype(np.int64)
        # None of its images on any node: every sum is under the minimum, every score 0.
        return calculate_priority(summed, pod.container_count) if found else summed


__all__ = ["ImageLocality"]
