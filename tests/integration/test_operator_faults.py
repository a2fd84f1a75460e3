"""Hostile SchedulerProfiles against the real API server and the operator: the limits policy
refuses args and affinity nested too deep or too large; objects stored before it (the policy's
binding is taken away while they are created) are reported invalid by name, get a status
whatever their size, and never stop the operator: a profile created after them becomes Ready."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cluster import REPO, Cluster, kwok_node, wait_for
from fault_support import report
from kopf.testing import KopfRunner
from operator_support import (
    condition,
    get_json,
    operand_namespace,
    wait_condition,
)
from scheduler_operator.api import API_VERSION
from scheduler_operator.guards import MAX_DEPTH, MAX_SPEC_BYTES, MAX_VALUE_BYTES
from scheduler_operator.limits import NAME

Apply = Callable[[dict[str, Any]], str]


@pytest.fixture
def namespace(namespace: str, cluster: Cluster) -> str:
    return operand_namespace(cluster, namespace)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def nested_text(depth: int, kind: str = "map") -> str:
    """JSON `depth` arrays or objects deep (written without recursion)."""
    opening, closing = ('{"a":', "}") if kind == "map" else ("[", "]")
    return opening * depth + '"leaf"' + closing * depth


def profile_text(name: str, spec: str) -> str:
    return (
        json.dumps(
            {"apiVersion": API_VERSION, "kind": "SchedulerProfile", "metadata": {"name": name}}
        )[:-1]
        + f', "spec": {spec}}}'
    )


def with_args(args: str, namespace: str = "schedulers") -> str:
    config = f'{{"name": "NodeResourcesFit", "args": {args}}}'
    return f'{{"namespace": "{namespace}", "profiles": [{{"pluginConfig": [{config}]}}]}}'


def with_affinity(affinity: str, namespace: str = "schedulers") -> str:
    return f'{{"namespace": "{namespace}", "affinity": {affinity}}}'


def create(cluster: Cluster, text: str) -> str:
    """`kubectl create`: "" when created, else the API server's refusal."""
    done = cluster.kubectl("create", "-f", "-", input=text, check=False)
    return "" if done.returncode == 0 else done.stderr


def policy_in_force(cluster: Cluster) -> str:
    """The policy's refusal of a profile nested too deep (dry run), "" while not in force."""
    text = profile_text("probe-limits", with_args(nested_text(MAX_DEPTH)))
    done = cluster.kubectl("create", "--dry-run=server", "-f", "-", input=text, check=False)
    return "" if done.returncode == 0 else done.stderr


@pytest.fixture
def created(cluster: Cluster, operator: KopfRunner) -> Iterator[list[str]]:
    """Names of SchedulerProfiles the test creates, deleted after it."""
    names: list[str] = []
    yield names
    for name in names:
        cluster.kubectl("delete", "schedulerprofile", name, "--ignore-not-found", "--wait=true")


@pytest.mark.parametrize(
    ("spec", "refusal"),
    [
        (with_args(nested_text(3000)), "args: nested at most 27 levels deep (32 from the spec)"),
        (
            with_args(f'{{"a": {nested_text(MAX_DEPTH - 5, "list")}}}'),  # 28 levels
            "args: nested at most 27 levels deep",
        ),
        (
            with_args(json.dumps({"blob": "y" * MAX_VALUE_BYTES})),
            f"args: at most {MAX_VALUE_BYTES} characters each",
        ),
        (with_args(json.dumps({"blob": "y" * 1_000_000})), f"spec: at most {MAX_SPEC_BYTES}"),
        (with_affinity(nested_text(1000)), "spec.affinity: nested at most 31 levels"),
    ],
    ids=["args-3000-deep", "args-28-deep", "args-64KiB", "args-1MB", "affinity-1000-deep"],
)
def test_the_api_server_refuses_values_nested_too_deep_or_too_large(
    cluster: Cluster, operator: KopfRunner, created: list[str], spec: str, refusal: str
) -> None:
    wait_for("the limits policy to be in force", lambda: policy_in_force(cluster), timeout=60)
    name = unique("hostile")
    refused = create(cluster, profile_text(name, spec))
    if not refused:
        created.append(name)
    assert f"ValidatingAdmissionPolicy '{NAME}'" in refused
    assert refusal in refused


