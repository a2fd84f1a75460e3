"""Shared fixtures. Integration tests get the real control plane; if it cannot start they fail."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import kubernetes
import pytest
from cluster import Cluster, start_cluster, stop_cluster, wait_for
from kubernetes.utils import parse_quantity

# Examples are judged by what they find, never by how long they take: hypothesis' per-example
# deadline made property tests fail on a loaded machine.
hypothesis.settings.register_profile("untimed", deadline=None)
hypothesis.settings.load_profile("untimed")

INTEGRATION = Path(__file__).parent / "integration"
AS_SHIPPED = Path(__file__).parent / "e2e"
INSTRUCTIONS = Path(__file__).parent / "instructions"
# Fixtures live with the support module of their concern; all are registered here, once.
pytest_plugins = [
    "operator_support",
    "prometheus_support",
    "real_node_support",
    "replay_parity",
    "runtime_support",
    "secure_port_support",  # after runtime_support, which it imports
    "fault_support",  # after runtime_support, which it imports
    "coscheduling_support",  # after runtime_support, which it imports
    "batch_operator_support",  # after coscheduling_support, which it imports
    "gang_support",  # after runtime_support, which it imports
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """tests/integration holds integration tests, tests/e2e the as-shipped (e2e) ones,
    tests/instructions the instruction counts (valgrind); the rest are unit tests."""
    for item in items:
        parents = Path(str(item.fspath)).parents
        if INTEGRATION in parents:
            item.add_marker(pytest.mark.integration)
        elif AS_SHIPPED in parents:
            item.add_marker(pytest.mark.e2e)
        elif INSTRUCTIONS in parents:
            item.add_marker(pytest.mark.instructions)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """The real local control plane for the whole session (kept with KEEP_CLUSTER=1)."""
    started, owned = start_cluster()
    wait_for(
        "the API server to be ready",
        lambda: started.kubectl("get", "--raw", "/readyz", check=False).returncode == 0,
        timeout=120,
    )
    yield started
    if owned and os.environ.get("KEEP_CLUSTER") != "1":
        stop_cluster()


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    """A fresh namespace per test, deleted afterwards. The operator under test runs schedulers
    in every t-* namespace, so each is granted to it at once (a namespace its --namespace
    matches but that it may not read would stop its watches)."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    core = kubernetes.client.CoreV1Api(cluster.api)
    core.create_namespace({"metadata": {"name": name}})
    # Imported here, after pytest_plugins loaded it, so pytest rewrites its asserts.
    from operator_support import operand_namespace  # noqa: PLC0415

    operand_namespace(cluster, name)
    # Pods are refused until the controller manager has made the default ServiceAccount
    # (slower while it reconnects after a test restarted the API server).
    wait_for(
        f"the default ServiceAccount of {name}",
        lambda: (
            core.list_namespaced_service_account(name, field_selector="metadata.name=default").items
        ),
        timeout=60,
        interval=0.2,
    )
    yield name
    core.delete_namespace(name)


@pytest.fixture
def make_nodes(cluster: Cluster) -> Iterator[Callable[..., list[str]]]:
    """Creates kwok nodes (see cluster.kwok_node), waits until Ready, deletes them after."""
    core = kubernetes.client.CoreV1Api(cluster.api)
    created: list[str] = []

    def make(*nodes: dict[str, Any]) -> list[str]:
        # A Node keeps the status it is created with, so kwok's first look already has the
        # capacity, and every status kwok renders keeps it. (Patching it in after creation
        # raced kwok's parallel stage workers: one rendering from the node as first created
        # could write kwok's default 1k cpu after the patch was seen.)
        for node in nodes:
            core.create_node(node)
            created.append(node["metadata"]["name"])
        names = [n["metadata"]["name"] for n in nodes]
        wait_for(f"nodes {names} to be Ready", lambda: all(node_ready(core, n) for n in names))
        wrong = [n["metadata"]["name"] for n in nodes if not shows_capacity(core, n)]
        assert not wrong, f"nodes {wrong} lost the capacity they were created with"
        return names

    yield make
    for name in created:
        try:
            core.delete_node(name)
        except kubernetes.client.ApiException as error:
            if error.status != 404:  # a test may delete one of them itself
                raise


def shows_capacity(core: kubernetes.client.CoreV1Api, node: dict[str, Any]) -> bool:
    wanted = node["status"]["allocatable"]
    shown = core.read_node_status(node["metadata"]["name"]).status.allocatable or {}
    return all(
        parse_quantity(shown.get(name, "0")) == parse_quantity(value)
        for name, value in wanted.items()
    )


def node_ready(core: kubernetes.client.CoreV1Api, name: str) -> bool:
    conditions = core.read_node_status(name).status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)
