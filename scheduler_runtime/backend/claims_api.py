"""The cluster's side of Dynamic Resource Allocation for a scheduler without a cluster
(simulate, and tests): the API server answering DynamicResources' calls from memory, each
write reported to the backend's event handlers as the watch would report it, and the
resourceclaim controller of kube-controller-manager making a pod's claims from its
ResourceClaimTemplates, named as the controller (and the API server's generateName) name
them."""

from __future__ import annotations

import datetime
import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from scheduler_runtime.backend.claims import CLAIMS, object_key
from scheduler_runtime.framework.dra import ClaimAPIError, Object, copied

POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
# utilrand.String: what the API server appends to a generateName.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NAME_SUFFIX = 5
MAX_GENERATE_NAME = 57  # the controller's base, leaving room for "-" and the suffix
RESOURCE = "resourceclaims.resource.k8s.io"


class Watch(Protocol):
    """Where writes go, as a watch would report them (the backend's event handlers)."""

    def upsert(self, kind: str, item: dict[str, Any]) -> None: ...

    def delete(self, kind: str, item: dict[str, Any]) -> None: ...


def generated_name(base: str, rng: random.Random) -> str:
    return base + "".join(rng.choice(NAME_ALPHABET) for _ in range(NAME_SUFFIX))


def _conflict(name: str) -> ClaimAPIError:
    return ClaimAPIError(
        409,
        f'Operation cannot be fulfilled on {RESOURCE} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
    )


def _not_found(name: str) -> ClaimAPIError:
    return ClaimAPIError(404, f'{RESOURCE} "{name}" not found')


class MemoryClaimAPI:
    """ResourceClaim calls answered from memory (a ResourceClaimClient). `seconds` is the
    scheduler's clock (simulate's is virtual: `sleep` moves it on), `started` the wall-clock
    moment it reads 0 at."""

    def __init__(
        self,
        watch: Watch,
        *,
        seconds: Callable[[], float],
        sleep: Callable[[float], None],
        rng: random.Random,
        started: datetime.datetime | None = None,
    ) -> None:
        self.watch = watch
        self._seconds = seconds
        self._sleep = sleep
        self.rng = rng
        self.started = started or datetime.datetime.now(datetime.UTC)
        self._claims: dict[str, dict[str, Any]] = {}
        self._version = 0
        self.pod_status: dict[str, dict[str, Any]] = {}  # status patches, by pod key
        self.events: list[tuple[str, str, str]] = []  # (pod key, reason, note)

    # ----- objects as they are at the start

    def load(self, claim: dict[str, Any]) -> None:
        """A claim that exists when the run starts (a state file's)."""
        self._claims[object_key(claim)] = claim
        self._version = max(self._version, _version(claim))
        self.watch.upsert(CLAIMS, claim)

    def claims(self) -> Iterable[dict[str, Any]]:
        return self._claims.values()

    # ----- ResourceClaimClient

    def get_claim(self, namespace: str, name: str) -> dict[str, Any]:
        found = self._claims.get(f"{namespace}/{name}")
        if found is None:
            raise _not_found(name)
        answer: dict[str, Any] = copied(found)
        return answer

    def create_claim(self, claim: Object) -> dict[str, Any]:
        created = copied(claim)
        metadata = created.setdefault("metadata", {})
        if not metadata.get("name"):
            metadata["name"] = generated_name(str(metadata.get("generateName") or ""), self.rng)
        key = object_key(created)
        if key in self._claims:
            raise ClaimAPIError(409, f'{RESOURCE} "{metadata["name"]}" already exists')
        metadata["uid"] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        metadata["creationTimestamp"] = _rfc3339(self.now())
        created.setdefault("status", {})
        return self._store(created)

    def update_claim(self, claim: Object) -> dict[str, Any]:
        current = self._current(claim)
        updated = copied(claim)
        updated["status"] = copied(current.get("status") or {})
        return self._store(updated)

    def update_claim_status(self, claim: Object) -> dict[str, Any]:
        current = self._current(claim)
        updated = copied(current)
        updated["status"] = copied(claim.get("status") or {})
        return self._store(updated)

    def patch_claim_status(self, namespace: str, name: str, patch: Object) -> dict[str, Any]:
        """The strategic-merge patches the plugin sends: reservedFor entries deleted by UID
        (its merge key), other status fields replaced; metadata.uid a precondition."""
        current = self._claims.get(f"{namespace}/{name}")
        if current is None:
            raise _not_found(name)
        wanted_uid = (patch.get("metadata") or {}).get("uid")
        if wanted_uid is not None and wanted_uid != (current.get("metadata") or {}).get("uid"):
            raise ClaimAPIError(
                409,
                f'Operation cannot be fulfilled on {RESOURCE} "{name}": Precondition failed: '
                f"UID in precondition: {wanted_uid}, UID in object meta: "
                f"{(current.get('metadata') or {}).get('uid')}",
            )
        updated = copied(current)
        status = updated.setdefault("status", {})
        for field, value in (patch.get("status") or {}).items():
            if field == "reservedFor":
                gone = {e.get("uid") for e in value if e.get("$patch") == "delete"}
                kept = [e for e in status.get("reservedFor") or () if e.get("uid") not in gone]
                added = [e for e in value if e.get("$patch") != "delete"]
                status["reservedFor"] = kept + added
                if not status["reservedFor"]:
                    del status["reservedFor"]
            else:
                status[field] = copied(value)
        return self._store(updated)

    def delete_claim(self, namespace: str, name: str) -> None:
        current = self._claims.get(f"{namespace}/{name}")
        if current is None:
            raise _not_found(name)
        if (current.get("metadata") or {}).get("finalizers"):
            updated = copied(current)
            updated["metadata"]["deletionTimestamp"] = _rfc3339(self.now())
            self._store(updated)
            return
        del self._claims[object_key(current)]
        self.watch.delete(CLAIMS, current)

    def patch_pod_status(self, namespace: str, name: str, patch: Object) -> None:
        """Kept for the pod's binding to carry (the binding is the pod's next change)."""
        self.pod_status.setdefault(f"{namespace}/{name}", {}).update(patch.get("status") or {})

    def event(self, pod: Object, kind: str, reason: str, action: str, note: str) -> None:
        self.events.append((object_key(pod), reason, note))

    def now(self) -> datetime.datetime:
        return self.started + datetime.timedelta(seconds=self._seconds())

    def sleep(self, seconds: float) -> None:
        self._sleep(seconds)

    # ----- internals

    def _current(self, claim: Object) -> dict[str, Any]:
        metadata = claim.get("metadata") or {}
        current = self._claims.get(object_key(claim))
        if current is None:
            raise _not_found(str(metadata.get("name") or ""))
        given = str(metadata.get("resourceVersion") or "")
        if given and given != str((current.get("metadata") or {}).get("resourceVersion") or ""):
            raise _conflict(str(metadata.get("name") or ""))
        return current

    def _store(self, claim: dict[str, Any]) -> dict[str, Any]:
        self._version += 1
        claim["metadata"]["resourceVersion"] = str(self._version)
        self._claims[object_key(claim)] = claim
        self.watch.upsert(CLAIMS, claim)
        answer: dict[str, Any] = copied(claim)
        return answer


