"""`scheduler-runtime run`: the reflectors fill the cache, the HTTP server answers probes, and
the scheduling loop runs while this instance leads (or always, without leader election).
SIGTERM and SIGINT stop it cleanly and release the lease; losing the lease stops scheduling
at once and ends the process with status 1, as kube-scheduler does. So does a lease not renewed
within renewDeadline, noticed before the next cycle or binding (the elector's fence), even when
the process was frozen and the elector has not looked yet."""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

from scheduler_runtime.backend import NODES, PODS
from scheduler_runtime.config import SchedulerConfiguration
from scheduler_runtime.config.versions import FLAG as VERSION_FLAG
from scheduler_runtime.config.versions import Emulation, VersionError
from scheduler_runtime.framework.interface import DEFAULT_PLUGIN_TIME_BUDGET
from scheduler_runtime.live.explanations import DEFAULT_KEPT, ExplanationStore
from scheduler_runtime.live.kube import ApiError, Kube, RateLimiter, load_client
from scheduler_runtime.live.leader import LeaderElector, LeaseConfig, identity
from scheduler_runtime.live.metrics import SchedulerMetrics
from scheduler_runtime.live.outcomes import Outcomes
from scheduler_runtime.live.podgroup_status import CoschedulingStatus
from scheduler_runtime.live.reflector import (
    DEVICE_TAINT_RULE_PATHS,
    DRA_PATHS,
    Reflector,
    object_paths,
    start,
)
from scheduler_runtime.live.scheduler import Scheduler
from scheduler_runtime.live.server import HealthServer
from scheduler_runtime.live.serving import ServingOptions, secure_serving

log = logging.getLogger(__name__)

FLUSH_SECONDS = 30.0  # upstream flushes leftover unschedulable pods every 30s
# Python runs signal handlers in the main thread, and only once it wakes: a SIGTERM the kernel
# hands to another thread would wait forever behind an untimed wait.
SIGNAL_CHECK_SECONDS = 0.5
# Reading the API server's version at start: attempts, and the pause after the first failure
# (doubling each time: about half a minute in all, as an API server restarting may need).
VERSION_ATTEMPTS = 5
VERSION_RETRY_SECONDS = 2.0


@dataclass(frozen=True)
class RunOptions:
    kubeconfig: str | None
    listen: tuple[str, int] | None = None  # the plain HTTP port, for local use only
    serving: ServingOptions = field(default_factory=ServingOptions)  # the secure port
    explanations: int = DEFAULT_KEPT  # pods whose explanation /explain serves
    explain_annotation: bool = False
    plugin_time_budget: float = DEFAULT_PLUGIN_TIME_BUDGET  # per call of an out-of-tree plugin
    emulation: Emulation | None = None  # the Kubernetes minor chosen, for /metrics


def apiserver_version(
    kubeconfig: str | None, *, required: bool, sleep: Callable[[float], None] = time.sleep
) -> str:
    """The API server's gitVersion (GET /version), tried a few times. Not `required` (the
    minor was given): "" when it does not answer. Required: VersionError naming the cause."""
    kube = Kube(load_client(kubeconfig))
    pause = VERSION_RETRY_SECONDS
    for attempt in range(VERSION_ATTEMPTS if required else 1):
        try:
            git_version = kube.get("/version", timeout=10).get("gitVersion")
        except (ApiError, OSError, ValueError) as error:
            failure = f"{type(error).__name__}: {error}"
        else:
            if isinstance(git_version, str) and git_version:
                return git_version
            failure = "its answer has no gitVersion"
        if attempt + 1 < VERSION_ATTEMPTS and required:
            log.warning("cannot read the API server's version (%s); trying again", failure)
            sleep(pause)
            pause *= 2
    if not required:
        return ""
    raise VersionError(
        f"cannot read the API server's version ({failure}): {VERSION_FLAG} chooses the "
        "Kubernetes minor without it"
    )


def hostname() -> str:
    """The pod's name when the Deployment passes it down, else the host's name."""
    return os.environ.get("POD_NAME") or socket.gethostname()


