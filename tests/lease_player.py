"""Leader election played for schedulers that kwok runs. kwok makes a scheduler's pods Running
and Ready but cannot run the program, so no pod would ever hold the scheduler's Lease, and a
SchedulerProfile is Ready only while one does. The player holds each Lease for a ready pod of
its scheduler, as that pod's scheduler would. A SchedulerProfile annotated REAL_LEASES is left
to a real scheduler process the test runs."""

from __future__ import annotations

import datetime
import logging
import threading
from typing import Any

import kubernetes
import yaml
from scheduler_operator.decoding import loads

log = logging.getLogger(__name__)
REAL_LEASES = {"tests.schedops.io/leases": "real"}
GROUP, VERSION, PLURAL = "scheduling.schedops.io", "v1alpha1", "schedulerprofiles"


class LeasePlayer:
    def __init__(self, api: kubernetes.client.ApiClient, interval: float = 1.0) -> None:
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.core = kubernetes.client.CoreV1Api(api)
        self.leases = kubernetes.client.CoordinationV1Api(api)
        self.interval = interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="lease-player", daemon=True)

    def __enter__(self) -> LeasePlayer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                self._round()
            except Exception:
                log.exception("lease player round failed; trying again")

    def _round(self) -> None:
        # Decoded as the operator decodes them: a profile nested too deep for json.loads
        # (stored before the limits policy, say) must not stop the player.
        listed = self.custom.list_cluster_custom_object(
            GROUP, VERSION, PLURAL, _preload_content=False
        )
        for profile in loads(listed.data)["items"]:
            annotations = profile["metadata"].get("annotations") or {}
            if annotations.items() >= REAL_LEASES.items():
                continue
            try:
                self._play(profile)
            except (kubernetes.client.ApiException, KeyError, TypeError, yaml.YAMLError):
                # Gone or changed meanwhile, or a ConfigMap of that name the operator did not
                # write (a test's name clash): the next round sees it as it is.
                continue

    def _play(self, profile: dict[str, Any]) -> None:
        name = profile["metadata"]["name"]
        namespace = (profile.get("spec") or {}).get("namespace", "schedulers")
        config_map = self.core.read_namespaced_config_map(f"{name}-config", namespace)
        election = yaml.safe_load(config_map.data["config.yaml"])["leaderElection"]
        if not election.get("leaderElect"):
            return
        pods = self.core.list_namespaced_pod(
            namespace, label_selector=f"app.kubernetes.io/instance={name}"
        ).items
        ready = sorted(p.metadata.name for p in pods if is_ready(p))
        if not ready:
            return
        lease_name, lease_namespace = election["resourceName"], election["resourceNamespace"]
        holder = f"{ready[0]}_lease-player"
        body = {
            "metadata": {"name": lease_name, "namespace": lease_namespace},
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": 3600,
                "renewTime": datetime.datetime.now(datetime.UTC).isoformat(),
            },
        }
        try:
            lease = self.leases.read_namespaced_lease(lease_name, lease_namespace)
        except kubernetes.client.ApiException as error:
            if error.status != 404:
                raise
            self.leases.create_namespaced_lease(lease_namespace, body)
            return
        current = lease.spec.holder_identity or ""
        if not any(current.startswith(f"{pod}_") for pod in ready):
            body["metadata"]["resourceVersion"] = lease.metadata.resource_version
            self.leases.replace_namespaced_lease(lease_name, lease_namespace, body)


def is_ready(pod: Any) -> bool:
    conditions = pod.status.conditions or []
    return not pod.metadata.deletion_timestamp and any(
        c.type == "Ready" and c.status == "True" for c in conditions
    )
