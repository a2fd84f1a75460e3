#!/usr/bin/env python3
"""Writes the Grafana dashboard of the schedulers and the operator into the kustomize
monitoring component (dashboard.json, shipped as a ConfigMap for Grafana's dashboard sidecar;
tools/chart.py copies it into the Helm chart). The panels are declared here once; `--check`
fails when the written file differs (a unit test runs it).

    tools/dashboard.py          # write it
    tools/dashboard.py --check  # compare it
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DASHBOARD = REPO / "manifests" / "components" / "monitoring" / "dashboard.json"
UID = "scheduler-operator"
# The scrape jobs: the ServiceMonitors' Services' names (job label).
SCHEDULERS = (
    'job="scheduler-metrics", namespace=~"$namespace", schedulerprofile=~"$schedulerprofile"'
)
OPERATOR = 'job="scheduler-operator-metrics"'
RATE = "$__rate_interval"


def target(expr: str, legend: str, ref: str = "A") -> dict[str, Any]:
    return {
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "expr": expr,
        "legendFormat": legend,
        "refId": ref,
    }


def quantiles(metric: str, by: str, legend: str, where: str = SCHEDULERS) -> list[dict[str, Any]]:
    """p50 and p99 of a histogram, summed over `by`."""
    return [
        target(
            f"histogram_quantile({q}, sum by (le, {by}) "
            f"(rate({metric}_bucket{{{where}}}[{RATE}])))",
            f"p{round(q * 100)} {legend}".rstrip(),
            ref,
        )
        for q, ref in ((0.5, "A"), (0.99, "B"))
    ]


def panel(
    title: str,
    description: str,
    targets: list[dict[str, Any]],
    *,
    unit: str = "short",
    kind: str = "timeseries",
    width: int = 12,
    height: int = 8,
) -> dict[str, Any]:
    return {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["max"]}}
        if kind == "timeseries"
        else {"reduceOptions": {"calcs": ["lastNotNull"]}, "colorMode": "background"},
        "gridPos": {"w": width, "h": height},
    }


def row(title: str) -> dict[str, Any]:
    return {
        "type": "row",
        "title": title,
        "collapsed": False,
        "panels": [],
        "gridPos": {"w": 24, "h": 1},
    }


PANELS: list[dict[str, Any]] = [
    row("Schedulers"),
    panel(
        "Leader",
        "1 for the scheduler pod holding its SchedulerProfile's Lease, 0 for a follower.",
        [
            target(
                f"max by (schedulerprofile, pod) (leader_election_master_status{{{SCHEDULERS}}})",
                "{{schedulerprofile}} {{pod}}",
            )
        ],
        kind="stat",
        width=8,
        height=5,
    ),
    panel(
        "Scheduler pods up",
        "Scheduler pods Prometheus scrapes successfully, per SchedulerProfile.",
        [target(f"sum by (schedulerprofile) (up{{{SCHEDULERS}}})", "{{schedulerprofile}}")],
        kind="stat",
        width=8,
        height=5,
    ),
    panel(
        "Pending pods",
        "Pods waiting in the schedulers' queues, all queues together.",
        [
            target(
                f"sum by (schedulerprofile) (scheduler_pending_pods{{{SCHEDULERS}}})",
                "{{schedulerprofile}}",
            )
        ],
        kind="stat",
        width=8,
        height=5,
    ),
    panel(
        "Scheduling throughput",
        "Scheduling attempts per second by profile and result (scheduled, unschedulable, error).",
        [
            target(
                "sum by (schedulerprofile, profile, result) "
                f"(rate(scheduler_schedule_attempts_total{{{SCHEDULERS}}}[{RATE}]))",
                "{{profile}} {{result}}",
            )
        ],
        unit="ops",
    ),
    panel(
        "Pending pods by queue",
        "Pods in activeQ, backoffQ, the unschedulable pods and the gated pods.",
        [
            target(
                f"sum by (schedulerprofile, queue) (scheduler_pending_pods{{{SCHEDULERS}}})",
                "{{schedulerprofile}} {{queue}}",
            )
        ],
    ),
    panel(
        "Scheduling attempt latency",
        "From taking a pod off the queue to its binding (or failure), p50 and p99 per profile.",
        quantiles(
            "scheduler_scheduling_attempt_duration_seconds",
            "schedulerprofile, profile",
            "{{profile}}",
        ),
        unit="s",
    ),
    panel(
        "Scheduling algorithm latency",
        "Filtering and scoring of one attempt, p50 and p99 per SchedulerProfile.",
        quantiles(
            "scheduler_scheduling_algorithm_duration_seconds",
            "schedulerprofile",
            "{{schedulerprofile}}",
        ),
        unit="s",
    ),
    panel(
        "Extension point latency (p99)",
        "All plugins of one extension point together, p99 per extension point and profile.",
        [
            target(
                "histogram_quantile(0.99, sum by (le, profile, extension_point) "
                f"(rate(scheduler_framework_extension_point_duration_seconds_bucket{{{SCHEDULERS}}}"
                f"[{RATE}])))",
                "{{profile}} {{extension_point}}",
            )
        ],
        unit="s",
    ),
    panel(
        "Pod scheduling latency (SLI)",
        "From a pod entering the queue to its binding, over every attempt it took: p50 and p99.",
        quantiles(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "schedulerprofile",
            "{{schedulerprofile}}",
        ),
        unit="s",
    ),
    panel(
        "Unschedulable and failed attempts",
        "Attempts that found no node (FailedScheduling events) or failed with an error.",
        [
            target(
                "sum by (schedulerprofile, profile, result) "
                f'(rate(scheduler_schedule_attempts_total{{{SCHEDULERS}, result!="scheduled"}}'
                f"[{RATE}]))",
                "{{profile}} {{result}}",
            )
        ],
        unit="ops",
    ),
    panel(
        "Preemption attempts",
        "Attempts to make room for a pod by evicting lower-priority pods.",
        [
            target(
                "sum by (schedulerprofile) "
                f"(rate(scheduler_preemption_attempts_total{{{SCHEDULERS}}}[{RATE}]))",
                "{{schedulerprofile}}",
            )
        ],
        unit="ops",
    ),
    panel(
        "NetworkTraffic query failures",
        "Prometheus queries of the NetworkTraffic plugin that gave no usable answer (the nodes "
        "then score a neutral 50).",
        [
            target(
                "sum by (schedulerprofile, profile, reason) "
                f"(rate(scheduler_networktraffic_query_failures_total{{{SCHEDULERS}}}[{RATE}]))",
                "{{profile}} {{reason}}",
            )
        ],
        unit="ops",
    ),
    row("Operator"),
    panel(
        "Reconciliations",
        "SchedulerProfile reconciliations per second by result (applied, refused, "
        "apply_failed, error).",
        [
            target(
                "sum by (result) "
                f"(rate(scheduler_operator_reconciles_total{{{OPERATOR}}}[{RATE}]))",
                "{{result}}",
            )
        ],
        unit="ops",
    ),
    panel(
        "Reconciliation latency",
        "How long one reconciliation takes: p50 and p99.",
        quantiles("scheduler_operator_reconcile_duration_seconds", "job", "", where=OPERATOR),
        unit="s",
    ),
]


def laid_out(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ids and positions: left to right, wrapping at Grafana's 24 columns."""
    x = y = line = 0
    out = []
    for number, given in enumerate(panels, start=1):
        placed = json.loads(json.dumps(given))
        w, h = placed["gridPos"]["w"], placed["gridPos"]["h"]
        if x + w > 24:
            x, y, line = 0, y + line, 0
        placed["id"] = number
        placed["gridPos"] = {"x": x, "y": y, "w": w, "h": h}
        x, line = x + w, max(line, h)
        if placed["type"] == "row":
            x, y, line = 0, y + h, 0
        out.append(placed)
    return out


def variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "query": {"query": query, "refId": name},
        "definition": query,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "current": {"text": "All", "value": "$__all"},
        "refresh": 2,
        "sort": 1,
    }


def dashboard() -> dict[str, Any]:
    return {
        "uid": UID,
        "title": "Scheduler operator",
        "description": "The schedulers SchedulerProfiles run (either engine) and the operator.",
        "tags": ["kubernetes", "scheduler", "scheduler-operator"],
        "editable": True,
        "schemaVersion": 39,
        "graphTooltip": 1,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "timezone": "",
        "links": [],
        "annotations": {"list": []},
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {"text": "default", "value": "default"},
                },
                variable(
                    "namespace",
                    "Namespace",
                    'label_values(up{job="scheduler-metrics"}, namespace)',
                ),
                variable(
                    "schedulerprofile",
                    "SchedulerProfile",
                    'label_values(up{job="scheduler-metrics", namespace=~"$namespace"}, '
                    "schedulerprofile)",
                ),
            ]
        },
        "panels": laid_out(PANELS),
    }


def text() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    wanted = text()
    if args.check:
        if not DASHBOARD.is_file() or DASHBOARD.read_text() != wanted:
            print(
                f"{DASHBOARD.relative_to(REPO)} is stale: run tools/dashboard.py", file=sys.stderr
            )
            return 1
        return 0
    DASHBOARD.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