NEVER = 1 << 30  # a collection threshold never reached


def _malloc_trim() -> Callable[[], object]:
    """glibc's malloc_trim(0), or nothing where the C library has none (musl, macOS)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is None:
        return lambda: None
    return functools.partial(trim, 0)


class HeapKeeper:
    """Keeps the cyclic garbage collector off the cluster's objects.

    The cache holds the cluster as decoded JSON, acyclic and freed by reference counting once
    its object goes; yet every full collection scanned all of it again, pausing the scheduler
    for up to 290 ms at 500 nodes and 2,000 pods. So full collections do not start on their
    own: every few seconds the young generations are collected and whatever survived is
    frozen (gc.freeze). Once an hour everything is thawed and collected, so a cycle that was
    frozen while alive (an error's traceback, say) is not kept forever.

    Each tick also hands the memory freed inside glibc's heaps back to the system
    (malloc_trim): every watch event is decoded into fresh dicts and most are freed at once,
    leaving free pages between the objects that live, which glibc on its own returns only
    from a heap's top. At 500 nodes this keeps the peak RSS about 5 MiB lower."""

    def __init__(
        self,
        freeze_every: float = 5.0,
        collect_all_every: float = 3600.0,
        release: Callable[[], object] | None = None,
    ) -> None:
        self.freeze_every = freeze_every
        self.collect_all_every = collect_all_every
        self.release = release if release is not None else _malloc_trim()
        self._last_full = time.monotonic()

    def freeze(self) -> None:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, NEVER)  # full collections only come from tick()
        gc.collect(1)
        gc.freeze()

    def tick(self) -> None:
        if time.monotonic() - self._last_full >= self.collect_all_every:
            gc.unfreeze()
            gc.collect()
            self._last_full = time.monotonic()
        self.freeze()
        self.release()

    def run(self, done: threading.Event) -> None:
        while not done.wait(self.freeze_every):
            self.tick()


