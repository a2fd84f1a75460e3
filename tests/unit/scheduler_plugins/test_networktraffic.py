"""NetworkTraffic: the query it builds, how it reads Prometheus' answer, normalization, the
per-cycle cache and every way Prometheus can fail, against a fake Prometheus."""

from __future__ import annotations

import logging
import random
from typing import Any

import numpy as np
import orjson
import pytest
from prometheus_client import CollectorRegistry
from prometheus_support import FakePrometheus

from scheduler_plugins.networktraffic import (
    NEUTRAL_SCORE,
    NO_DATA,
    NetworkTraffic,
    NetworkTrafficArgs,
    normalize,
)
from scheduler_plugins.networktraffic.prometheus import (
    PrometheusError,
    parse_vector,
    query,
    traffic_query,
)
from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugin_api import CycleState, Handle, Services


def test_one_query_for_all_nodes_joined_to_node_names() -> None:
    assert traffic_query("eth0", 120) == (
        'sum by (nodename) (rate(node_network_receive_bytes_total{device="eth0"}[120s])'
        " * on(instance, job) group_left(nodename) node_uname_info)"
    )


def test_parse_vector_reads_finite_values_by_node() -> None:
    body = orjson.dumps(
        {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [
                    {"metric": {"nodename": "a"}, "value": [1, "10.5"]},
                    {"metric": {"nodename": "b"}, "value": [1, "NaN"]},
                    {"metric": {}, "value": [1, "3"]},
                ],
            },
        }
    )
    assert parse_vector(body) == {"a": 10.5}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>", "the answer is not JSON"),
        (b'{"status": "error", "error": "parse error"}', "the query failed: parse error"),
        (b'{"status": "success", "data": {"resultType": "matrix"}}', "not an instant vector"),
        (
            b'{"status": "success", "data": {"resultType": "vector", "result": [{"value": 1}]}}',
            "a sample of the wrong shape",
        ),
    ],
)
def test_parse_vector_refuses_answers_it_cannot_use(body: bytes, message: str) -> None:
    with pytest.raises(PrometheusError, match=message) as caught:
        parse_vector(body)
    assert caught.value.reason == "bad_response"


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ([100, 300, 200], [100, 0, 50]),
        ([0, 1000, NO_DATA], [100, 0, NEUTRAL_SCORE]),
        ([NO_DATA, NO_DATA], [NEUTRAL_SCORE, NEUTRAL_SCORE]),
        ([7, 7], [100, 100]),
        ([5], [100]),
    ],
)
def test_busiest_scores_0_and_idlest_100(raw: list[int], normalized: list[int]) -> None:
    scores = np.array(raw, dtype=np.int64)
    normalize(scores)
    assert scores.tolist() == normalized


def test_query_against_a_server(fake_prometheus: FakePrometheus) -> None:
    fake_prometheus.traffic = {"a": 1.0, "b": 2.5}
    assert query(fake_prometheus.address, "up", 2) == {"a": 1.0, "b": 2.5}
    assert fake_prometheus.queries == ["up"]


def test_query_failures_are_named(fake_prometheus: FakePrometheus) -> None:
    fake_prometheus.status = 503
    with pytest.raises(PrometheusError, match="HTTP 503") as caught:
        query(fake_prometheus.address, "up", 2)
    assert caught.value.reason == "http_error"
    fake_prometheus.status, fake_prometheus.delay = 200, 1.0
    with pytest.raises(PrometheusError, match=r"within 0\.2s") as caught:
        query(fake_prometheus.address, "up", 0.2)
    assert caught.value.reason == "timeout"
    fake_prometheus.server.shutdown()
    fake_prometheus.server.server_close()
    with pytest.raises(PrometheusError) as caught:
        query(fake_prometheus.address, "up", 1)
    assert caught.value.reason == "unreachable"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def snapshot(*names: str) -> Snapshot:
    nodes = Snapshot()
    for name in names:
        nodes.add_node(
            {
                "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
            }
        )
    return nodes


