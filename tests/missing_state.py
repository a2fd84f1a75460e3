"""Profiles that run a plugin where it reads a state it writes at an earlier extension point
the profile does not run it at, and what kube-scheduler v1.36.3 makes of a pod with each, on
two nodes (the unit tests hold the runtime to these; the integration tier asks the binary)."""

from __future__ import annotations

from typing import Any


def disabled(*names: str) -> dict[str, Any]:
    return {"disabled": [{"name": name} for name in names]}


# (plugins, upstream's FailedScheduling message; None: placed, the point where it is refused)
CASES: dict[str, tuple[dict[str, Any], str | None]] = {
    "prefilter-off": (
        {"preFilter": disabled("*")},
        'running "NodePorts" filter plugin: reading "PreFilterNodePorts" from cycleState: '
        "not found",
    ),
    "prefilter-filter-off": (  # on one node (no scoring): 'running Reserve plugin ...'
        {"preFilter": disabled("*"), "filter": disabled("*")},
        'running Score plugins: plugin "DynamicResources" failed with: not found',
    ),
    "prefilter-filter-off-no-dra-score": (
        {
            "preFilter": disabled("*"),
            "filter": disabled("*"),
            "score": disabled("DynamicResources"),
        },
        'running Reserve plugin "VolumeBinding": not found',
    ),
    "prefilter-filter-off-no-vb-reserve": (
        {
            "preFilter": disabled("*"),
            "filter": disabled("*"),
            "score": disabled("DynamicResources"),
            "reserve": disabled("VolumeBinding"),
        },
        'running Reserve plugin "DynamicResources": not found',
    ),
    "prefilter-filter-reserve-off": (
        {
            "preFilter": disabled("*"),
            "filter": disabled("*"),
            "score": disabled("DynamicResources"),
            "reserve": disabled("*"),
        },
        'running PreBindPreFlight "VolumeBinding": not found',
    ),
    "prefilter-filter-reserve-off-no-vb-prebind": (
        {
            "preFilter": disabled("*"),
            "filter": disabled("*"),
            "score": disabled("DynamicResources"),
            "reserve": disabled("*"),
            "preBind": disabled("VolumeBinding"),
        },
        'running PreBindPreFlight "DynamicResources": not found',
    ),
    "prescore-off": (
        {"preScore": disabled("*")},
        'running Score plugins: plugin "TaintToleration" failed with: failed to read '
        '"PreScoreTaintToleration" from cycleState: not found',
    ),
    "prescore-off-no-tt": (
        {"preScore": disabled("*"), "score": disabled("TaintToleration")},
        'running Score plugins: plugin "PodTopologySpread" failed with: error reading '
        '"PreScorePodTopologySpread" from cycleState: not found',
    ),
    "prescore-off-no-tt-pts": (
        {"preScore": disabled("*"), "score": disabled("TaintToleration", "PodTopologySpread")},
        'running Score plugins: plugin "InterPodAffinity" failed with: failed to read '
        '"PreScoreInterPodAffinity" from cycleState: not found',
    ),
    "prescore-off-no-tt-pts-ipa": (
        {
            "preScore": disabled("*"),
            "score": disabled("TaintToleration", "PodTopologySpread", "InterPodAffinity"),
        },
        None,
    ),
    "prefilter-fit": (
        {"preFilter": disabled("NodeResourcesFit")},
        'running "NodeResourcesFit" filter plugin: error reading "PreFilterNodeResourcesFit" '
        "from cycleState: not found",
    ),
    "prefilter-vr": (
        {"preFilter": disabled("VolumeRestrictions")},
        'running "VolumeRestrictions" filter plugin: cannot read "PreFilterVolumeRestrictions" '
        "from cycleState",
    ),
    "prefilter-pts": (
        {"preFilter": disabled("PodTopologySpread")},
        'running "PodTopologySpread" filter plugin: reading "PreFilterPodTopologySpread" from '
        "cycleState: not found",
    ),
    "prefilter-ipa": (
        {"preFilter": disabled("InterPodAffinity")},
        'running "InterPodAffinity" filter plugin: error reading "PreFilterInterPodAffinity" '
        "from cycleState: not found",
    ),
    "prefilter-dra": (
        {"preFilter": disabled("DynamicResources")},
        'running "DynamicResources" filter plugin: not found',
    ),
    "prefilter-vb": (
        {"preFilter": disabled("VolumeBinding")},
        'running "VolumeBinding" filter plugin: not found',
    ),
    "prefilter-ndf": (
        {"preFilter": disabled("NodeDeclaredFeatures")},
        'running "NodeDeclaredFeatures" filter plugin: error reading '
        '"PreFilterNodeDeclaredFeatures" from cycle-state: not found',
    ),
    "prefilter-nvl": ({"preFilter": disabled("NodeVolumeLimits")}, None),
    "prefilter-vz": ({"preFilter": disabled("VolumeZone")}, None),
    "prefilter-na": ({"preFilter": disabled("NodeAffinity")}, None),
    "prefilter-filter-dra": (
        {"preFilter": disabled("DynamicResources"), "filter": disabled("DynamicResources")},
        'running Score plugins: plugin "DynamicResources" failed with: not found',
    ),
    "prefilter-filter-vb": (
        {"preFilter": disabled("VolumeBinding"), "filter": disabled("VolumeBinding")},
        'running Reserve plugin "VolumeBinding": not found',
    ),
    "prefilter-filter-reserve-vb": (
        {
            "preFilter": disabled("VolumeBinding"),
            "filter": disabled("VolumeBinding"),
            "reserve": disabled("VolumeBinding"),
        },
        'running PreBindPreFlight "VolumeBinding": not found',
    ),
    "prescore-fit-ba-na": (
        {
            "preScore": disabled(
                "NodeResourcesFit", "NodeResourcesBalancedAllocation", "NodeAffinity"
            )
        },
        None,
    ),
}

# 1.37 turns StorageCapacityScoring on: VolumeBinding's PreScore then reads PreFilter's state
# and, without it, fails first (kube-scheduler v1.37.2's words).
PRE_SCORE_WITHOUT_VOLUME_BINDING_STATE = 'running PreScore plugin "VolumeBinding": not found'
CASES_1_37: dict[str, tuple[dict[str, Any], str | None]] = {
    **CASES,
    **{
        case: (CASES[case][0], PRE_SCORE_WITHOUT_VOLUME_BINDING_STATE)
        for case in (
            "prefilter-filter-off",
            "prefilter-filter-off-no-dra-score",
            "prefilter-filter-off-no-vb-reserve",
            "prefilter-filter-reserve-off",
            "prefilter-filter-reserve-off-no-vb-prebind",
            "prefilter-filter-vb",
            "prefilter-filter-reserve-vb",
        )
    },
}


# 1.35 leaves NodeDeclaredFeatures off (alpha): its Filter then reads nothing, and the pod is
# placed (kube-scheduler v1.35.4).
CASES_1_35: dict[str, tuple[dict[str, Any], str | None]] = {
    **CASES,
    "prefilter-ndf": (CASES["prefilter-ndf"][0], None),
}


def cases(minor: str) -> dict[str, tuple[dict[str, Any], str | None]]:
    """The table of a Kubernetes minor."""
    return {"1.35": CASES_1_35, "1.37": CASES_1_37}.get(minor, CASES)
