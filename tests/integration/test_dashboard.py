"""The Grafana dashboard against live data: a real Prometheus scrapes a running scheduler (two
profiles, one with NetworkTraffic and no Prometheus to ask) the way the ServiceMonitor says
(HTTPS, a ServiceAccount token that the monitoring component's ClusterRole lets read /metrics)
and the operator reconciling a SchedulerProfile, while pods are created, bound and found
unschedulable; then every query of every panel parses and returns data, and the dashboard's
variables list the scheduler. The main series are drawn as a PNG (DASHBOARD_PNG=path keeps it;
docs/observability.md shows the one drawn so)."""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_support import kustomize, metrics_reader_for
from cluster import Cluster, kwok_node, wait_for
from dashboard_support import Query, finite_points, plot, queries, variable_queries
from kopf.testing import KopfRunner
from operator_support import operand_namespace, profile_body
from prometheus_support import Prometheus
from runtime_support import Pods, make_pod, scheduler_config
from scheduler_operator import metrics

from benchmarks.processes import free_port

pytestmark = pytest.mark.timeout(600)

RATE_INTERVAL = "10s"
STEP_SECONDS = 2
WORKLOAD_SECONDS = 60
PLOTTED = [
    "Scheduling throughput",
    "Pending pods by queue",
    "Scheduling attempt latency",
    "Scheduling algorithm latency",
    "Extension point latency (p99)",
    "Pod scheduling latency (SLI)",
]


@pytest.fixture
def metrics_reader_token(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A token of a ServiceAccount bound to the monitoring component's ClusterRole."""
    role, binding = metrics_reader_for(namespace)
    cluster.kubectl("create", "serviceaccount", "prometheus", "-n", namespace)
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([role, binding]))
    yield cluster.kubectl("create", "token", "prometheus", "-n", namespace).stdout.strip()
    cluster.kubectl("delete", "-f", "-", input=yaml.safe_dump_all([binding, role]))


@pytest.fixture
def operator_metrics(operator: KopfRunner) -> Iterator[str]:
    """The in-process operator's /metrics, served as `run --metrics-bind-address` does."""
    port = free_port()
    server = metrics.serve(("127.0.0.1", port))
    yield f"127.0.0.1:{port}"
    server.stop()


def scrape_jobs(runtime_address: str, operator_address: str, token: Path) -> list[dict[str, Any]]:
    """The scrape configurations the Prometheus Operator makes of the ServiceMonitors, with the
    target labels they give (namespace, pod, and the SchedulerProfile from the pod's label)."""
    monitors = {
        o["metadata"]["name"]: o for o in kustomize("monitoring") if o["kind"] == "ServiceMonitor"
    }
    [schedulers] = monitors["schedulers"]["spec"]["endpoints"]
    [operator] = monitors["scheduler-operator"]["spec"]["endpoints"]
    return [
        {
            "job_name": "scheduler-metrics",
            "scheme": schedulers["scheme"],
            "metrics_path": schedulers["path"],
            "tls_config": {"insecure_skip_verify": schedulers["tlsConfig"]["insecureSkipVerify"]},
            "authorization": {"credentials_file": str(token)},
            "static_configs": [
                {
                    "targets": [runtime_address],
                    "labels": {
                        "namespace": "schedulers",
                        "pod": "dashboard-0",
                        "schedulerprofile": "dashboard",
                    },
                }
            ],
        },
        {
            "job_name": "scheduler-operator-metrics",
            "metrics_path": operator["path"],
            "static_configs": [
                {
                    "targets": [operator_address],
                    "labels": {"namespace": "scheduler-operator", "pod": "scheduler-operator-0"},
                }
            ],
        },
    ]


def run_workload(pods: Pods, profiles: list[str], cluster: Cluster, operated: str) -> list[str]:
    """For WORKLOAD_SECONDS: each second a pod per profile that fits, every 8 s one that fits
    nowhere, every 10 s a change to a SchedulerProfile; the pods that fit."""
    fitting: list[str] = []
    started = time.monotonic()
    second = 0
    while time.monotonic() - started < WORKLOAD_SECONDS:
        for index, profile in enumerate(profiles):
            name = f"p{index}-{second}"
            pods.create(make_pod(name, profile, cpu="100m", memory="64Mi"))
            fitting.append(name)
        if second % 8 == 0:
            pods.create(make_pod(f"huge-{second}", profiles[0], cpu="64"))
        if second % 10 == 0:
            cluster.kubectl(
                "patch", "schedulerprofile", operated, "--type=merge",
                "-p", f'{{"spec": {{"logVerbosity": {second // 10 % 4}}}}}',
            )  # fmt: skip
        second += 1
        time.sleep(max(0.0, started + second - time.monotonic()))
    return fitting


