"""The runtime's secure port against the real API server: bearer tokens reviewed by TokenReview,
paths authorized by SubjectAccessReview against real RBAC, client certificates checked against
the cluster's client CA; refusals as the real kube-scheduler words them; the RBAC the operator
renders for a scheduler is enough for all of it; and a flood of half-sent requests holds no
threads in the running process."""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from cluster import Cluster, kwok_node, wait_for
from runtime_support import (
    RUNTIME,
    Pods,
    RuntimeProcess,
    make_pod,
    pods,
    schedulable_nodes,
    scheduler_config,
    start_runtime,
    unique_scheduler_name,
)
from scheduler_operator.parsing import parse
from scheduler_operator.render import render
from secure_port_support import https_get, upstream_scheduler

__all__ = ["pods", "schedulable_nodes", "start_runtime", "upstream_scheduler"]  # fixtures

READ_TIMEOUT = 10  # the server's default for a request's head
MAX_CONNECTIONS = 1024  # and its connection cap
THREADS_STARTED_MEANWHILE = 12  # the HTTP workers (4) and the scheduler's lazily started pools


class Readers:
    """Two ServiceAccounts: `reader` may get /metrics and /explain/*, `nobody` may not."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.role = f"metrics-reader-{namespace}"
        cluster.kubectl("-n", namespace, "create", "serviceaccount", "reader")
        cluster.kubectl("-n", namespace, "create", "serviceaccount", "nobody")
        cluster.kubectl(
            "create",
            "clusterrole",
            self.role,
            "--verb=get",
            "--non-resource-url=/metrics",
            "--non-resource-url=/explain/*",
        )
        cluster.kubectl(
            "create",
            "clusterrolebinding",
            self.role,
            f"--clusterrole={self.role}",
            f"--serviceaccount={namespace}:reader",
        )
        self.reader = self.token("reader")
        self.nobody = self.token("nobody")
        # RBAC answers from its informers: wait until the binding is in effect.
        wait_for(
            "the reader's permission",
            lambda: self.can("reader", "get", "/metrics") == "yes",
            timeout=30,
        )

    def token(self, account: str) -> str:
        return self.cluster.kubectl(
            "-n", self.namespace, "create", "token", account, "--duration=1h"
        ).stdout.strip()

    def can(self, account: str, verb: str, what: str, *flags: str) -> str:
        done = self.cluster.kubectl(
            "auth",
            "can-i",
            verb,
            what,
            f"--as=system:serviceaccount:{self.namespace}:{account}",
            *flags,
            check=False,
        )
        return done.stdout.strip()

    def delete(self) -> None:
        self.cluster.kubectl("delete", "clusterrolebinding,clusterrole", self.role, check=False)


@pytest.fixture
def readers(cluster: Cluster, namespace: str) -> Iterator[Readers]:
    made = Readers(cluster, namespace)
    yield made
    made.delete()


def status_message(body: str) -> str:
    message: str = json.loads(body)["message"]
    return message


def test_metrics_need_a_token_with_the_permission_and_probes_need_nothing(
    cluster: Cluster,
    readers: Readers,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    runtime = start_runtime(scheduler_config(unique_scheduler_name()))
    for path in ("/healthz", "/livez", "/readyz"):
        assert runtime.get(path) == (200, "ok")

    code, body = runtime.get("/metrics")
    assert code == 401
    assert status_message(body) == "Unauthorized"
    assert runtime.get("/metrics", token="not-a-token")[0] == 401

    code, body = runtime.get("/metrics", token=readers.nobody)
    assert code == 403
    account = f"system:serviceaccount:{readers.namespace}:nobody"
    assert status_message(body) == f'forbidden: User "{account}" cannot get path "/metrics"'

    code, body = runtime.get("/metrics", token=readers.reader)
    assert code == 200
    assert "scheduler_pending_pods" in body
    # The admin's client certificate, checked against the cluster's client CA.
    assert runtime.get("/metrics", as_admin=True)[0] == 200
    assert "/metrics" not in runtime.log()  # no request logged at the default verbosity


def test_explanations_need_the_permission_too(
    cluster: Cluster,
    readers: Readers,
    schedulable_nodes: Callable[..., list[str]],
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    scheduler = unique_scheduler_name()
    [node] = schedulable_nodes(kwok_node(f"explained-{uuid.uuid4().hex[:6]}"))
    runtime = start_runtime(scheduler_config(scheduler))
    pods.create(make_pod("web", scheduler))
    assert pods.wait_placed("web") == {"web": node}
    path = f"/explain/{pods.namespace}/web"

    assert runtime.get(path)[0] == 401
    code, body = runtime.get(path, token=readers.nobody)
    assert code == 403
    assert status_message(body).endswith(f'cannot get path "{path}"')
    code, body = runtime.get(path, token=readers.reader)
    assert code == 200
    assert json.loads(body)["node"] == node

    shown = subprocess.run(
        [
            str(RUNTIME),
            "explain",
            f"{pods.namespace}/web",
            f"--endpoint=https://127.0.0.1:{runtime.secure_port}",
            f"--token={readers.reader}",
            "--insecure-skip-tls-verify",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"Pod {pods.namespace}/web (profile {scheduler}): scheduled")
    refused = subprocess.run(
        [
            str(RUNTIME),
            "explain",
            f"{pods.namespace}/web",
            f"--endpoint=https://127.0.0.1:{runtime.secure_port}",
            "--insecure-skip-tls-verify",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert refused.returncode == 1
    assert "HTTP 401: Unauthorized: pass --token or --kubeconfig" in refused.stderr


def test_refusals_are_worded_as_the_real_kube_schedulers(
    readers: Readers,
    upstream_scheduler: int,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    runtime = start_runtime(scheduler_config(unique_scheduler_name()))
    for token, path in [
        (readers.nobody, "/metrics"),
        (readers.nobody, "/configz"),
        (readers.reader, "/configz"),
        ("forged", "/metrics"),
        ("forged", "/healthz"),
        (None, "/healthz"),
        (None, "/readyz"),
    ]:
        ours = runtime.get(path, token=token)
        theirs = https_get(upstream_scheduler, path, token)
        assert ours[0] == theirs[0], (token, path, ours, theirs)
        if ours[0] >= 400:
            assert json.loads(ours[1]) == json.loads(theirs[1]), (path, ours, theirs)
    # The one difference, on purpose: upstream asks whether system:anonymous may get /metrics
    # (403); the runtime answers a request without credentials 401 on any protected path.
    assert runtime.get("/metrics")[0] == 401
    upstream = https_get(upstream_scheduler, "/metrics")
    assert upstream[0] == 403
    assert (
        status_message(upstream[1])
        == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
    )


def test_explanations_can_be_granted_per_namespace(
    cluster: Cluster,
    namespace: str,
    readers: Readers,
    schedulable_nodes: Callable[..., list[str]],
    pods: Pods,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    """/explain is authorized by URL: `get` on /explain/* shows every namespace's placements,
    and 200 or 404 tells whether a pod exists there. A grant of /explain/<namespace>/* shows
    one namespace's, and nothing, not even existence, of the others."""
    scheduler = unique_scheduler_name()
    [node] = schedulable_nodes(kwok_node(f"explained-{uuid.uuid4().hex[:6]}"))
    runtime = start_runtime(scheduler_config(scheduler))
    pods.create(make_pod("web", scheduler))
    assert pods.wait_placed("web") == {"web": node}
    role = f"explain-{namespace}"
    cluster.kubectl("-n", namespace, "create", "serviceaccount", "team")
    cluster.kubectl("create", "clusterrole", role, "--verb=get",
                    f"--non-resource-url=/explain/{namespace}/*")  # fmt: skip
    cluster.kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}",
                    f"--serviceaccount={namespace}:team")  # fmt: skip
    try:
        wait_for(
            "the team's permission",
            lambda: readers.can("team", "get", f"/explain/{namespace}/web") == "yes",
            timeout=30,
        )
        team = readers.token("team")
        assert runtime.get(f"/explain/{namespace}/web", token=team)[0] == 200
        assert runtime.get(f"/explain/{namespace}/absent", token=team)[0] == 404
        assert runtime.get("/explain/kube-system/absent", token=team)[0] == 403
        assert runtime.get("/explain/other/web", token=team)[0] == 403
        # The wide grant tells existence anywhere.
        assert runtime.get("/explain/kube-system/absent", token=readers.reader)[0] == 404
    finally:
        cluster.kubectl("delete", "clusterrolebinding,clusterrole", role, check=False)


def service_account_kubeconfig(cluster: Cluster, namespace: str, name: str, path: Path) -> Path:
    token = cluster.kubectl(
        "-n", namespace, "create", "token", name, "--duration=1h"
    ).stdout.strip()
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": admin["clusters"][0]["cluster"]}],
                "users": [{"name": name, "user": {"token": token}}],
                "contexts": [{"name": name, "context": {"cluster": "local", "user": name}}],
                "current-context": name,
            }
        )
    )
    return path


@pytest.fixture
def scheduler_account(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A scheduler's ServiceAccount with exactly the RBAC the operator renders for one."""
    name = f"sched-{uuid.uuid4().hex[:6]}"
    profile = parse({"metadata": {"name": name, "uid": "none"}, "spec": {"namespace": namespace}})
    rbac = [
        {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "ownerReferences"}}
        for obj in render(profile).objects
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding", "ClusterRoleBinding")
    ]
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(rbac))
    yield name
    for obj in rbac:
        if obj["kind"] == "ClusterRoleBinding" or obj["metadata"].get("namespace") == "kube-system":
            where = ["-n", obj["metadata"]["namespace"]] if "namespace" in obj["metadata"] else []
            cluster.kubectl("delete", obj["kind"].lower(), obj["metadata"]["name"], *where)


def test_the_rbac_the_operator_renders_lets_a_scheduler_review_requests(
    cluster: Cluster,
    namespace: str,
    readers: Readers,
    scheduler_account: str,
    start_runtime: Callable[..., RuntimeProcess],
    tmp_path: Path,
) -> None:
    account = f"system:serviceaccount:{namespace}:{scheduler_account}"

    def can(*args: str) -> str:
        """kubectl's verdict, without the reason it may append to a "no" (a binding whose
        ClusterRole the operator's install, absent here, would have created)."""
        done = cluster.kubectl("auth", "can-i", *args, f"--as={account}", check=False)
        return done.stdout.strip().split(" - ")[0]

    wait_for("the scheduler's RBAC", lambda: can("create", "tokenreviews") == "yes", timeout=30)
    assert can("create", "subjectaccessreviews.authorization.k8s.io") == "yes"
    assert can("get", "configmap/extension-apiserver-authentication", "-n", "kube-system") == "yes"
    assert can("get", "configmap/other", "-n", "kube-system") == "no"

    kubeconfig = service_account_kubeconfig(
        cluster, namespace, scheduler_account, tmp_path / "scheduler.kubeconfig"
    )
    runtime = start_runtime(
        scheduler_config(unique_scheduler_name()), args=(f"--kubeconfig={kubeconfig}",)
    )
    assert runtime.get("/metrics")[0] == 401
    assert runtime.get("/metrics", token=readers.nobody)[0] == 403
    assert runtime.get("/metrics", token=readers.reader)[0] == 200
    # The client CA came from the ConfigMap, read with the scheduler's own rights.
    assert runtime.get("/metrics", as_admin=True)[0] == 200
    assert "cannot read the client CA" not in runtime.log()


def process_threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_half_sent_requests_hold_no_threads_in_the_running_scheduler(
    readers: Readers,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    """500 clients that complete the TLS handshake and then never finish their request: the
    scheduler holds them (up to its connection cap, where the longest waiting would make room
    for new ones), answers 408 to each after the read timeout, and keeps answering everyone
    else."""
    runtime = start_runtime(scheduler_config(unique_scheduler_name()))
    pid = runtime.process.pid
    assert runtime.get("/metrics", token=readers.reader)[0] == 200
    before = process_threads(pid), open_descriptors(pid)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    half_sent: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(500):
            sock = context.wrap_socket(
                socket.create_connection(("127.0.0.1", runtime.secure_port), timeout=15)
            )
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: scheduler\r\n")
            half_sent.append(sock)
        opened_in = time.monotonic() - started
        during = process_threads(pid), open_descriptors(pid)
        answered = []
        for _ in range(5):
            asked = time.monotonic()
            assert runtime.get("/readyz") == (200, "ok")
            assert runtime.get("/metrics", token=readers.reader)[0] == 200
            answered.append(time.monotonic() - asked)
        # Each was opened within the read timeout, so each is closed within it of its opening.
        closed = [sock.recv(4096) for sock in half_sent]
    finally:
        for sock in half_sent:
            sock.close()
    wait_for(
        "the connections to be closed",
        lambda: open_descriptors(pid) <= before[1] + 10,
        timeout=15,
    )
    after = process_threads(pid), open_descriptors(pid)
    timed_out = sum(answer.startswith(b"HTTP/1.1 408 ") for answer in closed)
    evicted = sum(answer == b"" for answer in closed)
    print(
        f"threads, descriptors: before {before}, with 500 half-sent requests {during} (opened "
        f"in {opened_in:.1f}s), after {after}; {evicted} made room for newer ones, {timed_out} "
        f"answered 408 at the read timeout; /readyz and an authorized /metrics answered in "
        f"{statistics.median(answered) * 1000:.0f} ms (median) meanwhile"
    )
    assert opened_in < READ_TIMEOUT
    # Never a thread per connection (that would be 500 more). The process starts a few threads
    # of its own in its first seconds (report and binding workers), whatever the clients do.
    assert during[0] - before[0] <= THREADS_STARTED_MEANWHILE
    assert 200 <= during[1] - before[1] <= MAX_CONNECTIONS + 10  # sockets, up to the cap
    assert timed_out + evicted == 500
    assert timed_out >= 200


def test_an_authorized_scrape_with_a_warm_cache_costs_no_review(
    readers: Readers,
    start_runtime: Callable[..., RuntimeProcess],
) -> None:
    runtime = start_runtime(scheduler_config(unique_scheduler_name()))
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    connection = http.client.HTTPSConnection(
        "127.0.0.1", runtime.secure_port, context=context, timeout=10
    )
    headers = {"Authorization": f"Bearer {readers.reader}"}
    timings = []
    try:
        for _ in range(51):
            asked = time.monotonic()
            connection.request("GET", "/metrics", headers=headers)
            answer = connection.getresponse()
            answer.read()
            assert answer.status == 200
            timings.append(time.monotonic() - asked)
    finally:
        connection.close()
    cold, warm = timings[0], statistics.median(timings[1:])
    print(
        f"authorized /metrics over one kept-alive connection: first (TokenReview and "
        f"SubjectAccessReview) {cold * 1000:.1f} ms, then {warm * 1000:.1f} ms (median of 50)"
    )
    assert warm < cold
