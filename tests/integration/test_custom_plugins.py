"""Python plugins on the real cluster: NetworkTraffic reading a real Prometheus that scrapes an
exporter the test controls, a third-party plugin package loaded by entry point from a
SchedulerProfile, a broken plugin that costs its pods an Error but not the scheduler its life,
and `scheduler-runtime explain` asking the running scheduler why."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import kubernetes
from cluster import REPO, Cluster, kwok_node, wait_for
from operator_support import condition, wait_condition
from prometheus_support import Prometheus, TrafficExporter
from runtime_support import (
    Pods,
    RuntimeProcess,
    make_pod,
    scheduler_config,
    unique_scheduler_name,
)
from scheduler_operator.engines import validate
from scheduler_operator.parsing import parse
from scheduler_operator.render import render
from timing import settle

from scheduler_plugins.networktraffic.prometheus import traffic_query
from scheduler_runtime.live.explanations import ANNOTATION

RUNTIME_CLI = REPO / ".venv" / "bin" / "scheduler-runtime"
TIME_RANGE_SECONDS = 5


def marked_nodes(make: Callable[..., list[str]], *names: str, **labels: str) -> dict[str, str]:
    """Nodes carrying a label of this test only (pods select them), by short name, and one
    node without it ("outside") that the pods' selector rules out."""
    run = uuid.uuid4().hex[:6]
    full = {name: f"{name}-{run}" for name in (*names, "outside")}
    make(
        *(kwok_node(full[name], labels={"test-run": run, **_team(labels, name)}) for name in names),
        kwok_node(full["outside"]),
    )
    return {**full, "run": run}


def _team(labels: dict[str, str], name: str) -> dict[str, str]:
    return {"example.com/team": labels[name]} if name in labels else {}


def pod_on(nodes: dict[str, str], name: str, scheduler: str, **labels: str) -> dict[str, Any]:
    return make_pod(
        name,
        scheduler,
        cpu="100m",
        labels=labels,
        nodeSelector={"test-run": nodes["run"]},
    )


def quietest(server: Prometheus, nodes: list[str]) -> str | None:
    """The node Prometheus reports as receiving least, once it has a rate for every node."""
    seen = server.query(traffic_query("eth0", TIME_RANGE_SECONDS))
    if not all(node in seen for node in nodes):
        return None
    return min(nodes, key=lambda node: seen[node])


def explain(runtime: RuntimeProcess, key: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(RUNTIME_CLI),
            "explain",
            key,
            f"--endpoint=https://127.0.0.1:{runtime.secure_port}",
            f"--kubeconfig={runtime.kubeconfig}",  # the admin's client certificate
            "--insecure-skip-tls-verify",  # its self-signed certificate
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )


