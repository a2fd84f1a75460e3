"""Leader election on a coordination.k8s.io/v1 Lease, record for record what client-go's
leaderelection package writes, so our replicas and client-go based ones can share a lease.

A candidate tries every retryPeriod; the leader renews every retryPeriod and gives up when it
has not renewed for renewDeadline; a holder is presumed dead leaseDuration after the record
last changed as this candidate observed it. On a clean shutdown the leader releases the lease
(empty holder, leaseDurationSeconds 1) so a follower takes over at once.

Beyond client-go, the leader fences itself: `holds_lease()` is true only while the last
successful renewal, timed on the monotonic clock from when it was sent, is younger than
renewDeadline. The scheduler asks it before every cycle and right before every write that
binds or evicts, so a leader frozen past its lease (a stopped process, a stalled VM) binds
nothing when it wakes; others take over no earlier than leaseDuration after that renewal,
which leaves leaseDuration - renewDeadline for a write already on the wire."""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scheduler_runtime.live.kube import ApiError, Kube, micro_time, parse_micro_time

log = logging.getLogger(__name__)

JITTER = 0.1
NOT_FOUND = 404


def identity(hostname: str | None = None) -> str:
    """hostname + "_" + a fresh UUID, as kube-scheduler names its leader election identity."""
    return f"{hostname or socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaseConfig:
    name: str
    namespace: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaderElector:
    """Campaigns for the lease, then renews it until it is lost or released."""

    def __init__(
        self,
        kube: Kube,
        config: LeaseConfig,
        identity: str,
        *,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.config = config
        self.identity = identity
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.wall_clock = wall_clock
        self.monotonic = monotonic
        self.path = (
            f"/apis/coordination.k8s.io/v1/namespaces/{config.namespace}/leases/{config.name}"
        )
        self._stopping = threading.Event()
        self._leading = threading.Event()
        self._writing = threading.Lock()  # a renewal never races the release
        self._observed_spec: dict[str, Any] = {}
        self._observed_at = 0.0
        # When the last successful acquisition or renewal was sent (monotonic; None: never).
        self._renewed_at: float | None = None

    @property
    def _timeout(self) -> float:
        """A lease request may not eat the whole renew deadline."""
        return self.config.renew_deadline / 2

    @property
    def is_leader(self) -> bool:
        return self._leading.is_set()

    @property
    def leader(self) -> str:
        """The holder as last observed ("" when nobody holds the lease)."""
        return str(self._observed_spec.get("holderIdentity") or "")

    def holds_lease(self) -> bool:
        """Whether this candidate leads and may act on it: its last successful renewal was
        sent less than renewDeadline ago. Cheap enough to ask before every write."""
        renewed = self._renewed_at
        return (
            self._leading.is_set()
            and renewed is not None
            and self.monotonic() - renewed < self.config.renew_deadline
        )

    def leader_is_healthy(self) -> bool:
        """Whether the lease is held by someone whose record is not yet expired."""
        return bool(self.leader) and not self._expired()

    def run(self) -> None:
        """Campaigns until leading, then renews; returns when leadership ends or on stop()."""
        while not self._stopping.is_set():
            if self._try_acquire_or_renew():
                break
            self._stopping.wait(self._jittered(self.config.retry_period))
        if self._stopping.is_set():
            return
        self._leading.set()
        log.info("%s became leader of lease %s", self.identity, self.path)
        self.on_started_leading()
        self._renew_until_lost()
        if not self._stopping.is_set():
            self._leading.clear()
            self.on_stopped_leading()

    def stop(self) -> None:
        """Stops campaigning or renewing; releases the lease when holding it."""
        self._stopping.set()
        with self._writing:
            if self._leading.is_set():
                self._leading.clear()
                self._release()

    # ----- the protocol

    def _renew_until_lost(self) -> None:
        while not self._stopping.wait(self.config.retry_period):
            if not self._try_acquire_or_renew() and not self._renewed_recently():
                log.error("%s lost lease %s: not renewed in time", self.identity, self.path)
                return
            if self.leader != self.identity and not self._stopping.is_set():
                log.error("%s lost lease %s to %s", self.identity, self.path, self.leader)
                return

    def _renewed_recently(self) -> bool:
        renewed = self._renewed_at
        return renewed is not None and self.monotonic() - renewed < self.config.renew_deadline

    def _try_acquire_or_renew(self) -> bool:
        """One attempt, as client-go's tryAcquireOrRenew: create, take over or renew."""
        with self._writing:
            if self._stopping.is_set():
                return False
            return self._attempt()

    def _attempt(self) -> bool:
        sent = self.monotonic()  # a renewal counts from before it was sent, never after
        now = micro_time()
        try:
            lease = self.kube.get(self.path, timeout=self._timeout)
        except ApiError as error:
            if error.code != NOT_FOUND:
                log.warning("reading lease %s failed: %s", self.path, error)
                return False
            return self._create(now, sent)
        except OSError as error:
            log.warning("reading lease %s failed: %s", self.path, error)
            return False
        self._observe(lease)
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.identity and not self._expired():
            return False
        held = holder == self.identity and self.is_leader
        record = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": round(self.config.lease_duration),
            "acquireTime": spec.get("acquireTime") if held else now,
            "renewTime": now,
            "leaseTransitions": int(spec.get("leaseTransitions") or 0) + (0 if held else 1),
        }
        return self._write("PUT", self.path, {**lease, "spec": record}, sent)

    def _create(self, now: str, sent: float) -> bool:
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": round(self.config.lease_duration),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        }
        collection = self.path.rsplit("/", 1)[0]
        return self._write("POST", collection, lease, sent)

    def _write(self, method: str, path: str, lease: dict[str, Any], sent: float) -> bool:
        try:
            written = self.kube.request(method, path, body=lease, timeout=self._timeout)
        except (ApiError, OSError) as error:
            log.info("writing lease %s failed: %s", self.path, error)
            return False
        self._observe(written)
        self._renewed_at = sent
        return True

    def _release(self) -> None:
        """client-go's release: an empty holder with a one-second lease."""
        try:
            lease = self.kube.get(self.path, timeout=self._timeout)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            now = micro_time()
            released = {
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": int(spec.get("leaseTransitions") or 0),
            }
            self.kube.request(
                "PUT", self.path, body={**lease, "spec": released}, timeout=self._timeout
            )
            log.info("%s released lease %s", self.identity, self.path)
        except (ApiError, OSError) as error:
            log.warning("releasing lease %s failed: %s", self.path, error)

    def _observe(self, lease: dict[str, Any]) -> None:
        """Remembers when the record last changed, on our clock (as client-go does), but
        credits the holder's own renewTime when it is at most one retry period older."""
        spec = lease.get("spec") or {}
        if spec == self._observed_spec:
            return
        self._observed_spec = dict(spec)
        now = self.wall_clock()
        self._observed_at = now
        renewed = spec.get("renewTime")
        if renewed:
            try:
                stamp = parse_micro_time(renewed).timestamp()
            except ValueError:
                return
            self._observed_at = min(now, max(stamp, now - self.config.retry_period))

    def _expired(self) -> bool:
        duration = float(self._observed_spec.get("leaseDurationSeconds") or 0)
        return self._observed_at + duration <= self.wall_clock()

    @staticmethod
    def _jittered(period: float) -> float:
        return period * (1 + random.random() * JITTER)  # noqa: S311 - jitter, not crypto
