"""Why a pod went where it went, or nowhere: every filtered-out node with the plugin and
reason that rejected it, how many nodes the search never looked at, and the per-plugin
weighted scores of the best candidates.

Built from what one scheduling cycle already computed (the diagnosis and the scores), in
slots: only the nodes an explanation lists are named, and a large group only when read. Nodes
a stopped search never evaluated are only counted: on a large cluster they are most nodes, and
naming them made every explanation as large as the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler_runtime.framework.algorithm import Placement, SchedulingAlgorithm
from scheduler_runtime.framework.interface import CycleState
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Names, Slots, Snapshot
from scheduler_runtime.framework.types import Diagnosis

TOP_CANDIDATES = 3
# Larger groups keep slots and are named when read: a filter can reject thousands of nodes
# per pod, and the live scheduler keeps many explanations.
EAGER_NODES = 32


class Rejected:
    """Nodes one filter plugin rejected for one reason: an immutable value, equal to another
    with the same plugin, reason and nodes, however each holds its nodes."""

    __slots__ = ("_names", "_nodes", "_slots", "plugin", "reason")

    plugin: str
    reason: str
    _nodes: tuple[str, ...]
    _slots: npt.NDArray[np.unsignedinteger[Any]] | None
    _names: Names | None

    def __init__(self, plugin: str, reason: str, nodes: tuple[str, ...]) -> None:
        self._fill(plugin=plugin, reason=reason, _nodes=nodes, _slots=None, _names=None)

    def _fill(self, **fields: object) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of_slots(cls, plugin: str, reason: str, slots: Slots, names: Names) -> Rejected:
        """The nodes in `slots`, named through `names` (`Snapshot.node_names`, which is
        replaced, never edited, when nodes come and go): at once for a small group, else
        on each read of `nodes`."""
        if len(slots) <= EAGER_NODES:
            return cls(plugin, reason, tuple(names[slots].tolist()))
        # The narrowest type that holds every slot: 2 bytes a node up to 65,536 slots.
        narrow = slots.astype(np.min_scalar_type(len(names) - 1))
        rejected = cls(plugin, reason, ())
        rejected._fill(_slots=narrow, _names=names)
        return rejected

    @property
    def nodes(self) -> tuple[str, ...]:
        """The nodes in the order seen; a large group is named anew on each read."""
        if self._slots is None or self._names is None:
            return self._nodes
        return tuple(self._names[self._slots].tolist())

    def as_json(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "reason": self.reason, "nodes": list(self.nodes)}

    def _key(self) -> tuple[str, str, tuple[str, ...]]:
        return self.plugin, self.reason, self.nodes

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rejected):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Rejected(plugin={self.plugin!r}, reason={self.reason!r}, nodes={self.nodes!r})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


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
    not_evaluated_nodes: int = 0  # the search stopped once enough nodes fit
    filtered: tuple[Rejected, ...] = ()
    candidates: tuple[Candidate, ...] = field(default=())
    # What plugins add about their own part, by plugin (plugins with `explain_cycle`).
    plugins: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def as_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "pod": self.key,
            "profile": self.profile,
            "node": self.node,
            "message": self.message,
            "evaluatedNodes": self.evaluated_nodes,
            "feasibleNodes": self.feasible_nodes,
            "notEvaluatedNodes": self.not_evaluated_nodes,
            "filtered": [rejected.as_json() for rejected in self.filtered],
            "candidates": [candidate.as_json() for candidate in self.candidates],
        }
        if self.plugins:
            document["plugins"] = dict(self.plugins)
        return document


def rejected_nodes(
    diagnosis: Diagnosis, snapshot: Snapshot, feasible: Slots
) -> tuple[list[Rejected], int]:
    """Every node that did not fit, grouped by (plugin, reason) in the order seen, and how
    many nodes were not evaluated at all because the search stopped early. Nodes no filter
    saw share the diagnosis' absent status when it has one (a PreFilter ruled them out)."""
    statuses = diagnosis.node_to_status
    if not (statuses.rejections or statuses.extra or statuses.absent.reasons):
        return [], len(snapshot) - len(feasible)  # every node evaluated fit (most pods)
    # A group's parts: slot arrays from the filters, names from statuses set by name.
    groups: dict[tuple[str, str], list[Slots | list[str]]] = {}
    seen = np.zeros(snapshot.capacity, dtype=np.bool_)
    seen[feasible] = True
    for rejection in statuses.rejections:
        seen[rejection.slots] = True
        for reason, mask in rejection.reasons:
            hits = rejection.slots[np.flatnonzero(mask)]
            groups.setdefault((rejection.plugin, reason), []).append(hits)
    for name, status in statuses.extra.items():
        slot = snapshot.slot(name)
        if slot is not None:
            seen[slot] = True
        for reason in status.reasons:
            groups.setdefault((status.plugin, reason), []).append([name])
    order = snapshot.order()
    unseen = order[~seen[order]]
    not_evaluated = 0 if statuses.absent.reasons else len(unseen)
    if len(unseen):
        for reason in statuses.absent.reasons:
            groups.setdefault((statuses.absent.plugin, reason), []).append(unseen)
    names = snapshot.node_names()
    rejected = [_group(plugin, reason, parts, names) for (plugin, reason), parts in groups.items()]
    return rejected, not_evaluated


def _group(plugin: str, reason: str, parts: list[Slots | list[str]], names: Names) -> Rejected:
    """One group; named at once only when some of it was set by name."""
    slot_parts = [part for part in parts if isinstance(part, np.ndarray)]
    if len(slot_parts) == len(parts):
        slots = slot_parts[0] if len(parts) == 1 else np.concatenate(slot_parts)
        return Rejected.of_slots(plugin, reason, slots, names)
    listed = [
        name
        for part in parts
        for name in (names[part].tolist() if isinstance(part, np.ndarray) else part)
    ]
    return Rejected(plugin, reason, tuple(listed))


