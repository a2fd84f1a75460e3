#!/usr/bin/env python3
"""Copies into the Helm chart (charts/scheduler-operator) the files it shares with the
kustomize tree, so each is written in one place: the CRD (crds/, made by `scheduler-operator
crd`), the limits policy (manifests/limits.yaml), scheduler-plugins' PodGroup CRD (the
podgroup-crd component), the samples (manifests/samples), the
dashboard and the alert rules (the monitoring component's dashboard.json and its
PrometheusRule's spec, as a plain rules file promtool also reads). `--check` fails when a copy
differs from its source (a unit test runs it). The templates are the chart's own; a test
renders them and kustomize's tree and compares.

    tools/chart.py          # write the copies
    tools/chart.py --check  # compare them
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHART = REPO / "charts" / "scheduler-operator"
MONITORING = REPO / "manifests" / "components" / "monitoring"
PODGROUP_CRD = (
    REPO / "manifests" / "components" / "podgroup-crd" / "podgroups.scheduling.x-k8s.io.yaml"
)
PROMETHEUS_RULE = MONITORING / "prometheusrule.yaml"


def alert_rules() -> str:
    """The PrometheusRule's spec (from `spec:` on, one level less indented), as text: the
    comments and layout stay as written."""
    lines = PROMETHEUS_RULE.read_text().splitlines()
    spec = lines[lines.index("spec:") + 1 :]
    header = f"# Copied by tools/chart.py from {PROMETHEUS_RULE.relative_to(REPO)}: edit that.\n"
    return header + "\n".join(line.removeprefix("  ") for line in spec) + "\n"


def copies() -> dict[Path, str]:
    """Each copy in the chart and the text it must hold."""
    wanted = {
        CHART / "crds" / crd.name: crd.read_text() for crd in (REPO / "crds").glob("*.*.yaml")
    }
    wanted |= {
        CHART / "files" / "samples" / sample.name: sample.read_text()
        for sample in sorted((REPO / "manifests" / "samples").glob("*.yaml"))
    }
    wanted[CHART / "files" / "limits.yaml"] = (REPO / "manifests" / "limits.yaml").read_text()
    wanted[CHART / "files" / PODGROUP_CRD.name] = PODGROUP_CRD.read_text()
    wanted[CHART / "files" / "dashboard.json"] = (MONITORING / "dashboard.json").read_text()
    wanted[CHART / "files" / "alert-rules.yaml"] = alert_rules()
    return wanted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    wanted = copies()
    stale = [
        path for path, text in wanted.items() if not path.is_file() or path.read_text() != text
    ]
    known = set(wanted)
    extra = [
        path
        for folder in (CHART / "crds", CHART / "files" / "samples")
        for path in folder.glob("*")
        if path not in known
    ]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} is stale: run tools/chart.py", file=sys.stderr)
        for path in extra:
            print(f"{path.relative_to(REPO)} has no source: run tools/chart.py", file=sys.stderr)
        return 1 if stale or extra else 0
    for path in extra:
        path.unlink()
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path])
    return 0


if __name__ == "__main__":
    sys.exit(main())
