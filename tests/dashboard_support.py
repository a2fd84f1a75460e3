"""The Grafana dashboard as the tests read it: its panels' queries with Grafana's variables
filled in as Grafana would for "All", and a plot of panels' series (range query results) as a
PNG, drawn with matplotlib."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster import REPO

DASHBOARD = REPO / "manifests" / "components" / "monitoring" / "dashboard.json"
MOST_SERIES = 8  # per plotted panel


@dataclass(frozen=True)
class Query:
    panel: str
    unit: str
    expr: str
    legend: str


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def filled(expr: str, rate_interval: str) -> str:
    """The expression as Grafana sends it with every variable at "All" (its allValue, `.*`)."""
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    for name, variable in variables.items():
        if variable["type"] == "query":
            expr = expr.replace(f"${name}", variable["allValue"])
    return expr.replace("$__rate_interval", rate_interval)


def queries(rate_interval: str) -> list[Query]:
    """Every query of every panel."""
    return [
        Query(
            panel["title"],
            panel["fieldConfig"]["defaults"]["unit"],
            filled(target["expr"], rate_interval),
            target["legendFormat"],
        )
        for panel in dashboard()["panels"]
        if panel["type"] != "row"
        for target in panel["targets"]
    ]


def variable_queries() -> dict[str, tuple[str, str]]:
    """Each query variable's `label_values(selector, label)`, as (selector, label)."""
    found = {}
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            match = re.fullmatch(r"label_values\((.*), (\w+)\)", variable["query"]["query"])
            assert match, variable["query"]
            found[variable["name"]] = (filled(match[1], "1m"), match[2])
    return found


def legend(template: str, labels: Mapping[str, str]) -> str:
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m[1], ""), template).strip()


def finite_points(series: Mapping[str, Any]) -> list[tuple[float, float]]:
    points = [(float(t), float(v)) for t, v in series["values"]]
    return [(t, v) for t, v in points if math.isfinite(v)]


def plot(
    panels: Sequence[str],
    results: Mapping[Query, list[dict[str, Any]]],
    path: Path,
    title: str,
) -> None:
    """The named panels' series, one subplot each (two columns), time in seconds from the
    first sample."""
    import matplotlib  # noqa: PLC0415 - only the plotting test needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    scales = {"s": (1000.0, "ms"), "ops": (1.0, "per second"), "short": (1.0, "")}
    starts = [
        float(s["values"][0][0]) for series in results.values() for s in series if s["values"]
    ]
    start = min(starts)
    rows = math.ceil(len(panels) / 2)
    figure, axes = plt.subplots(rows, 2, figsize=(13, 3.6 * rows), squeeze=False)
    for axis, name in zip(axes.flat, panels, strict=False):
        lines = [
            (legend(query.legend, one["metric"]), points, query.unit)
            for query, series in results.items()
            if query.panel == name
            for one in series
            if (points := finite_points(one))
        ]
        # The busiest series, so that the legend stays readable.
        lines.sort(key=lambda line: -max(v for _, v in line[1]))
        shown = sorted(lines[:MOST_SERIES], key=lambda line: line[0])
        for label, points, unit in shown:
            factor, axis_unit = scales.get(unit, (1.0, unit))
            axis.plot(
                [t - start for t, _ in points],
                [v * factor for _, v in points],
                label=label,
                linewidth=1.4,
            )
            axis.set_ylabel(axis_unit)
        hidden = len(lines) - len(shown)
        axis.set_title(
            name + (f" (top {len(shown)} of {len(lines)})" if hidden else ""), fontsize=11
        )
        axis.set_xlabel("seconds")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="upper left", ncol=2)
    for axis in list(axes.flat)[len(panels) :]:
        axis.set_visible(False)
    figure.suptitle(title, fontsize=12)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