def test_network_traffic_follows_prometheus_and_survives_its_loss(
    start_runtime: Callable[..., RuntimeProcess],
    schedulable_nodes: Callable[..., list[str]],
    pods: Pods,
    traffic_exporter: TrafficExporter,
    prometheus: Prometheus,
) -> None:
    nodes = marked_nodes(schedulable_nodes, "a", "b", "c")
    a, b, c = nodes["a"], nodes["b"], nodes["c"]
    traffic_exporter.set_rates({a: 5e6, b: 2e3, c: 3e6})
    scheduler = unique_scheduler_name()
    config = scheduler_config(
        scheduler,
        plugins={"multiPoint": {"enabled": [{"name": "NetworkTraffic", "weight": 10}]}},
        plugin_config=[
            {
                "name": "NetworkTraffic",
                "args": {
                    "prometheusAddress": prometheus.address,
                    "networkInterface": "eth0",
                    "timeRangeInSeconds": TIME_RANGE_SECONDS,
                    "cacheTTLSeconds": 1,
                },
            }
        ],
    )
    runtime = start_runtime(config, args=("--explain-annotation",))
    wait_for(f"Prometheus to rank {b} quietest", lambda: quietest(prometheus, [a, b, c]) == b)

    pods.create(*(pod_on(nodes, f"first-{i}", scheduler) for i in range(3)))
    placed = pods.wait_placed("first-0", "first-1", "first-2")
    assert set(placed.values()) == {b}

    # The chosen node and every node the pod's selector ruled out, from the running scheduler.
    shown = explain(runtime, f"{pods.namespace}/first-0")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"Pod {pods.namespace}/first-0 (profile {scheduler}): scheduled on {b}"
    header = next(line for line in lines if line.startswith("CANDIDATE")).split()
    chosen = next(line for line in lines if line.startswith(f"{b} *")).split()
    assert chosen[header.index("NetworkTraffic") + 1] == "100x10=1000"
    cluster_nodes = {
        n.metadata.name for n in kubernetes.client.CoreV1Api(pods.cluster.api).list_node().items
    }
    filtered = {line.split()[0] for line in lines if "node affinity/selector" in line}
    assert nodes["outside"] in filtered
    assert filtered == cluster_nodes - {a, b, c}
    annotation = pods.all()["first-0"]["metadata"]["annotations"][ANNOTATION]
    assert annotation.startswith(f"node={b} total=")
    assert "NetworkTraffic=100x10" in annotation

    # The traffic moves; once Prometheus sees it, so do the placements.
    traffic_exporter.set_rates({a: 1e3, b: 9e6, c: 3e6})
    wait_for(f"Prometheus to rank {a} quietest", lambda: quietest(prometheus, [a, b, c]) == a)
    pods.create(*(pod_on(nodes, f"second-{i}", scheduler) for i in range(2)))
    assert set(pods.wait_placed("second-0", "second-1").values()) == {a}

    # Without Prometheus the other plugins decide; the failures are counted and logged.
    prometheus.stop()
    settle(2)  # past the plugin's cache of the last answer
    pods.create(*(pod_on(nodes, f"third-{i}", scheduler) for i in range(3)))
    assert set(pods.wait_placed("third-0", "third-1", "third-2").values()) <= {a, b, c}
    status, metrics = runtime.get("/metrics", as_admin=True)
    assert status == 200
    failures = [
        line
        for line in metrics.splitlines()
        if line.startswith("scheduler_networktraffic_query_failures_total{")
    ]
    assert failures, metrics[-2000:]
    assert float(failures[0].rsplit(" ", 1)[1]) >= 1
    assert "Prometheus query failed, network traffic scores are neutral" in runtime.log()


def team_profile(name: str) -> dict[str, Any]:
    """A SchedulerProfile using the sample package's plugins (tests/plugins/sample_plugin)."""
    body = {
        "apiVersion": "scheduling.schedops.io/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": name},
        "spec": {
            "engine": "PythonRuntime",
            "profiles": [
                {
                    "plugins": {
                        "filter": {"enabled": [{"name": "Misbehaving"}]},
                        "score": {"enabled": [{"name": "TeamAffinity", "weight": 10}]},
                    },
                    "pluginConfig": [
                        {"name": "TeamAffinity", "args": {"nodeLabel": "example.com/team"}}
                    ],
                }
            ],
        },
    }
    profile = parse(body)
    validate(profile)  # what the operator checks before ConfigValid=True
    return render(profile).config


