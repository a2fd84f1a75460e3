"""Kubernetes' own scheduler end-to-end specs against the runtime (`make e2e-upstream`).

The sig-scheduling specs of the pinned release (test/e2e/scheduling, built by
`tools/build-binaries.sh e2e-scheduling`) run with `--provider=skeleton` twice, at the same
time: against a local control plane whose default scheduler is the runtime, and, as the
control, against an identical one whose default scheduler is the release's kube-scheduler.
Each cluster runs without its own kube-scheduler, serves the workload API of its release with
the workload gates on, and has the same kwok nodes (kwok marks pods Running without images).
Both schedulers get the same configuration file and gates and only `--config`, as
kube-scheduler is run. A spec that fails for both is a limit of the environment (kwok, the
cluster), listed with kube-scheduler's reason; a spec that fails only for the runtime is a
defect, and fails the run."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.gangs import GANG_GATES, WORKLOAD, WORKLOAD_CLUSTER_FLAGS
from benchmarks.processes import free_port, stop_process
from benchmarks.tools import TOOLS, cluster_tool, kubernetes_version

KUBE_SCHEDULER, RUNTIME = "kube-scheduler", "runtime"
SCHEDULERS = (KUBE_SCHEDULER, RUNTIME)
SIG_SCHEDULING = r"\[sig-scheduling\]"
CONFORMANCE = r"\[sig-scheduling\].*\[Conformance\]"
# No kube-scheduler of the cluster's own: the scheduler under test serves default-scheduler.
CLUSTER_FLAGS = ("--disable=kube-scheduler", *WORKLOAD_CLUSTER_FLAGS)
# Two zones of two nodes (the Multi-AZ specs need zones; the spreading specs two nodes or more).
NODES = tuple((f"e2e-node-{index}", f"zone-{'ab'[index // 2]}") for index in range(4))
SUITE_TIMEOUT = "90m"  # ginkgo's bound on the whole suite (its default is an hour)
PASSED, SKIPPED = "passed", "skipped"
CREATING = threading.Lock()  # clusters are made one at a time


class E2EError(RuntimeError):
    """The suite could not be run (a build, a cluster or a scheduler failed to start)."""


def version_label(version: str) -> str:
    return version.removeprefix("v").replace(".", "-")


def cluster_name(scheduler: str, version: str) -> str:
    """Never `test-*`, the shared test clusters: e2e-upstream-<scheduler>-<release>."""
    return f"e2e-upstream-{scheduler}-{version_label(version)}"


def suite_binary() -> Path:
    """The release's sig-scheduling suite, built first when the cache lacks it (under the
    build lock every binary is built under)."""
    done = subprocess.run(
        [str(TOOLS / "build-binaries.sh"), "e2e-scheduling"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise E2EError(f"building the e2e suite failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1]) / "e2e-scheduling.test"


def kwok_node(index: int, name: str, zone: str) -> dict[str, Any]:
    """A Node kwok manages, with what the specs read: cpu, memory, pods, ephemeral storage and
    an InternalIP (the hostPort specs give it to their pods as hostIP; kwok keeps it)."""
    capacity = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    addresses = [
        {"type": "InternalIP", "address": f"10.1.0.{index + 1}"},
        {"type": "Hostname", "address": name},
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": zone,
                "type": "kwok",
            },
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {},
        "status": {"allocatable": capacity, "capacity": capacity, "addresses": addresses},
    }


def scheduler_configuration(kubeconfig: Path) -> dict[str, Any]:
    """One unnamed profile (default-scheduler) and the cluster in clientConnection, as
    kube-scheduler is configured; leader election as its defaults have it."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
    }


def scheduler_command(scheduler: str, bin_dir: Path, config: Path, port: int) -> list[str]:
    """kube-scheduler or `scheduler-runtime run`, alike: the same file, gates and serving."""
    program = (
        [str(bin_dir / "kube-scheduler")]
        if scheduler == KUBE_SCHEDULER
        else [str(Path(sys.executable).parent / "scheduler-runtime"), "run"]
    )
    return [
        *program,
        f"--config={config}",
        f"--feature-gates={GANG_GATES}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        "--authentication-skip-lookup",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        "--v=2",
    ]


@dataclass(frozen=True)
class Outcome:
    """One spec's result for one scheduler: ginkgo's state and, unless it passed, why."""

    state: str
    reason: str = ""

    @property
    def failed(self) -> bool:
        return self.state not in (PASSED, SKIPPED)


def read_report(path: Path) -> dict[str, Outcome]:
    """Every spec that ran or was skipped at run time, by its full name, from ginkgo's JSON
    report (specs left out by the focus are not listed)."""
    outcomes: dict[str, Outcome] = {}
    for suite in json.loads(path.read_text()):
        for spec in suite.get("SpecReports") or []:
            if spec.get("LeafNodeType") != "It":
                continue
            name = " ".join([*(spec.get("ContainerHierarchyTexts") or []), spec["LeafNodeText"]])
            failure = spec.get("Failure") or {}
            state = str(spec.get("State"))
            if state == SKIPPED and not failure:
                continue  # filtered out, never started
            outcomes[name] = Outcome(state, _first_line(str(failure.get("Message") or "")))
    return outcomes


