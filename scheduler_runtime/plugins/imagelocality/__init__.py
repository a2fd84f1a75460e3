"""ImageLocality: prefer nodes that already hold the pod's images, weighted by how widely
each image is spread (so one node holding it does not attract everything).

The images are the init and regular containers' and, from 1.36, the image volumes'; the
threshold the sum is scaled against counts the containers and, from 1.37, the image volumes."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from scheduler_runtime.framework.interface import MAX_NODE_SCORE, CycleState, PluginBase
from scheduler_runtime.framework.nodeinfo import NodeInfo
from scheduler_runtime.framework.podinfo import PodInfo, normalized_image_name
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

    def _images(self, pod: PodInfo) -> tuple[tuple[str, ...], int]:
        """The images scored and the count the threshold is scaled by, as the release does."""
        features = self.handle.features
        if not features.since(1, 36):
            return pod.images, pod.container_count
        volumes = tuple(
            normalized_image_name(volume["image"].get("reference") or "")
            for volume in pod.spec.get("volumes") or ()
            if volume.get("image") is not None
        )
        if not volumes:
            return pod.images, pod.container_count
        count = pod.container_count + (len(volumes) if features.since(1, 37) else 0)
        return pod.images + volumes, count

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        snapshot = self.handle.snapshot
        total = len(snapshot)
        images, count = self._images(pod)
        summed = 0
        for image in images:
            size = node.images.get(image)
            if size is not None:
                summed += int(float(size) * (snapshot.image_node_count[image] / total))
        scores = calculate_priority(np.array([summed], dtype=np.int64), count)
        return int(scores[0]), SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        total = len(snapshot)
        images, count = self._images(pod)
        summed = np.zeros(len(slots), dtype=np.int64)
        found = False
        for image in images:
            sizes = snapshot.image_sizes.get(image)
            if sizes is None:
                continue
            found = True
            spread = snapshot.image_node_count[image] / total
            summed += (sizes[slots].astype(np.float64) * spread).astype(np.int64)
        # None of its images on any node: every sum is under the minimum, every score 0.
        return calculate_priority(summed, count) if found else summed


__all__ = ["ImageLocality"]