def test_every_panel_returns_data_from_a_live_scheduler_and_operator(
    cluster: Cluster,
    namespace: str,
    start_runtime: Callable[..., Any],
    schedulable_nodes: Callable[..., list[str]],
    pods: Pods,
    metrics_reader_token: str,
    operator_metrics: str,
    apply_profile: Callable[[dict[str, Any]], str],
    tmp_path: Path,
) -> None:
    operand_namespace(cluster, namespace)  # the operator reconciles a SchedulerProfile here
    schedulable_nodes(*(kwok_node(f"dash-{uuid.uuid4().hex[:6]}", cpu="16") for _ in range(3)))
    suffix = uuid.uuid4().hex[:6]
    profiles = [f"dash-a-{suffix}", f"dash-b-{suffix}"]
    config = scheduler_config(
        profiles[0], lease={"resourceName": f"dash-{suffix}", "resourceNamespace": namespace}
    )
    traffic = dict(
        scheduler_config(
            profiles[1],
            plugins={"score": {"enabled": [{"name": "NetworkTraffic", "weight": 1}]}},
            plugin_config=[
                {
                    "name": "NetworkTraffic",
                    # Nothing listens there: every query fails, and is counted.
                    "args": {
                        "prometheusAddress": f"http://127.0.0.1:{free_port()}",
                        "cacheTTLSeconds": 1,
                    },
                }
            ],
        )["profiles"][0]
    )
    config["profiles"].append(traffic)
    runtime = start_runtime(config, name="dashboard")
    wait_for(
        "the scheduler to lead",
        lambda: 'leader_election_master_status{name="' in runtime.get("/metrics", as_admin=True)[1],
    )
    operated = apply_profile(profile_body(f"dash-{suffix}", namespace=namespace))

    token = tmp_path / "token"
    token.write_text(metrics_reader_token)
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    address = f"127.0.0.1:{runtime.secure_port}"
    prometheus = Prometheus(None, workdir, scrape_jobs(address, operator_metrics, token))
    try:
        wait_for(
            "Prometheus to scrape the scheduler and the operator",
            lambda: len(prometheus.api("query", query="up == 1")["result"]) == 2,
        )
        started = time.time()
        fitting = run_workload(pods, profiles, cluster, operated)
        pods.wait_placed(*fitting, timeout=120)
        time.sleep(15)  # the last attempts reach a scrape and a rate window
        results = {
            query: prometheus.api(
                "query_range",
                query=query.expr,
                start=str(started),
                end=str(time.time()),
                step=str(STEP_SECONDS),
            )["result"]
            for query in queries(RATE_INTERVAL)
        }
        labels = {
            name: prometheus.api(f"label/{label}/values", **{"match[]": selector})
            for name, (selector, label) in variable_queries().items()
        }
    finally:
        prometheus.stop()

    report = {
        (q.panel, q.legend): (len(s), sum(bool(finite_points(x)) for x in s))
        for q, s in results.items()
    }
    # To the real stdout: the in-process operator's runner holds sys.stdout meanwhile.
    print("panel [legend]: series, series with finite values", file=sys.__stdout__)
    for (panel, legend), counts in report.items():
        print(f"  {panel} [{legend}]: {counts[0]}, {counts[1]}", file=sys.__stdout__)
    empty = [f"{q.panel}: {q.expr}" for q, s in results.items() if not any(map(finite_points, s))]
    assert not empty, "queries without data:\n" + "\n".join(empty)
    assert labels == {"namespace": ["schedulers"], "schedulerprofile": ["dashboard"]}
    per_profile = throughput_profiles(results)
    assert set(profiles) <= per_profile, per_profile

    picture = tmp_path / "dashboard.png"
    plot(PLOTTED, {q: s for q, s in results.items() if q.panel in PLOTTED}, picture,
         f"scheduler-runtime, 2 profiles, {len(fitting)} pods in {WORKLOAD_SECONDS} s"
         " (live run, tests/integration/test_dashboard.py)")  # fmt: skip
    assert picture.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    if keep := os.environ.get("DASHBOARD_PNG"):
        shutil.copyfile(picture, keep)


def throughput_profiles(results: dict[Query, list[dict[str, Any]]]) -> set[str]:
    """The profiles the throughput panel shows bound pods for."""
    return {
        s["metric"].get("profile", "")
        for q, series in results.items()
        if q.panel == "Scheduling throughput"
        for s in series
        if s["metric"].get("result") == "scheduled" and finite_points(s)
    }