def test_a_plugin_package_from_a_scheduler_profile_and_a_broken_plugin(
    start_runtime: Callable[..., RuntimeProcess],
    schedulable_nodes: Callable[..., list[str]],
    pods: Pods,
) -> None:
    nodes = marked_nodes(schedulable_nodes, "red", "blue", "plain", red="red", blue="blue")
    scheduler = f"teams-{nodes['run']}"
    runtime = start_runtime(team_profile(scheduler))

    pods.create(
        pod_on(nodes, "red-1", scheduler, team="red"),
        pod_on(nodes, "red-2", scheduler, team="red"),
        pod_on(nodes, "blue-1", scheduler, team="blue"),
    )
    placed = pods.wait_placed("red-1", "red-2", "blue-1")
    assert placed == {"red-1": nodes["red"], "red-2": nodes["red"], "blue-1": nodes["blue"]}

    misbehave = "sample.example.com/misbehave"
    expected = {
        "raises": ("raise", "plugin Misbehaving failed: filter raised ZeroDivisionError"),
        "hangs": ("hang", "plugin Misbehaving failed: filter did not return within its time"),
        "lies": ("wrong-type", "plugin Misbehaving failed: filter returned bool, expected"),
    }
    pods.create(
        *(
            pod_on(nodes, name, scheduler, **{misbehave: mode})
            for name, (mode, _) in expected.items()
        )
    )
    for name, (_, message) in expected.items():
        event = pods.wait_event(name, "FailedScheduling")
        assert event["note"].startswith(message), event["note"]
        condition = pods.condition(name)
        assert condition is not None
        assert condition["reason"] == "SchedulerError"
    # The scheduler lives on and places the next pods as before.
    pods.create(pod_on(nodes, "blue-2", scheduler, team="blue"))
    assert pods.wait_placed("blue-2") == {"blue-2": nodes["blue"]}
    assert runtime.process.poll() is None
    assert runtime.get("/healthz") == (200, "ok")
    assert all(pods.nodes()[name] is None for name in expected)
    assert 'plugin failed plugin="Misbehaving" point="filter"' in runtime.log()
    shown = explain(runtime, f"{pods.namespace}/raises")
    assert shown.returncode == 0, shown.stderr
    assert "not scheduled" in shown.stdout.splitlines()[0]
    assert "ZeroDivisionError" in shown.stdout


def test_a_plugin_that_is_not_installed_is_reported_by_config_valid(
    cluster: Cluster, apply_profile: Callable[[dict[str, Any]], str]
) -> None:
    name = f"not-installed-{uuid.uuid4().hex[:6]}"
    apply_profile(
        {
            "apiVersion": "scheduling.schedops.io/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": name},
            "spec": {
                "engine": "PythonRuntime",
                "profiles": [{"plugins": {"score": {"enabled": [{"name": "TeamAffinity"}]}}}],
            },
        }
    )
    valid = condition(wait_condition(cluster, name, "ConfigValid", "True"), "ConfigValid")
    assert valid["status"] == "True"
    cluster.kubectl(
        "patch",
        "schedulerprofile",
        name,
        "--type=json",
        "-p",
        '[{"op": "replace", "path": "/spec/profiles/0/plugins/score/enabled/0/name",'
        ' "value": "NotInstalled"}]',
    )
    refused = condition(wait_condition(cluster, name, "ConfigValid", "False"), "ConfigValid")
    assert refused["reason"] == "InvalidSpec"
    assert refused["message"] == (
        "spec.profiles[0].plugins.score.enabled[0].name: unknown plugin 'NotInstalled'"
    )


def test_a_permit_plugin_holds_a_pod_until_its_partner_comes(
    start_runtime: Callable[..., RuntimeProcess],
    schedulable_nodes: Callable[..., list[str]],
    pods: Pods,
) -> None:
    """PairUp (Permit) keeps the first pod of a pair waiting, off the scheduling loop, while
    other pods are placed; its partner releases it; a lone pod is rejected on timeout with
    upstream's message."""
    nodes = marked_nodes(schedulable_nodes, "only")
    scheduler = f"pairs-{nodes['run']}"
    start_runtime(
        scheduler_config(
            scheduler,
            plugins={"permit": {"enabled": [{"name": "PairUp"}]}},
            plugin_config=[{"name": "PairUp", "args": {"timeoutSeconds": 4}}],
        )
    )
    pair = "sample.example.com/pair"
    pods.create(pod_on(nodes, "first", scheduler, **{pair: "a"}))
    settle(1.5)
    pods.create(pod_on(nodes, "meanwhile", scheduler))  # the loop is not blocked by the wait
    assert pods.wait_placed("meanwhile") == {"meanwhile": nodes["only"]}
    assert pods.nodes()["first"] is None
    pods.create(pod_on(nodes, "second", scheduler, **{pair: "a"}))
    assert pods.wait_placed("first", "second") == {"first": nodes["only"], "second": nodes["only"]}

    pods.create(pod_on(nodes, "lone", scheduler, **{pair: "b"}))
    event = pods.wait_event("lone", "FailedScheduling")
    assert event["note"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 4s at plugin PairUp."
    )
    assert pods.nodes()["lone"] is None
