"""List+watch of one resource, the way client-go's reflector does it: list, then watch from
the list's resourceVersion; on `410 Gone` list again; on a broken connection or an API server
restart, retry with exponential backoff and resume from the last resourceVersion seen."""

from __future__ import annotations

import logging
import random
import threading
from typing import Any, Protocol

from scheduler_runtime.framework.podgroups import (
    COSCHEDULING_POD_GROUP,
    WORKLOAD_POD_GROUP,
    WorkloadAPI,
)
from scheduler_runtime.live.kube import ApiError, Kube
from scheduler_runtime.live.transport import Exchange

log = logging.getLogger(__name__)

# The objects plugins read besides nodes and pods (framework.objects), and their collections
# (the workload API's PodGroups at the version the emulated minor serves: object_paths).
OBJECT_PATHS = {
    "Namespace": "/api/v1/namespaces",
    "PodDisruptionBudget": "/apis/policy/v1/poddisruptionbudgets",
    "PersistentVolumeClaim": "/api/v1/persistentvolumeclaims",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "CSIDriver": "/apis/storage.k8s.io/v1/csidrivers",
    "CSIStorageCapacity": "/apis/storage.k8s.io/v1/csistoragecapacities",
    "Service": "/api/v1/services",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
    "ReplicationController": "/api/v1/replicationcontrollers",
    COSCHEDULING_POD_GROUP: "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
}


def object_paths(workload: WorkloadAPI) -> dict[str, str]:
    """OBJECT_PATHS with the workload API's PodGroups at `workload`'s version."""
    return {**OBJECT_PATHS, WORKLOAD_POD_GROUP: workload.pod_groups_path()}


# The DRA objects (backend.claims), kept apart from the cache as upstream's DRA manager keeps them.
DRA_PATHS = {
    "ResourceClaim": "/apis/resource.k8s.io/v1/resourceclaims",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
}
# Watched with DRADeviceTaintRules on (GA in 1.37, when resource.k8s.io/v1 serves them).
DEVICE_TAINT_RULE_PATHS = {"DeviceTaintRule": "/apis/resource.k8s.io/v1/devicetaintrules"}
# Collections a cluster may not serve (an alpha API not enabled, a CRD not installed) or this
# scheduler may not be allowed to read: without them it runs, as without their objects.
OPTIONAL = {
    WORKLOAD_POD_GROUP: (
        "{api} PodGroups",
        "the API server serves them with --runtime-config={api}=true and the GenericWorkload gate",
    ),
    COSCHEDULING_POD_GROUP: (
        "{api} PodGroups",
        "their CRD is podgroups.scheduling.x-k8s.io",
    ),
    "DeviceTaintRule": (
        "resource.k8s.io/v1 DeviceTaintRules",
        "the API server serves them from Kubernetes 1.37 on",
    ),
}
ABSENT_RETRY_SECONDS = 60.0  # how often a collection that was absent is looked for again
LIST_PAGE_SIZE = 500
MIN_WATCH_SECONDS = 300  # client-go picks each watch's timeout in [5m, 10m)
GONE = 410
FORBIDDEN, NOT_FOUND = 403, 404


class Store(Protocol):
    """What a reflector feeds: the whole list after (re)listing, then one change at a time."""

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None: ...

    def upsert(self, kind: str, item: dict[str, Any]) -> None: ...

    def delete(self, kind: str, item: dict[str, Any]) -> None: ...


class ExpiredError(Exception):
    """The resourceVersion to resume from is too old: only a fresh list helps."""


class Backoff:
    """Exponential backoff with jitter, reset once things work again."""

    def __init__(self, initial: float = 0.8, maximum: float = 30.0) -> None:
        self.initial = initial
        self.maximum = maximum
        self.current = initial

    def next(self) -> float:
        delay = self.current * (1 + random.random() * 0.2)  # noqa: S311 - jitter, not crypto
        self.current = min(self.current * 2, self.maximum)
        return delay

    def reset(self) -> None:
        self.current = self.initial


