"""kopf's memory of the last handled spec, as a digest: a change is seen as one, a status update
is not, and the annotation stays 64 characters whatever the spec's size."""

from __future__ import annotations

from typing import Any

import kopf
from scheduler_operator.api import GROUP
from scheduler_operator.bookkeeping import DIGEST_KEY, FORMER_KEY, DigestDiffBaseStorage

DIGEST = f"{GROUP}/{DIGEST_KEY}"
FORMER = f"{GROUP}/{FORMER_KEY}"


def profile(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "p", "uid": "u", "annotations": dict(annotations or {})},
        "spec": spec,
        "status": {"observedGeneration": 1},
    }


def handled(storage: DigestDiffBaseStorage, raw: dict[str, Any]) -> dict[str, Any]:
    """The object as it is after kopf stored what it handled (the patch applied)."""
    body = kopf.Body(raw)
    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    annotations = {**raw["metadata"]["annotations"], **patch["metadata"]["annotations"]}
    return {**raw, "metadata": {**raw["metadata"], "annotations": annotations}}


def test_a_profile_never_handled_has_no_previous_essence() -> None:
    storage = DigestDiffBaseStorage()
    assert storage.fetch(body=kopf.Body(profile({"replicas": 1}))) is None


def test_an_unchanged_spec_reads_as_unchanged_and_a_changed_one_as_changed() -> None:
    storage = DigestDiffBaseStorage()
    raw = handled(storage, profile({"replicas": 1}))
    assert len(raw["metadata"]["annotations"][DIGEST]) == 64
    status_only = {**raw, "status": {"observedGeneration": 2, "conditions": []}}
    body = kopf.Body(status_only)
    assert storage.fetch(body=body) == storage.build(body=body)

    changed = kopf.Body({**raw, "spec": {"replicas": 2}})
    assert storage.fetch(body=changed) != storage.build(body=changed)
    relabelled = {**raw, "metadata": {**raw["metadata"], "labels": {"team": "a"}}}
    assert storage.fetch(body=kopf.Body(relabelled)) != storage.build(body=kopf.Body(relabelled))


def test_a_spec_of_any_size_is_remembered_in_64_characters() -> None:
    storage = DigestDiffBaseStorage()
    huge = {"profiles": [{"pluginConfig": [{"name": "X", "args": {"blob": "y" * 400_000}}]}]}
    raw = handled(storage, profile(huge))
    annotations = raw["metadata"]["annotations"]
    assert sum(len(k) + len(v) for k, v in annotations.items()) < 200
    body = kopf.Body(raw)
    assert storage.fetch(body=body) == storage.build(body=body)


def test_a_profile_handled_by_an_earlier_version_is_handled_again_once() -> None:
    """kopf kept the whole spec before: that reads as a change, and the next store drops it."""
    storage = DigestDiffBaseStorage()
    raw = profile({"replicas": 1}, {FORMER: '{"spec":{"replicas":1}}'})
    body = kopf.Body(raw)
    assert storage.fetch(body=body) not in (None, storage.build(body=body))
    after = handled(storage, raw)
    assert after["metadata"]["annotations"][FORMER] is None  # removed by the merge patch
    assert DIGEST in after["metadata"]["annotations"]
