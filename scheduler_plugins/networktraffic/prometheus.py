"""The one Prometheus query NetworkTraffic makes per scheduling cycle, and how its answer is
read: received bytes per second over a time range, per Kubernetes node, all nodes at once."""

from __future__ import annotations

import math
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import orjson

QUERY_PATH = "/api/v1/query"


class PrometheusError(Exception):
    """A query that gave no usable answer; `reason` is the failure metric's label."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def traffic_query(network_interface: str, time_range_seconds: int) -> str:
    """Bytes received per second on the interface, per node: node-exporter's counter joined
    to the Kubernetes node name through node_uname_info of the same target."""
    device = network_interface.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "sum by (nodename) ("
        f'rate(node_network_receive_bytes_total{{device="{device}"}}[{time_range_seconds}s])'
        " * on(instance, job) group_left(nodename) node_uname_info"
        ")"
    )


def parse_vector(body: bytes) -> dict[str, float]:
    """The answer of an instant query as {nodename: value}; non-finite values are left out."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise PrometheusError("bad_response", f"the answer is not JSON: {error}") from None
    if not isinstance(document, dict) or document.get("status") != "success":
        detail = document.get("error") if isinstance(document, dict) else None
        raise PrometheusError("bad_response", f"the query failed: {detail or repr(document)}")
    data = document.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise PrometheusError("bad_response", "the answer is not an instant vector")
    values: dict[str, float] = {}
    for sample in data.get("result") or ():
        node, value = _sample(sample)
        if node and math.isfinite(value):
            values[node] = value
    return values


def _sample(sample: Any) -> tuple[str, float]:
    try:
        node = str(sample["metric"].get("nodename", ""))
        return node, float(sample["value"][1])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise PrometheusError("bad_response", f"a sample of the wrong shape: {sample!r}") from None


def query(address: str, promql: str, timeout: float) -> dict[str, float]:
    """Runs an instant query against the Prometheus at `address`."""
    url = f"{address.rstrip('/')}{QUERY_PATH}?{urllib.parse.urlencode({'query': promql})}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - http(s) only, checked by the args
            body: bytes = answer.read()
    except urllib.error.HTTPError as error:
        detail = error.read()[:300].decode(errors="replace")
        raise PrometheusError("http_error", f"HTTP {error.code} from {address}: {detail}") from None
    except TimeoutError:
        raise PrometheusError("timeout", f"no answer from {address} within {timeout:g}s") from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise PrometheusError(
                "timeout", f"no answer from {address} within {timeout:g}s"
            ) from None
        raise PrometheusError("unreachable", f"{address}: {error.reason}") from None
    except OSError as error:
        raise PrometheusError("unreachable", f"{address}: {error}") from None
    return parse_vector(body)