def plugin(
    address: str, clock: Clock, registry: CollectorRegistry, **args: Any
) -> tuple[NetworkTraffic, Snapshot]:
    nodes = snapshot("a", "b", "c")
    handle = Handle(nodes, services=Services(metrics_registry=registry))
    model = NetworkTrafficArgs.model_validate({"prometheusAddress": address, **args})
    return NetworkTraffic(model, handle, clock=clock), nodes


def scores(traffic: NetworkTraffic, nodes: Snapshot) -> list[int]:
    state, pod = CycleState(), pod_info({"metadata": {"name": "p"}, "spec": {}})
    slots = nodes.order()
    assert traffic.pre_score(state, pod, nodes, slots).is_success
    raw = traffic.score_nodes(state, pod, nodes, slots)
    assert traffic.normalize_score(state, pod, raw).is_success
    return [int(score) for score in raw]


@pytest.mark.parametrize("huge", [1e19, 9e18, 1e16, -5.0])
def test_a_sample_no_interface_can_have_scores_neutral_and_the_others_as_usual(
    fake_prometheus: FakePrometheus, huge: float
) -> None:
    """1e19 raised OverflowError, and 9e18 wrapped normalization to negative scores, failing
    or skewing every pod."""
    traffic, nodes = plugin(fake_prometheus.address, Clock(), CollectorRegistry())
    fake_prometheus.traffic = {"a": huge, "b": 100, "c": 300}
    assert scores(traffic, nodes) == [NEUTRAL_SCORE, 100, 0]


def test_answers_are_cached_for_the_ttl(fake_prometheus: FakePrometheus) -> None:
    clock, registry = Clock(), CollectorRegistry()
    traffic, nodes = plugin(fake_prometheus.address, clock, registry, cacheTTLSeconds=5)
    fake_prometheus.traffic = {"a": 500, "b": 100, "c": 300}
    assert scores(traffic, nodes) == [0, 100, 50]
    fake_prometheus.traffic = {"a": 100, "b": 500, "c": 300}
    clock.now += 4.9
    assert scores(traffic, nodes) == [0, 100, 50]
    assert len(fake_prometheus.queries) == 1
    clock.now += 0.2
    assert scores(traffic, nodes) == [100, 0, 50]
    assert len(fake_prometheus.queries) == 2


def test_enabled_at_score_alone_it_asks_for_the_traffic_itself(
    fake_prometheus: FakePrometheus,
) -> None:
    """A profile may enable it under `score` only: then no PreScore runs before Score."""
    traffic, nodes = plugin(fake_prometheus.address, Clock(), CollectorRegistry())
    fake_prometheus.traffic = {"a": 500, "b": 100, "c": 300}
    state, pod = CycleState(), pod_info({"metadata": {"name": "p"}, "spec": {}})
    raw = traffic.score_nodes(state, pod, nodes, nodes.order())
    assert traffic.normalize_score(state, pod, raw).is_success
    assert [int(score) for score in raw] == [0, 100, 50]
    assert len(fake_prometheus.queries) == 1


def test_prometheus_down_gives_neutral_scores_a_warning_and_a_metric(
    fake_prometheus: FakePrometheus, caplog: pytest.LogCaptureFixture
) -> None:
    clock, registry = Clock(), CollectorRegistry()
    traffic, nodes = plugin(fake_prometheus.address, clock, registry, cacheTTLSeconds=1)
    fake_prometheus.status = 500
    with caplog.at_level(logging.WARNING):
        assert scores(traffic, nodes) == [NEUTRAL_SCORE] * 3
        clock.now += 2
        assert scores(traffic, nodes) == [NEUTRAL_SCORE] * 3
    failures = registry.get_sample_value(
        "scheduler_networktraffic_query_failures_total",
        {"profile": "", "reason": "http_error"},
    )
    assert failures == 2
    # Rate-limited: two failures within a minute log one warning.
    assert [r.getMessage()[:33] for r in caplog.records] == ["Prometheus query failed, network "]
    fake_prometheus.status = 200
    fake_prometheus.traffic = {"a": 10, "b": 20}
    clock.now += 2
    assert scores(traffic, nodes) == [100, 0, NEUTRAL_SCORE]
    without_data = registry.get_sample_value(
        "scheduler_networktraffic_nodes_without_data_total", {"profile": ""}
    )
    assert without_data == 1