class Runtime:
    """Everything one scheduler process runs, and the order it starts and stops in."""

    def __init__(self, config: SchedulerConfiguration, options: RunOptions) -> None:
        self.config = config
        api = load_client(options.kubeconfig)
        # As kube-scheduler does, events and leader election get clients of their own, each
        # with its own rate limit, so neither can starve the other or the scheduling loop.
        self.kube, event_writer, self.lease_kube = (Kube(api, self._limiter()) for _ in range(3))
        self.metrics = SchedulerMetrics()
        if options.emulation is not None:
            self.metrics.emulating(options.emulation.version, options.emulation.apiserver)
        outcomes = Outcomes(self.kube, event_writer, hostname(), leading=self.leading)
        self.elector: LeaderElector | None = None
        self.scheduler = Scheduler(
            config,
            self.kube,
            outcomes,
            self.metrics,
            explanations=ExplanationStore(options.explanations),
            explain_annotation=options.explain_annotation,
            plugin_time_budget=options.plugin_time_budget,
            on_fenced=self._stop_leading,
        )
        backend = self.scheduler.backend
        self.pod_group_status = CoschedulingStatus(
            backend.groups,
            self.kube,
            backend.coschedules,
            leading=self.leading,
            fence=outcomes.fence,
        )
        backend.groups.on_change = self.pod_group_status.changed
        events = backend.events
        paths = object_paths(self.scheduler.workload_api)
        self.reflectors = [
            Reflector(self.kube, NODES, "/api/v1/nodes", events),
            Reflector(self.kube, PODS, "/api/v1/pods", events),
            *(Reflector(self.kube, kind, path, events) for kind, path in paths.items()),
            *(Reflector(self.kube, kind, path, events) for kind, path in DRA_PATHS.items()),
        ]
        if config.features.dra_device_taint_rules:
            self.reflectors += [
                Reflector(self.kube, kind, path, events)
                for kind, path in DEVICE_TAINT_RULE_PATHS.items()
            ]
        self.done = threading.Event()
        self.heap = HeapKeeper()
        self.lost_lease = False
        self.elector = self._elector()
        secure = secure_serving(options.serving, options.kubeconfig)
        self.tls = secure[1] if secure is not None else None
        self.server = HealthServer(
            options.listen,
            live=self.live,
            ready=self.ready,
            registry=self.metrics.registry,
            explanations=self.scheduler.explain,
            secure=secure[0] if secure is not None else None,
        )
        self._loop = threading.Thread(target=self.scheduler.run, name="scheduling", daemon=True)

    def _limiter(self) -> RateLimiter:
        connection = self.config.client_connection
        return RateLimiter(qps=connection.qps, burst=connection.burst)

    def _elector(self) -> LeaderElector | None:
        election = self.config.leader_election
        if not election.leader_elect:
            return None
        lease = LeaseConfig(
            name=election.resource_name,
            namespace=election.resource_namespace,
            lease_duration=election.lease_duration,
            renew_deadline=election.renew_deadline,
            retry_period=election.retry_period,
        )
        return LeaderElector(
            self.lease_kube,
            lease,
            identity(hostname()),
            on_started_leading=self._start_leading,
            on_stopped_leading=self._stop_leading,
        )

    def leading(self) -> bool:
        """Whether this instance may schedule and bind: without leader election always, else
        while its last renewal is younger than renewDeadline."""
        elector = self.elector
        return elector is None or elector.holds_lease()

    # ----- probes

    def synced(self) -> bool:
        return all(r.synced.is_set() for r in self.reflectors)

    def live(self) -> str:
        if self._loop.ident is not None and not self._loop.is_alive() and not self.done.is_set():
            return "scheduling loop stopped"
        return ""

    def ready(self) -> str:
        if not self.synced():
            return "informer caches not synced"
        elector = self.elector
        if elector is None or elector.is_leader or elector.leader_is_healthy():
            return ""
        return "no healthy leader holds the lease"

    # ----- lifecycle

    def run(self) -> None:
        """Runs until SIGTERM/SIGINT, or until the lease is lost (`lost_lease` then says so)."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        self.server.start()
        if self.tls is not None:
            self.tls.start()
        start(self.reflectors)
        threading.Thread(target=self._flush, name="flush", daemon=True).start()
        for address in self.server.addresses():
            log.info("serving on %s", address)
        while not self.synced() and not self.done.wait(0.1):
            pass
        self.heap.freeze()  # the initial lists, before the first pod is scheduled
        threading.Thread(target=self.heap.run, args=(self.done,), name="heap", daemon=True).start()
        if not self.done.is_set():
            if self.elector is None:
                self._start_leading()
            else:
                threading.Thread(target=self.elector.run, name="leader", daemon=True).start()
        while not self.done.wait(SIGNAL_CHECK_SECONDS):
            pass
        self._shutdown()

    def _start_leading(self) -> None:
        if self.elector is not None:
            self.metrics.leader.labels(name=self.elector.config.name).set(1)
        self._loop.start()
        status = threading.Thread(
            target=self.pod_group_status.run, args=(self.done,), name="podgroup-status", daemon=True
        )
        status.start()

    def _stop_leading(self) -> None:
        """The elector lost the lease, or the scheduler found it not renewed in time."""
        self.scheduler.stopping.set()  # no further cycle starts, even before shutdown
        if not self.lost_lease:
            self.lost_lease = True
            log.error("leader election lost")
        self.done.set()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        log.info("received %s, shutting down", signal.Signals(signum).name)
        self.done.set()

    def _flush(self) -> None:
        while not self.done.wait(FLUSH_SECONDS):
            self.scheduler.queue.flush_unschedulable()

    def _shutdown(self) -> None:
        self.scheduler.stop(finish_bindings=not self.lost_lease)
        if self.elector is not None:
            self.elector.stop()
            self.metrics.leader.labels(name=self.elector.config.name).set(0)
        for reflector in self.reflectors:
            reflector.stop()
        self.server.stop()
        if self.tls is not None:
            self.tls.stop()
