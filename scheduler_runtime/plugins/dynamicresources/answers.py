"""Each node's last allocation answer, kept for the next pod that asks the same of it.

The structured allocator's answer for a node depends only on what the claims ask for (their
specs), the node (name and labels), the ResourceSlices and DeviceClasses, and what is taken
of the node's pools. Pods made from one template ask the same, and scheduling one pod changes
what is taken on one node only: so, while the slices and classes stay, a node whose pools'
stamps (backend.claims: when what is taken of a pool last changed) are those of its last
answer gets that answer again, without a search. Answers with a share of a device (consumable
capacity) are not kept: each holds a new share ID. Errors are never kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.dra.allocator import Features, Node, SliceIndex
from scheduler_runtime.dra.model import DeviceClass

Results = list[dict[str, Any]] | None
Stamps = Mapping[tuple[str, str], int]


class Miss:
    """No answer is known (an answer may be None: nothing fits)."""


MISS = Miss()


@dataclass(slots=True)
class _Answer:
    labels: Mapping[str, str]
    pools: tuple[tuple[str, str], ...]  # the pools with devices here: (driver, pool name)
    asked: tuple[str, ...] = ()
    stamps: tuple[int, ...] = ()
    results: Results | Miss = MISS


class NodeAnswers:
    """The last answer per node, for the slices and classes it was computed with. Used by
    the scheduling cycle only (one pod's Filter at a time)."""

    def __init__(self) -> None:
        self._answers: dict[str, _Answer] = {}
        self._index: SliceIndex | None = None
        self._classes: Mapping[str, DeviceClass] | None = None

    def valid_for(self, index: SliceIndex, classes: Mapping[str, DeviceClass]) -> None:
        """Forgets every answer once the slices or the classes changed."""
        if index is not self._index or classes is not self._classes:
            self._answers.clear()
            self._index, self._classes = index, classes

    def known(
        self, node: str, labels: Mapping[str, str], asked: tuple[str, ...], stamps: Stamps
    ) -> Results | Miss:
        """The node's answer to `asked` while the stamps of its pools are `stamps`'s."""
        found = self._answers.get(node)
        if found is None or found.labels is not labels or found.asked != asked:
            return MISS
        for pool, stamp in zip(found.pools, found.stamps, strict=True):
            if stamps.get(pool, 0) != stamp:
                return MISS
        return found.results

    def keep(
        self,
        node: str,
        labels: Mapping[str, str],
        asked: tuple[str, ...],
        stamps: Stamps,
        results: Results,
        *,
        features: Features,
    ) -> None:
        """Keeps the node's answer (not one holding shares of devices)."""
        if results is not None and any(_shares(allocation) for allocation in results):
            self._answers.pop(node, None)
            return
        found = self._answers.get(node)
        if found is None or found.labels is not labels:
            assert self._index is not None
            # Only the pools with devices here count: of the others (a pool of another
            # node seen for its shared counters) nothing can be taken on this node.
            pools = self._index.searchable(self._index.pools(Node(node, labels), features))
            found = _Answer(labels, tuple((pool.driver, pool.name) for pool in pools))
            self._answers[node] = found
        found.asked = asked
        found.stamps = tuple([stamps.get(pool, 0) for pool in found.pools])
        found.results = results


def _shares(allocation: Mapping[str, Any]) -> bool:
    results: Sequence[Mapping[str, Any]] = (allocation.get("devices") or {}).get("results") or ()
    return any("shareID" in result for result in results)


__all__ = ["MISS", "Miss", "NodeAnswers"]