def test_a_failure_is_cached_too(fake_prometheus: FakePrometheus) -> None:
    clock = Clock()
    traffic, nodes = plugin(fake_prometheus.address, clock, CollectorRegistry(), cacheTTLSeconds=5)
    fake_prometheus.status = 500
    scores(traffic, nodes)
    scores(traffic, nodes)
    assert len(fake_prometheus.queries) == 1


def config(args: dict[str, Any]) -> Any:
    return load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "traffic",
                    "plugins": {"multiPoint": {"enabled": [{"name": "NetworkTraffic"}]}},
                    "pluginConfig": [{"name": "NetworkTraffic", "args": args}],
                }
            ],
        }
    )


@pytest.mark.parametrize(
    ("args", "path"),
    [
        ({}, "args.prometheusAddress"),
        ({"prometheusAddress": "prometheus:9090"}, "args.prometheusAddress"),
        (
            {"prometheusAddress": "http://p:9090", "networkInterface": 'eth0"}'},
            "args.networkInterface",
        ),
        (
            {"prometheusAddress": "http://p:9090", "timeRangeInSeconds": 0},
            "args.timeRangeInSeconds",
        ),
    ],
)
def test_bad_args_are_refused_by_field(args: dict[str, Any], path: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config(args)
    assert caught.value.path == f"profiles[0].pluginConfig[0].{path}"


def test_the_pod_goes_to_the_quietest_node(fake_prometheus: FakePrometheus) -> None:
    fake_prometheus.traffic = {"a": 9e6, "b": 1e3, "c": 5e6}
    resolved = config({"prometheusAddress": fake_prometheus.address}).profiles[0]
    nodes = snapshot("a", "b", "c")
    fwk = Framework(resolved, Handle(nodes))
    algorithm = SchedulingAlgorithm(nodes, 0, random.Random(1))
    pod = pod_info({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert algorithm.schedule_pod(fwk, CycleState(), pod).suggested_host == "b"
    assert len(fake_prometheus.queries) == 1


@pytest.mark.parametrize("prometheus_answers", [True, False])
def test_enabled_at_score_only_as_the_tutorial_does(
    fake_prometheus: FakePrometheus, prometheus_answers: bool
) -> None:
    """Every other score plugin disabled and NetworkTraffic under `score` only: no PreScore
    call, so Score asks Prometheus itself (once per cycle, cached)."""
    fake_prometheus.traffic = {"a": 9e6, "b": 1e3, "c": 5e6}
    if not prometheus_answers:
        fake_prometheus.status = 503
    args = {
        "prometheusAddress": fake_prometheus.address,
        "networkInterface": "eth0",
        "timeRangeInSeconds": 60,
    }
    resolved = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "traffic",
                    "plugins": {
                        "score": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "NetworkTraffic", "weight": 1}],
                        }
                    },
                    "pluginConfig": [{"name": "NetworkTraffic", "args": args}],
                }
            ],
        }
    ).profiles[0]
    assert "NetworkTraffic" not in resolved.enabled("preScore")
    assert resolved.enabled("score") == ("NetworkTraffic",)
    nodes = snapshot("a", "b", "c")
    fwk = Framework(resolved, Handle(nodes))
    algorithm = SchedulingAlgorithm(nodes, 0, random.Random(1))
    pod = pod_info({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    state = CycleState()
    feasible, _ = algorithm.find_nodes_that_fit(fwk, state, pod)
    _, by_plugin = algorithm.prioritize(fwk, state, pod, feasible)
    expected = [0, 100, 44] if prometheus_answers else [NEUTRAL_SCORE] * 3
    assert [int(score) for score in by_plugin["NetworkTraffic"]] == expected
    assert len(fake_prometheus.queries) == 1
