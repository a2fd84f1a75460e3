"""Outcomes as upstream writes them, the watch line decoder, timestamps and the HTTP probes."""

from __future__ import annotations

import datetime
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.live.kube import ApiError, RateLimiter, _lines, micro_time, parse_micro_time
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import (
    NOTE_LIMIT,
    SERIES_FINISH_SECONDS,
    EventSeries,
    condition_patch,
    event,
    scheduled_message,
    truncate_note,
)
from scheduler_runtime.live.server import HealthServer, parse_listen

POD = pod_info(
    {
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "42"},
        "spec": {"schedulerName": "bin-packer", "containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    }
)


def test_scheduled_message_is_upstreams() -> None:
    assert scheduled_message(POD, "node-1") == "Successfully assigned shop/web to node-1"


def test_event_is_an_events_v1_event_reported_by_the_profile() -> None:
    made = event(
        POD,
        kind="Warning",
        reason="FailedScheduling",
        action="Scheduling",
        note="0/3 nodes are available: 3 Insufficient cpu.",
        controller="bin-packer",
        instance="bin-packer-host",
    )
    assert made["apiVersion"] == "events.k8s.io/v1"
    assert made["metadata"]["name"].startswith("web.")
    assert made["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "shop",
        "name": "web",
        "uid": "u1",
        "resourceVersion": "42",
    }
    assert (made["reportingController"], made["action"], made["type"]) == (
        "bin-packer",
        "Scheduling",
        "Warning",
    )


def test_long_notes_are_truncated_to_the_api_limit() -> None:
    assert truncate_note("short") == "short"
    cut = truncate_note("x" * 5000)
    assert len(cut) == NOTE_LIMIT
    assert cut.endswith("...")


def test_condition_patch_sets_unschedulable_with_the_message() -> None:
    patch = condition_patch(POD, "Unschedulable", "0/1 nodes are available.", None)
    assert patch is not None
    (condition,) = patch["status"]["conditions"]
    assert condition["type"] == "PodScheduled"
    assert condition["status"] == "False"
    assert condition["reason"] == "Unschedulable"
    assert condition["message"] == "0/1 nodes are available."
    assert "nominatedNodeName" not in patch["status"]


def test_condition_patch_is_skipped_when_nothing_changes() -> None:
    already = pod_info(
        {
            **POD.pod,
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "m",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
        }
    )
    assert condition_patch(already, "Unschedulable", "m", None) is None
    changed = condition_patch(already, "Unschedulable", "other", "node-2")
    assert changed is not None
    assert changed["status"]["nominatedNodeName"] == "node-2"
    # Still False: the transition time stays.
    assert changed["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"


def test_watch_lines_are_decoded_across_chunk_boundaries() -> None:
    chunks: Iterator[bytes] = iter(
        [b'{"type":"ADDED","object":{"a":', b'1}}\n{"type":"DEL', b'ETED"}']
    )
    assert list(_lines(chunks)) == [{"type": "ADDED", "object": {"a": 1}}, {"type": "DELETED"}]


def test_micro_time_is_rfc3339_with_microseconds() -> None:
    moment = datetime.datetime(2026, 11, 22, 2, 3, 4, 56, tzinfo=datetime.UTC)
    assert micro_time(moment) == "2026-11-22T02:03:04.000056Z"
    assert parse_micro_time("2026-11-22T02:03:04.000056Z") == moment


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("0.0.0.0:10251", ("0.0.0.0", 10251)),
        (":8080", ("0.0.0.0", 8080)),
        ("[::1]:10251", ("::1", 10251)),
    ],
)
def test_listen_address(text: str, address: tuple[str, int]) -> None:
    assert parse_listen(text) == address


@pytest.mark.parametrize("text", ["10251", "host:port", "host:70000"])
def test_bad_listen_address_names_the_flag(text: str) -> None:
    with pytest.raises(ValueError, match="--listen"):
        parse_listen(text)


