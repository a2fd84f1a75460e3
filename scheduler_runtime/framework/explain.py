"""Why a pod went where it went, or nowhere: every filtered-out node with the plugin and
reason that rejected it, and the per-plugin weighted scores of the best candidates.

Built from what one scheduling cycle already computed (the diagnosis and the scores), so
explaining costs a pass over the rejected nodes, not another cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduler_runtime.framework.algorithm import Placement, SchedulingAlgorithm
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.framework.types import Diagnosis

TOP_CANDIDATES = 3
NOT_EVALUATED = "not evaluated: the search stopped once enough nodes fit"


@dataclass(frozen=True)
class Rejected:
    """Nodes one filter plugin rejected for one reason."""

    plugin: str
    reason: str
    nodes: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "reason": self.reason, "nodes": list(self.nodes)}


@dataclass(frozen=True)
class Candidate:
    """A node that fit, its total and each score plugin's (normalized score, weight)."""

    node: str
    total: int
    scores: dict[str, tuple[int, int]]

    def as_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "total": self.total,
            "scores": {
                plugin: {"score": score, "weight": weight, "weighted": score * weight}
                for plugin, (score, weight) in self.scores.items()
            },
        }


@dataclass(frozen=True)
class Explanation:
    namespace: str
    name: str
    profile: str
    node: str | None
    message: str | None = None
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    filtered: tuple[Rejected, ...] = ()
    candidates: tuple[Candidate, ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def as_json(self) -> dict[str, Any]:
        return {
            "pod": self.key,
            "profile": self.profile,
            "node": self.node,
            "message": self.message,
            "evaluatedNodes": self.evaluated_nodes,
            "feasibleNodes": self.feasible_nodes,
            "filtered": [rejected.as_json() for rejected in self.filtered],
            "candidates": [candidate.as_json() for candidate in self.candidates],
        }


def rejected_nodes(diagnosis: Diagnosis, snapshot: Snapshot, fits: set[str]) -> list[Rejected]:
    """Every node that did not fit, grouped by (plugin, reason) in the order seen. Nodes no
    filter saw share the diagnosis' absent status (a PreFilter that ruled them out), or were
    not evaluated at all when the search stopped early."""
    groups: dict[tuple[str, str], list[str]] = {}
    seen: set[str] = set(fits)
    for rejection in diagnosis.node_to_status.rejections:
        names = [snapshot.name(int(slot)) for slot in rejection.slots]
        seen.update(names)
        for reason, mask in rejection.reasons:
            hits = np.flatnonzero(mask)
            groups.setdefault((rejection.plugin, reason), []).extend(names[i] for i in hits)
    for name, status in diagnosis.node_to_status.extra.items():
        seen.add(name)
        for reason in status.reasons:
            groups.setdefault((status.plugin, reason), []).append(name)
    if len(seen) == len(snapshot):
        return [
            Rejected(plugin, reason, tuple(nodes)) for (plugin, reason), nodes in groups.items()
        ]
    unseen = [snapshot.name(int(slot)) for slot in snapshot.order()]
    unseen = [name for name in unseen if name not in seen]
    if unseen:
        absent = diagnosis.node_to_status.absent
        for reason in absent.reasons or (NOT_EVALUATED,):
            groups.setdefault((absent.plugin, reason), []).extend(unseen)
    return [Rejected(plugin, reason, tuple(nodes)) for (plugin, reason), nodes in groups.items()]


def top_candidates(
    placement: Placement, snapshot: Snapshot, weights: dict[str, int], chosen: str, top: int
) -> list[Candidate]:
    """The chosen node first, then the other best totals."""
    order = np.argsort(-placement.totals, kind="stable")
    chosen_slot = snapshot.slot(chosen)
    positions = [int(p) for p in order if placement.slots[p] == chosen_slot]
    positions += [int(p) for p in order if placement.slots[p] != chosen_slot][: top - 1]
    return [
        Candidate(
            node=snapshot.name(int(placement.slots[p])),
            total=int(placement.totals[p]),
            scores={
                plugin: (int(values[p]), weights.get(plugin, 1))
                for plugin, values in placement.by_plugin.items()
            },
        )
        for p in positions
    ]


def explain(
    pod: PodInfo,
    framework: Framework,
    algorithm: SchedulingAlgorithm,
    *,
    node: str | None,
    message: str | None = None,
    diagnosis: Diagnosis | None = None,
    top: int = TOP_CANDIDATES,
) -> Explanation:
    """The explanation of the cycle `algorithm` just ran for `pod` (node None: it failed;
    `diagnosis` then comes from the FitError)."""
    snapshot = algorithm.snapshot
    diagnosis = diagnosis or algorithm.last_diagnosis
    placement = algorithm.last_placement if node is not None else None
    fits = {snapshot.name(int(slot)) for slot in algorithm.last_feasible}
    filtered = rejected_nodes(diagnosis, snapshot, fits) if diagnosis is not None else []
    candidates = (
        top_candidates(placement, snapshot, framework.score_weights, node, top)
        if placement is not None and node is not None
        else []
    )
    evaluated = len(fits) + (len(diagnosis.node_to_status) if diagnosis is not None else 0)
    return Explanation(
        namespace=pod.namespace,
        name=pod.name,
        profile=framework.scheduler_name,
        node=node,
        message=message,
        evaluated_nodes=evaluated,
        feasible_nodes=len(fits),
        filtered=tuple(filtered),
        candidates=tuple(candidates),
    )


def annotation(explanation: Explanation) -> str:
    """One compact line for a pod annotation: the chosen node's score breakdown and the
    rejection counts, e.g. `node=n2 total=412 NodeResourcesFit=90x1 ... | rejected:
    NodeAffinity 3, TaintToleration 1`."""
    parts = [f"node={explanation.node or '<none>'}"]
    if explanation.candidates:
        best = explanation.candidates[0]
        parts.append(f"total={best.total}")
        parts += [f"{plugin}={score}x{weight}" for plugin, (score, weight) in best.scores.items()]
    by_plugin: dict[str, set[str]] = {}
    for rejected in explanation.filtered:
        by_plugin.setdefault(rejected.plugin or "-", set()).update(rejected.nodes)
    text = " ".join(parts)
    if by_plugin:
        text += " | rejected: " + ", ".join(
            f"{plugin} {len(nodes)}" for plugin, nodes in by_plugin.items()
        )
    return text


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def format_explanation(document: dict[str, Any]) -> str:
    """An explanation's JSON (`Explanation.as_json`) as a person reads it: the outcome, each
    filtered-out node with the plugin and reason, and the candidates' score breakdown."""
    pod, node = document["pod"], document.get("node")
    outcome = f"scheduled on {node}" if node else "not scheduled"
    lines = [f"Pod {pod} (profile {document['profile']}): {outcome}"]
    if document.get("message"):
        lines.append(f"  {document['message']}")
    lines.append(f"Nodes evaluated: {document['evaluatedNodes']}, fit: {document['feasibleNodes']}")
    filtered = [
        [name, group["plugin"] or "-", group["reason"]]
        for group in document["filtered"]
        for name in group["nodes"]
    ]
    if filtered:
        lines += ["", *_table([["FILTERED OUT", "PLUGIN", "REASON"], *filtered])]
    candidates = document["candidates"]
    if candidates:
        plugins = list(candidates[0]["scores"])
        rows = [["CANDIDATE", "TOTAL", *plugins]]
        for candidate in candidates:
            marker = " *" if candidate["node"] == node else ""
            scores = candidate["scores"]
            rows.append(
                [
                    candidate["node"] + marker,
                    str(candidate["total"]),
                    *(
                        f"{scores[p]['score']}x{scores[p]['weight']}={scores[p]['weighted']}"
                        for p in plugins
                    ),
                ]
            )
        lines += ["", *_table(rows), "(score x weight = weighted; * the chosen node)"]
    elif node:
        lines.append("Only one node fit, so no scoring was needed.")
    return "\n".join(lines)