def _first_line(message: str, width: int = 160) -> str:
    line = next((text.strip() for text in message.splitlines() if text.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."


@dataclass(frozen=True)
class Row:
    spec: str
    control: Outcome | None
    runtime: Outcome | None

    @property
    def verdict(self) -> str:
        control, runtime = self.control, self.runtime
        if control is None or runtime is None:
            return "not run by both"
        if runtime.failed and control.failed:
            return f"environment limit: {control.reason}"
        if runtime.failed:
            return "runtime defect"
        if control.failed:
            return f"kube-scheduler only failed: {control.reason}"
        if SKIPPED in (control.state, runtime.state):
            return f"skipped: {control.reason or runtime.reason}"
        return "pass both"

    @property
    def defect(self) -> bool:
        return self.runtime is not None and self.runtime.failed and not self.control_failed

    @property
    def control_failed(self) -> bool:
        return self.control is not None and self.control.failed


def compare(control: Mapping[str, Outcome], runtime: Mapping[str, Outcome]) -> list[Row]:
    return [
        Row(spec, control.get(spec), runtime.get(spec)) for spec in sorted({*control, *runtime})
    ]


def table(rows: Sequence[Row]) -> str:
    """spec | kube-scheduler | runtime | verdict, one line per spec."""
    lines = ["spec | kube-scheduler | runtime | verdict", "--- | --- | --- | ---"]
    for row in rows:
        states = [o.state if o else "-" for o in (row.control, row.runtime)]
        lines.append(f"{row.spec} | {states[0]} | {states[1]} | {row.verdict}")
    return "\n".join(lines)


@dataclass
class Run:
    """One scheduler's run of the suite: its cluster, its scheduler process, its report."""

    scheduler: str
    version: str
    workdir: Path

    @property
    def name(self) -> str:
        return cluster_name(self.scheduler, self.version)

    def cluster(self) -> tuple[Path, Path]:
        """A fresh cluster (one left from an earlier run is made anew) with the nodes Ready;
        its kubeconfig and the release's binaries."""
        with contextlib.suppress(RuntimeError):  # there was none
            cluster_tool("down", self.name)
        # One at a time: kwokctl picks its components' ports as it goes, and two clusters made
        # at once can pick the same. A second `up` remakes one whose component could not start.
        with CREATING:
            cluster_tool("up", self.name, *CLUSTER_FLAGS)
            kubeconfig = Path(cluster_tool("up", self.name, *CLUSTER_FLAGS))
        bin_dir = Path(cluster_tool("bin").splitlines()[0])
        kubectl = [str(bin_dir / "kubectl"), f"--kubeconfig={kubeconfig}"]
        items = [kwok_node(index, *node) for index, node in enumerate(NODES)]
        nodes = {"apiVersion": "v1", "kind": "List", "items": items}
        _checked([*kubectl, "apply", "-f", "-"], json.dumps(nodes))
        _checked([*kubectl, "wait", "--for=condition=Ready", "node", "--all", "--timeout=120s"])
        # The node lifecycle controller lifts node.kubernetes.io/not-ready once they are.
        _wait_served([*kubectl, "get", "nodes", "-o", "jsonpath={..taints}"], empty=True)
        _wait_served([*kubectl, "get", f"podgroups.{WORKLOAD.api_version.split('/')[0]}", "-A"])
        return kubeconfig, bin_dir

    def run(self, binary: Path, focus: str) -> dict[str, Outcome]:
        self.workdir.mkdir(parents=True, exist_ok=True)
        kubeconfig, bin_dir = self.cluster()
        done = threading.Event()
        kubelet = [str(bin_dir / "kubectl"), f"--kubeconfig={kubeconfig}"]
        threading.Thread(target=allocate_extended, args=(kubelet, done), daemon=True).start()
        config = self.workdir / f"{self.scheduler}.yaml"
        config.write_text(yaml.safe_dump(scheduler_configuration(kubeconfig)))
        port = free_port()
        command = scheduler_command(self.scheduler, bin_dir, config, port)
        with (self.workdir / f"{self.scheduler}.log").open("wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            try:
                _wait_ready(process, port, self.workdir / f"{self.scheduler}.log")
                return self.suite(binary, kubeconfig, focus)
            finally:
                done.set()
                stop_process(process)
                if os.environ.get("KEEP_CLUSTER") != "1":
                    cluster_tool("down", self.name)

    def suite(self, binary: Path, kubeconfig: Path, focus: str) -> dict[str, Outcome]:
        report = self.workdir / f"{self.scheduler}.json"
        report.unlink(missing_ok=True)
        command = [
            str(binary),
            "--provider=skeleton",
            f"--kubeconfig={kubeconfig}",
            f"--ginkgo.focus={focus}",
            f"--ginkgo.json-report={report}",
            f"--ginkgo.timeout={SUITE_TIMEOUT}",
            "--ginkgo.no-color",
            "--ginkgo.v",
        ]
        with (self.workdir / f"{self.scheduler}.e2e.log").open("wb") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
        if not report.is_file():
            raise E2EError(f"the suite wrote no report; see {log.name}")
        return read_report(report)


def allocate_extended(kubectl: list[str], done: threading.Event) -> None:
    """What a kubelet does and kwok does not: an extended resource a spec writes into a node's
    capacity (`example.com/...`) becomes allocatable too, and goes when it goes."""
    while not done.wait(1):
        listed = subprocess.run(
            [*kubectl, "get", "nodes", "-o", "json"], capture_output=True, check=False
        )
        if listed.returncode != 0:
            continue
        for node in json.loads(listed.stdout)["items"]:
            status = node.get("status") or {}
            capacity, allocatable = status.get("capacity") or {}, status.get("allocatable") or {}
            patch = {
                name: capacity.get(name)
                for name in {*capacity, *allocatable}
                if "/" in name and capacity.get(name) != allocatable.get(name)
            }
            if patch:
                body = json.dumps({"status": {"allocatable": patch}})
                name = node["metadata"]["name"]
                command = [*kubectl, "patch", "node", name, "--subresource=status", "--type=merge"]
                subprocess.run([*command, "-p", body], capture_output=True, check=False)


def listed_specs(binary: Path, focus: str, scratch: Path) -> list[str]:
    """The specs `focus` selects in the suite, from a dry run (no cluster is contacted)."""
    report = scratch / "dry-run.json"
    command = [str(binary), "--provider=skeleton", f"--kubeconfig={scratch / 'none'}"]
    command += ["--ginkgo.dry-run", f"--ginkgo.focus={focus}", f"--ginkgo.json-report={report}"]
    subprocess.run(command, capture_output=True, check=False)
    if not report.is_file():
        raise E2EError(f"the suite's dry run wrote no report ({' '.join(command)})")
    return sorted(read_report(report))


def _checked(command: list[str], stdin: str | None = None, check: bool = True) -> None:
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise E2EError(f"{' '.join(command[:3])} failed: {done.stderr[-2000:]}")


def _wait_served(command: list[str], timeout: float = 120, *, empty: bool = False) -> None:
    """Until `command` succeeds (a new API group takes a moment to be served), with no output
    when `empty`."""
    deadline = time.monotonic() + timeout
    while True:
        done = subprocess.run(command, capture_output=True, check=False)
        if done.returncode == 0 and not (empty and done.stdout.strip()):
            return
        if time.monotonic() > deadline:
            raise E2EError(f"{' '.join(command[2:])}: not as expected after {timeout}s")
        time.sleep(1)


def _wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Until /readyz answers ok (the caches synced); an exit fails with the log's tail."""
    deadline = time.monotonic() + 120
    url = f"https://127.0.0.1:{port}/readyz"
    insecure = ssl.create_default_context()  # the scheduler's certificate is self-signed
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            raise E2EError(f"the scheduler exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(url, timeout=5, context=insecure) as answer:
                if answer.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise E2EError(f"the scheduler was not ready after 120s; see {log}")


def workdir(version: str) -> Path:
    cache = os.environ.get("SCHEDULER_OPERATOR_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scheduler-operator"
    )
    return Path(cache) / "e2e-upstream-runs" / version


def run_both(focus: str, schedulers: Sequence[str] = SCHEDULERS) -> dict[str, dict[str, Outcome]]:
    """Each scheduler's outcomes, the runs side by side (each on its own cluster)."""
    version = kubernetes_version()
    binary = suite_binary()
    runs = [Run(scheduler, version, workdir(version)) for scheduler in schedulers]
    with ThreadPoolExecutor(len(runs)) as pool:
        futures = {run.scheduler: pool.submit(run.run, binary, focus) for run in runs}
        return {scheduler: future.result() for scheduler, future in futures.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e2e_upstream", description=__doc__)
    parser.add_argument(
        "--focus", default=SIG_SCHEDULING, help=f"ginkgo's focus (default {SIG_SCHEDULING})"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    version = kubernetes_version()
    try:
        outcomes = run_both(args.focus)
    except (E2EError, RuntimeError) as error:
        print(f"e2e-upstream: {error}", file=sys.stderr)
        return 2
    rows = compare(outcomes[KUBE_SCHEDULER], outcomes[RUNTIME])
    print(
        f"Kubernetes {version} sig-scheduling e2e specs ({len(rows)}), logs in {workdir(version)}"
    )
    print(table(rows))
    defects = [row.spec for row in rows if row.defect]
    minutes = (time.monotonic() - started) / 60
    print(
        f"{sum(r.verdict == 'pass both' for r in rows)} pass both, "
        f"{sum(r.control_failed and r.runtime is not None and r.runtime.failed for r in rows)} "
        f"environment limits, {len(defects)} runtime defects ({minutes:.1f} min)"
    )
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