def fetch(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_probes_and_metrics_over_http() -> None:
    metrics = SchedulerMetrics()
    metrics.attempt("scheduled", "bin-packer", 0.01)
    metrics.watch_pending(lambda: {"active": 3, "backoff": 0, "unschedulable": 1, "gated": 0})
    problems = {"ready": "informer caches not synced"}
    server = HealthServer(
        ("127.0.0.1", 0),
        live=lambda: "",
        ready=lambda: problems["ready"],
        registry=metrics.registry,
    )
    server.start()
    try:
        assert fetch(server.port, "/healthz") == (200, "ok")
        assert fetch(server.port, "/livez") == (200, "ok")
        assert fetch(server.port, "/readyz") == (500, "informer caches not synced\n")
        problems["ready"] = ""
        assert fetch(server.port, "/readyz") == (200, "ok")
        assert fetch(server.port, "/nothing")[0] == 404
        code, text = fetch(server.port, "/metrics")
    finally:
        server.stop()
    assert code == 200
    assert 'scheduler_schedule_attempts_total{profile="bin-packer",result="scheduled"} 1.0' in text
    assert 'scheduler_pending_pods{queue="active"} 3.0' in text
    assert "scheduler_scheduling_attempt_duration_seconds_bucket" in text


class RecordingApi:
    """Takes the series' requests and answers them, as the API server would."""

    def __init__(self, missing: bool = False) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.missing = missing

    def request(
        self, method: str, path: str, *, body: Any, content_type: str = ""
    ) -> dict[str, Any]:
        self.requests.append((method, path, body))
        if method == "PATCH" and self.missing:
            self.missing = False
            raise ApiError(404, "NotFound", "gone")
        return {}

    def patch(self, path: str, body: Any, *, content_type: str = "") -> dict[str, Any]:
        return self.request("PATCH", path, body=body, content_type=content_type)


def failed_event(note: str) -> dict[str, Any]:
    return event(
        POD,
        kind="Warning",
        reason="FailedScheduling",
        action="Scheduling",
        note=note,
        controller="bin-packer",
        instance="bin-packer-host",
    )


def test_repeated_events_become_a_series_until_six_quiet_minutes() -> None:
    clock = {"now": 0.0}
    api = RecordingApi()
    series = EventSeries(api, clock=lambda: clock["now"])  # type: ignore[arg-type]
    first = failed_event("0/1 nodes are available.")
    series.record(first)
    clock["now"] = 60
    series.record(failed_event("0/1 nodes are available."))
    series.record(failed_event("0/1 nodes are available."))
    clock["now"] = 60 + SERIES_FINISH_SECONDS + 1
    series.record(failed_event("0/1 nodes are available."))
    methods = [method for method, _, _ in api.requests]
    assert methods == ["POST", "PATCH", "PATCH", "POST"]
    _, path, body = api.requests[2]
    assert path.endswith(f"/namespaces/shop/events/{first['metadata']['name']}")
    assert body["series"]["count"] == 3


def test_a_repeat_keeps_its_series_while_quieter_ones_finish() -> None:
    clock = {"now": 0.0}
    api = RecordingApi()
    series = EventSeries(api, clock=lambda: clock["now"])  # type: ignore[arg-type]

    def about(reason: str) -> dict[str, Any]:  # a series per reason
        return {**failed_event("m"), "reason": reason}

    series.record(about("A"))
    clock["now"] = 10
    series.record(about("B"))
    clock["now"] = 300
    series.record(about("A"))  # a repeat: its series goes on
    clock["now"] = 380  # B quiet for more than six minutes, A for 80 s
    series.record(about("B"))
    series.record(about("A"))
    assert [method for method, _, _ in api.requests] == ["POST", "POST", "PATCH", "POST", "PATCH"]


def test_a_series_whose_first_event_is_gone_starts_again() -> None:
    api = RecordingApi(missing=True)
    series = EventSeries(api)  # type: ignore[arg-type]
    series.record(failed_event("m"))
    series.record(failed_event("m"))
    assert [method for method, _, _ in api.requests] == ["POST", "PATCH", "POST"]


def test_rate_limiter_allows_a_burst_then_the_configured_rate() -> None:
    clock = {"now": 0.0}
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(round(seconds, 6))
        clock["now"] += seconds

    limiter = RateLimiter(qps=10, burst=2, clock=lambda: clock["now"], sleep=sleep)
    for _ in range(4):
        limiter.wait()
    assert slept == [0.1, 0.1]
    clock["now"] += 1.0  # a quiet second refills the bucket, up to the burst
    limiter.wait()
    limiter.wait()
    assert slept == [0.1, 0.1]


def test_rate_limiter_with_zero_qps_never_waits() -> None:
    limiter = RateLimiter(qps=0, burst=0, sleep=lambda seconds: pytest.fail("slept"))
    for _ in range(1000):
        limiter.wait()