def top_candidates(
    placement: Placement, snapshot: Snapshot, weights: dict[str, int], chosen: str, top: int
) -> list[Candidate]:
    """The chosen node first, then the other best totals (ties in the order scored)."""
    order = np.argsort(-placement.totals, kind="stable")
    chosen_slot = snapshot.slot(chosen)
    is_chosen = placement.slots[order] == (-1 if chosen_slot is None else chosen_slot)
    positions = np.concatenate([order[is_chosen], order[~is_chosen][: top - 1]])
    slots = placement.slots[positions].tolist()
    totals = placement.totals[positions].tolist()
    by_plugin = {
        plugin: values[positions].tolist() for plugin, values in placement.by_plugin.items()
    }
    return [
        Candidate(
            node=snapshot.name(slot),
            total=total,
            scores={
                plugin: (values[i], weights.get(plugin, 1)) for plugin, values in by_plugin.items()
            },
        )
        for i, (slot, total) in enumerate(zip(slots, totals, strict=True))
    ]


def plugin_details(
    framework: Framework,
    state: CycleState,
    pod: PodInfo,
    node: str | None,
    filtered: Sequence[Rejected],
) -> dict[str, Any]:
    """What each plugin with `explain_cycle(state, pod, node, rejected)` says of its part of
    the cycle (`rejected`: the groups of nodes it filtered out), by plugin."""
    details: dict[str, Any] = {}
    for name, plugin in framework.plugins.items():
        describe = getattr(plugin, "explain_cycle", None)
        if not callable(describe):
            continue
        said = describe(state, pod, node, [group for group in filtered if group.plugin == name])
        if said:
            details[name] = said
    return details


def explain(
    pod: PodInfo,
    framework: Framework,
    algorithm: SchedulingAlgorithm,
    *,
    node: str | None,
    message: str | None = None,
    diagnosis: Diagnosis | None = None,
    top: int = TOP_CANDIDATES,
    state: CycleState | None = None,
) -> Explanation:
    """The explanation of the cycle `algorithm` just ran for `pod` (node None: it failed;
    `diagnosis` then comes from the FitError); with the cycle's `state`, plugins add their
    own details (plugin_details)."""
    snapshot = algorithm.snapshot
    diagnosis = diagnosis or algorithm.last_diagnosis
    placement = algorithm.last_placement if node is not None else None
    feasible = algorithm.last_feasible
    filtered, not_evaluated = (
        rejected_nodes(diagnosis, snapshot, feasible) if diagnosis is not None else ([], 0)
    )
    candidates = (
        top_candidates(placement, snapshot, framework.score_weights, node, top)
        if placement is not None and node is not None
        else []
    )
    evaluated = len(feasible) + (len(diagnosis.node_to_status) if diagnosis is not None else 0)
    return Explanation(
        namespace=pod.namespace,
        name=pod.name,
        profile=framework.scheduler_name,
        node=node,
        message=message,
        evaluated_nodes=evaluated,
        feasible_nodes=len(feasible),
        not_evaluated_nodes=not_evaluated,
        filtered=tuple(filtered),
        candidates=tuple(candidates),
        plugins=plugin_details(framework, state, pod, node, filtered) if state else {},
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
    for said in explanation.plugins.values():
        summary = said.get("summary") if isinstance(said, Mapping) else None
        if summary:
            text += f" | {summary}"
    return text


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _pod_group_lines(group: dict[str, Any]) -> list[str]:
    """Where the pod's group stands: members against the minimum, placed, and why it waits."""
    policy = f"a gang of at least {group['minimum']}" if group["gang"] else "no gang"
    lines = [
        f"Pod group {group['namespace']}/{group['name']} ({group['api']}, {policy}): "
        f"{group['members']} members exist, {group['waitingAtPermit']} waiting at Permit, "
        f"{group['bound']} bound"
    ]
    if not group["placed"] and group.get("reason"):
        lines.append(f"  waiting: {group['reason']}")
    return lines


def format_explanation(document: dict[str, Any]) -> str:
    """An explanation's JSON (`Explanation.as_json`) as a person reads it: the outcome, each
    filtered-out node with the plugin and reason, and the candidates' score breakdown."""
    pod, node = document["pod"], document.get("node")
    outcome = f"scheduled on {node}" if node else "not scheduled"
    lines = [f"Pod {pod} (profile {document['profile']}): {outcome}"]
    if document.get("message"):
        lines.append(f"  {document['message']}")
    group = document.get("podGroup")
    if group:
        lines += _pod_group_lines(group)
    counts = f"Nodes evaluated: {document['evaluatedNodes']}, fit: {document['feasibleNodes']}"
    if document.get("notEvaluatedNodes"):
        counts += f", not evaluated: {document['notEvaluatedNodes']} (enough nodes fit)"
    lines.append(counts)
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
    for plugin, said in (document.get("plugins") or {}).items():
        lines += _plugin_lines(plugin, said)
    return "\n".join(lines)


def _plugin_lines(plugin: str, said: Mapping[str, Any]) -> list[str]:
    """A plugin's details: each list of records as a table (its keys as the columns), other
    values as `key: value` lines; the one-line summary is the annotation's."""
    lines: list[str] = []
    for key, value in said.items():
        if key == "summary":
            continue
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            columns = list(value[0])
            rows = [
                [c.upper() for c in columns],
                *([str(v.get(c, "")) for c in columns] for v in value),
            ]
            lines += ["", f"{plugin} {key}:", *_table(rows)]
        elif value not in (None, [], {}):
            lines.append(f"{plugin} {key}: {value}")
    return lines
