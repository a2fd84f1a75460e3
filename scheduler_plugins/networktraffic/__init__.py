"""NetworkTraffic: prefer the nodes that received the least network traffic lately, as
measured by Prometheus (the scheduler-plugins tutorial's plugin, in Python).

    pluginConfig:
    - name: NetworkTraffic
      args:
        prometheusAddress: http://prometheus.monitoring:9090
        networkInterface: eth0
        timeRangeInSeconds: 60

PreScore asks Prometheus once for every node (cached for `cacheTTLSeconds`); Score gives each
node its bytes per second; NormalizeScore scales them so the busiest node scores 0 and the
idlest 100. When Prometheus cannot answer, every node scores the neutral 50 (so the other
plugins decide); a node without data scores 50 too, and so does a node whose sample no
interface can have (negative, or above 1e15 bytes per second). Both are logged (at most once
a minute) and counted on /metrics.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from prometheus_client import CollectorRegistry, Counter
from pydantic import Field, field_validator

from scheduler_plugins.networktraffic.prometheus import (
    PrometheusError,
    check_address,
    query,
    traffic_query,
)
from scheduler_runtime.plugin_api import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    Int64s,
    PluginArgs,
    PluginBase,
    PodInfo,
    Slots,
    Snapshot,
    Status,
)

log = logging.getLogger(__name__)

NEUTRAL_SCORE = MAX_NODE_SCORE // 2
NO_DATA = -1  # a raw score: the node has no traffic figure
STATE_KEY = "PreScoreNetworkTraffic"
WARNING_INTERVAL = 60.0


class NetworkTrafficArgs(PluginArgs):
    prometheus_address: str = Field(description="Prometheus base URL, http:// or https://")
    network_interface: str = Field(
        default="eth0", pattern=r"^[A-Za-z0-9_.:@-]{1,64}$", description="node-exporter device"
    )
    time_range_in_seconds: int = Field(default=60, ge=1, le=86400)
    cache_ttl_seconds: float = Field(default=5.0, ge=0, alias="cacheTTLSeconds")
    query_timeout_seconds: float = Field(default=1.0, gt=0, le=30)

    @field_validator("prometheus_address")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return check_address(value)


@dataclass(frozen=True)
class Traffic:
    """One query's outcome: bytes per second by node, or why there is none."""

    by_node: dict[str, float]
    fetched_at: float
    error: PrometheusError | None = None


_FAILURES: weakref.WeakKeyDictionary[CollectorRegistry, tuple[Counter, Counter]] = (
    weakref.WeakKeyDictionary()
)


def failure_counters(registry: CollectorRegistry) -> tuple[Counter, Counter]:
    """The plugin's counters in `registry` (one pair per registry, shared by profiles)."""
    if registry not in _FAILURES:
        _FAILURES[registry] = (
            Counter(
                "scheduler_networktraffic_query_failures",
                "Prometheus queries of the NetworkTraffic plugin that gave no usable answer.",
                ["profile", "reason"],
                registry=registry,
            ),
            Counter(
                "scheduler_networktraffic_nodes_without_data",
                "Node scores of the NetworkTraffic plugin that were neutral for lack of data.",
                ["profile"],
                registry=registry,
            ),
        )
    return _FAILURES[registry]


class NetworkTraffic(PluginBase[NetworkTrafficArgs]):
    name: ClassVar[str] = "NetworkTraffic"
    args_type = NetworkTrafficArgs

    def __init__(
        self,
        args: Any,
        handle: Handle,
        *,
        clock: Callable[[], float] = time.monotonic,
        fetch: Callable[[str, str, float], dict[str, float]] = query,
    ) -> None:
        super().__init__(args, handle)
        self.promql = traffic_query(self.args.network_interface, self.args.time_range_in_seconds)
        # The guard's budget: the query's own timeout plus room for the rest.
        self.time_budget = self.args.query_timeout_seconds + 1.0
        self._clock = clock
        self._fetch = fetch
        self._cached: Traffic | None = None
        self._last_warning = -WARNING_INTERVAL
        self._suppressed = 0
        registry = handle.services.metrics_registry or CollectorRegistry()
        self.query_failures, self.nodes_without_data = failure_counters(registry)
        framework = handle.framework
        self.profile = framework.scheduler_name if framework is not None else ""

    def traffic(self) -> Traffic:
        """The cached answer while fresh (a failure too, so a Prometheus that is down costs
        one timeout per interval, not one per pod); else one query for all nodes."""
        now = self._clock()
        cached = self._cached
        if cached is not None and now - cached.fetched_at < self.args.cache_ttl_seconds:
            return cached
        try:
            fresh = Traffic(
                self._fetch(
                    self.args.prometheus_address, self.promql, self.args.query_timeout_seconds
                ),
                now,
            )
        except PrometheusError as error:
            self.query_failures.labels(profile=self.profile, reason=error.reason).inc()
            self._warn("Prometheus query failed, network traffic scores are neutral: %s", error)
            fresh = Traffic({}, now, error)
        self._cached = fresh
        return fresh

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status:
        state.write(STATE_KEY, self.traffic())
        return SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Int64s:
        """Bytes per second received by each candidate (NO_DATA where unknown). Enabled at
        score only (the usual way, as in the scheduler-plugins tutorial), it gets no PreScore
        call and asks (or reads the cache) here."""
        traffic: Traffic | None = state.get(STATE_KEY)
        if traffic is None:
            traffic = self.traffic()
        names = [snapshot.name(int(slot)) for slot in slots]
        raw = [traffic.by_node.get(name) for name in names]
        if traffic.error is None:
            missing = [name for name, value in zip(names, raw, strict=True) if value is None]
            if missing:
                self.nodes_without_data.labels(profile=self.profile).inc(len(missing))
                self._warn(
                    "no network traffic data for %d node(s), scored neutral: %s",
                    len(missing),
                    ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else ""),
                )
        return np.array([NO_DATA if v is None else int(v) for v in raw], dtype=np.int64)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Int64s) -> Status:
        normalize(scores)
        return SUCCESS

    def _warn(self, message: str, *args: Any) -> None:
        """At most one warning per interval; the next one says how many were held back."""
        now = self._clock()
        if now - self._last_warning < WARNING_INTERVAL:
            self._suppressed += 1
            return
        if self._suppressed:
            message += f" ({self._suppressed} similar warnings suppressed)"
        log.warning(message, *args)
        self._last_warning = now
        self._suppressed = 0


def normalize(scores: Int64s) -> None:
    """In place: the busiest node with data scores 0, the idlest 100, linearly between;
    nodes without data score NEUTRAL_SCORE (all of them when none has data)."""
    known = scores != NO_DATA
    if not known.any():
        scores[:] = NEUTRAL_SCORE
        return
    busiest, idlest = int(scores[known].max()), int(scores[known].min())
    spread = busiest - idlest
    if spread == 0:
        scores[known] = MAX_NODE_SCORE
    else:
        scores[known] = (busiest - scores[known]) * MAX_NODE_SCORE // spread
    scores[~known] = NEUTRAL_SCORE
