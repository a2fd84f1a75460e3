"""The extra cluster objects: keys, namespace labels, and the default spreading selector
built from the Services and controllers that select a pod (upstream's DefaultSelector)."""

from __future__ import annotations

from typing import Any

from scheduler_runtime.framework.objects import ClusterObjects


def pod(labels: dict[str, str], owner: tuple[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p", "namespace": "ns", "labels": labels}
    if owner is not None:
        kind, name = owner
        metadata["ownerReferences"] = [{"kind": kind, "name": name, "controller": True}]
    return {"metadata": metadata}


def service(name: str, selector: dict[str, str] | None, namespace: str = "ns") -> dict[str, Any]:
    return {
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {} if selector is None else {"selector": selector},
    }


def test_services_selecting_the_pod_merge_their_selectors() -> None:
    objects = ClusterObjects()
    objects.apply(service("web", {"app": "web"}))
    objects.apply(service("tier", {"tier": "front"}))
    objects.apply(service("other", {"app": "db"}))
    objects.apply(service("elsewhere", {"app": "web", "x": "y"}, namespace="other"))
    objects.apply(service("headless", None))
    selector = objects.default_selector(pod({"app": "web", "tier": "front", "x": "z"}))
    assert selector.matches({"app": "web", "tier": "front"})
    assert not selector.matches({"app": "web"})
    assert objects.default_selector(pod({"app": "api"})).everything


def test_controllers_add_their_selectors() -> None:
    objects = ClusterObjects()
    objects.apply(
        {
            "kind": "ReplicaSet",
            "metadata": {"name": "rs", "namespace": "ns"},
            "spec": {
                "selector": {
                    "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]
                }
            },
        }
    )
    objects.apply(
        {
            "kind": "ReplicationController",
            "metadata": {"name": "rc", "namespace": "ns"},
            "spec": {"selector": {"legacy": "yes"}},
        }
    )
    by_rs = objects.default_selector(pod({"app": "web"}, ("ReplicaSet", "rs")))
    assert by_rs.matches({"app": "web"})
    assert not by_rs.matches({"app": "api"})
    by_rc = objects.default_selector(pod({"legacy": "yes"}, ("ReplicationController", "rc")))
    assert by_rc.matches({"legacy": "yes"})
    assert not by_rc.matches({})
    # An owner that is not known (or not a selecting kind) adds nothing.
    assert objects.default_selector(pod({"app": "web"}, ("StatefulSet", "gone"))).everything
    assert objects.default_selector(pod({"app": "web"}, ("Job", "j"))).everything


def test_objects_by_kind_and_key() -> None:
    objects = ClusterObjects()
    assert not objects.apply({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}})
    assert objects.apply({"kind": "Namespace", "metadata": {"name": "ns", "labels": {"t": "1"}}})
    assert objects.namespace_labels("ns") == {"t": "1"}
    assert objects.namespace_labels("unknown") is None
    objects.apply({"kind": "PersistentVolume", "metadata": {"name": "pv"}})
    assert objects.get("PersistentVolume", "pv") is not None
    objects.delete("PersistentVolume", "pv")
    assert objects.get("PersistentVolume", "pv") is None