def test_values_within_the_limits_pass(
    cluster: Cluster, operator: KopfRunner, created: list[str]
) -> None:
    wait_for("the limits policy to be in force", lambda: policy_in_force(cluster), timeout=60)
    args = {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}
    }
    for spec in (
        with_args(json.dumps(args)),
        with_args(nested_text(MAX_DEPTH - 5)),  # 27 levels, the args included
        with_affinity(nested_text(MAX_DEPTH - 1)),  # 31 levels, the affinity included
    ):
        name = unique("within")
        assert create(cluster, profile_text(name, spec)) == ""
        created.append(name)


def test_profiles_stored_before_the_limits_never_stop_the_operator(
    cluster: Cluster,
    operator: KopfRunner,
    make_nodes: Callable[..., list[str]],
    namespace: str,
    created: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    make_nodes(kwok_node(unique("faults")))  # where the last profile's scheduler runs
    binding = get_json(cluster, "validatingadmissionpolicybinding", NAME)
    assert binding is not None
    cluster.kubectl("delete", "validatingadmissionpolicybinding", NAME)
    hostile = {
        unique("deep-3000"): with_args(nested_text(3000), namespace),
        unique("deep-900"): with_args(nested_text(900), namespace),
        unique("deep-affinity"): with_affinity(nested_text(3000), namespace),
        unique("large-400k"): with_args(json.dumps({"blob": "y" * 400_000}), namespace),
    }
    try:
        wait_for("the policy to be lifted", lambda: not policy_in_force(cluster), timeout=60)
        for name, spec in hostile.items():
            assert create(cluster, profile_text(name, spec)) == ""
            created.append(name)
    finally:
        cluster.kubectl("apply", "--server-side", "-f", str(REPO / "manifests" / "limits.yaml"))
        wait_for("the policy to be back", lambda: policy_in_force(cluster), timeout=60)

    expected = {
        "deep-3000": f"nested deeper than {MAX_DEPTH} levels",
        "deep-900": f"nested deeper than {MAX_DEPTH} levels",
        "deep-affinity": f"nested deeper than {MAX_DEPTH} levels",
        "large-400k": f"bytes as JSON, more than {MAX_SPEC_BYTES}",
    }
    lifted = time.monotonic()
    for name in hostile:
        reported = wait_condition(cluster, name, "ConfigValid", "False")
        valid = condition(reported, "ConfigValid")
        assert valid["reason"] == "InvalidSpec"
        assert expected[name.rsplit("-", 1)[0]] in valid["message"], valid["message"][:300]
        assert valid["message"].startswith("spec")
        assert condition(reported, "Ready")["reason"] == "InvalidSpec"
        # What kopf keeps of a handled spec is a digest, whatever the spec's size.
        annotations = reported["metadata"].get("annotations") or {}
        assert sum(len(key) + len(value) for key, value in annotations.items()) < 1024

    reported_after = time.monotonic() - lifted
    # Still at work for everyone else: a profile created after them becomes Ready.
    after = unique("after")
    asked = time.monotonic()
    assert create(cluster, profile_text(after, json.dumps({"namespace": namespace}))) == ""
    created.append(after)
    wait_condition(cluster, after, "Ready", "True", timeout=120)
    report(
        f"hostile profiles: {len(hostile)} reported InvalidSpec within {reported_after:.1f}s "
        f"of the policy's return; a profile created after them Ready in "
        f"{time.monotonic() - asked:.1f}s"
    )
    # An object stored before the policy may still be annotated (and deleted) with the
    # policy back: only a written spec is judged.
    deep = next(iter(hostile))
    cluster.kubectl("annotate", "schedulerprofile", deep, "example.com/note=kept")
    assert not operator.future.done()  # the operator runs on
    failures = [
        record.getMessage()
        for record in caplog.records
        if (record.exc_info is not None and isinstance(record.exc_info[1], RecursionError))
        or "recursion" in record.getMessage()
    ]
    assert failures == []
