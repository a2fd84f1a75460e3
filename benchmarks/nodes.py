"""The benchmark's kwok nodes: exactly N of them, created concurrently, waited on until Ready."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks import workloads
from benchmarks.kube import Api, gather_all

NODES = "/api/v1/nodes"


async def ensure_nodes(api: Api, count: int, timeout: float | None = None) -> None:
    """Creates the missing bench nodes, deletes those beyond `count`, waits until all are Ready
    (kwok readies a few hundred a minute on a small machine, hence the default timeout)."""
    existing = {item["metadata"]["name"] for item in await list_nodes(api)}
    wanted = {workloads.node_name(index): index for index in range(count)}
    # A Node keeps the status it is created with, and kwok keeps the status it finds.
    await gather_all(
        api.post(NODES, workloads.node(index))
        for name, index in wanted.items()
        if name not in existing
    )
    await gather_all(api.delete(f"{NODES}/{name}") for name in existing - wanted.keys())
    await wait_ready(api, set(wanted), timeout or 120 + 0.3 * count)


async def list_nodes(api: Api) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = (await api.get(f"{NODES}?{workloads.PART_OF_SELECTOR}"))["items"]
    return items


async def wait_ready(api: Api, names: set[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        ready = {item["metadata"]["name"] for item in await list_nodes(api) if is_ready(item)}
        missing = names - ready
        if not missing:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(missing)} of {len(names)} nodes not Ready after {timeout}s")
        await asyncio.sleep(1 + len(names) / 1000)  # listing thousands of nodes is not free


def is_ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