class Reflector:
    """Keeps a Store in step with one API collection (`kind` names it to the store)."""

    def __init__(self, kube: Kube, kind: str, path: str, store: Store) -> None:
        self.kube = kube
        self.kind = kind
        self.path = path
        self.store = store
        self.synced = threading.Event()
        self.resource_version = ""
        self._stopping = threading.Event()
        self._open: list[Exchange] = []  # the watch under way, for stop() to end
        self._backoff = Backoff()
        self._present = True  # whether an optional collection was served when last listed

    def run(self) -> None:
        """Lists and watches until stop() is called."""
        must_list = True
        while not self._stopping.is_set():
            try:
                if must_list:
                    self._list()
                    must_list = False
                self._watch()
                self._backoff.reset()
            except ExpiredError:
                log.info(
                    "%s: resourceVersion %s expired, listing again",
                    self.kind,
                    self.resource_version,
                )
                must_list = True
            except ApiError as error:
                if not self._absent(error):
                    self._retry(error)
                else:
                    must_list = True
            except (OSError, ValueError) as error:
                self._retry(error)

    def _retry(self, error: Exception) -> None:
        if self._stopping.is_set():
            return
        delay = self._backoff.next()
        log.warning("%s: list/watch failed (%s); retrying in %.1fs", self.kind, error, delay)
        self._stopping.wait(delay)

    def _absent(self, error: ApiError) -> bool:
        """An optional collection the cluster does not serve (404) or this scheduler may not
        read (403): it counts as empty and synced, said once in the log, and is looked for
        again now and then (a CRD may be installed later)."""
        if self.kind not in OPTIONAL or error.code not in (NOT_FOUND, FORBIDDEN):
            return False
        if not self.synced.is_set() or self._present:
            api = "/".join(self.path.split("/")[2:4])  # /apis/GROUP/VERSION/...
            what, hint = (text.format(api=api) for text in OPTIONAL[self.kind])
            why = (
                f"are not served by this cluster ({hint})"
                if error.code == NOT_FOUND
                else "may not be read by this scheduler (its RBAC does not grant list and watch)"
            )
            log.warning(
                "%s %s; scheduling goes on without them, looking again every %.0fs",
                what,
                why,
                ABSENT_RETRY_SECONDS,
            )
        self._present = False
        self.store.replace(self.kind, [])
        self.synced.set()
        self._stopping.wait(ABSENT_RETRY_SECONDS)
        return True

    def stop(self) -> None:
        self._stopping.set()
        for exchange in list(self._open):
            exchange.shutdown()

    def _list(self) -> None:
        items: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            try:
                query = {"limit": LIST_PAGE_SIZE, "continue": token}
                page = self.kube.request("GET", self.path, query=query)
            except ApiError as error:
                if error.code == GONE and token:
                    token = None  # the continue token expired mid-list: start over
                    items.clear()
                    continue
                raise
            items.extend(page.get("items") or ())
            metadata = page.get("metadata") or {}
            token = metadata.get("continue") or None
            if token is None:
                break
        self.resource_version = metadata.get("resourceVersion", "")
        self.store.replace(self.kind, items)
        if not self._present:
            log.info("%s: served now; watching them", self.kind)
            self._present = True
        self.synced.set()
        log.debug(
            "%s: listed %d at resourceVersion %s", self.kind, len(items), self.resource_version
        )

    def _watch(self) -> None:
        query = {
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": MIN_WATCH_SECONDS + random.randrange(MIN_WATCH_SECONDS),  # noqa: S311
        }
        try:
            for event in self.kube.watch(self.path, query, self._open):
                self._handle(event)
        except ApiError as error:
            if error.code == GONE:
                raise ExpiredError from error
            raise

    def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        item = event.get("object") or {}
        if kind == "ERROR":
            code = item.get("code")
            if code == GONE:
                raise ExpiredError
            raise ApiError(
                int(code or 500), str(item.get("reason", "")), str(item.get("message", ""))
            )
        version = (item.get("metadata") or {}).get("resourceVersion")
        if kind in ("ADDED", "MODIFIED"):
            self.store.upsert(self.kind, item)
        elif kind == "DELETED":
            self.store.delete(self.kind, item)
        if version:
            self.resource_version = version


def start(reflectors: list[Reflector]) -> list[threading.Thread]:
    """Runs each reflector on its own daemon thread."""
    threads = [
        threading.Thread(target=r.run, name=f"reflector-{r.kind}", daemon=True) for r in reflectors
    ]
    for thread in threads:
        thread.start()
    return threads