def _version(obj: Object) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def claim_base_name(pod_name: str, claim_name: str) -> str:
    """The controller's generateName for a pod's claim: `<pod>-<claim>-`, both cut in
    proportion when longer than 57 characters."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > MAX_GENERATE_NAME:
        pod_part = pod_name[: len(pod_name) * MAX_GENERATE_NAME // len(base)]
        claim_part = claim_name[: len(claim_name) * MAX_GENERATE_NAME // len(base)]
        base = f"{pod_part}-{claim_part}"
    return base


def make_pod_claims(
    pod: dict[str, Any], templates: Mapping[str, Object], api: MemoryClaimAPI
) -> None:
    """What the resourceclaim controller does for a new pod: a claim from each template it
    names (owned by the pod), then the claims' names in `status.resourceClaimStatuses`. A
    template that does not exist leaves its claim unmade, and the pod waiting for it."""
    metadata = pod.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "default")
    status = pod.setdefault("status", {})
    made = {entry.get("name") for entry in status.get("resourceClaimStatuses") or ()}
    statuses = list(status.get("resourceClaimStatuses") or ())
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        template_name = pod_claim.get("resourceClaimTemplateName")
        if template_name is None or pod_claim.get("name") in made:
            continue
        template = templates.get(f"{namespace}/{template_name}")
        if template is None:
            continue
        spec = template.get("spec") or {}
        template_meta = spec.get("metadata") or {}
        annotations = {**(template_meta.get("annotations") or {})}
        annotations[POD_CLAIM_NAME] = str(pod_claim.get("name", ""))
        claim_meta: dict[str, Any] = {
            "namespace": namespace,
            "generateName": claim_base_name(str(metadata.get("name")), str(pod_claim["name"])),
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": metadata.get("name"),
                    "uid": metadata.get("uid"),
                    "controller": True,
                }
            ],
            "annotations": annotations,
        }
        if template_meta.get("labels"):
            claim_meta["labels"] = dict(template_meta["labels"])
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": claim_meta,
            "spec": copied(spec.get("spec") or {}),
        }
        created = api.create_claim(claim)
        statuses.append(
            {"name": pod_claim["name"], "resourceClaimName": created["metadata"]["name"]}
        )
    if statuses:
        status["resourceClaimStatuses"] = statuses


__all__ = ["MemoryClaimAPI", "claim_base_name", "generated_name", "make_pod_claims"]
