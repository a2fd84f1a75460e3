"""The day-one upgrade kit: given a new Kubernetes release, prints what differs between it and
the newest release the runtime knows, so that supporting it starts from a list of differences.

    python -m benchmarks.upgrade_kit v1.38.0-beta.0     # or: make upgrade-kit KUBE_VERSION=...

Steps (each timed; a failed one is reported and the next ones run where they can): build the
release's binaries (tools/build-binaries.sh), its feature gate table (tools/feature_gates.py
--release) against the newest known table, its default plugins (the release's own defaulting,
every gate at its default) against the runtime's, the plugin packages and the size of the Go
diff of pkg/scheduler, the API versions its API server serves for the groups the scheduler
reads, and the parity suites against a cluster of that release (the runtime emulating the
newest minor it knows).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from benchmarks.gangs import workload_cluster_name
from benchmarks.tools import REPO, TOOLS
from scheduler_runtime.config.defaults import default_multi_point
from scheduler_runtime.config.features import NEWEST, RELEASE, SCHEDULING, FeatureGates
from scheduler_runtime.config.kube_feature_gates import RELEASES, Gate

# The API groups whose served versions the runtime depends on.
API_GROUPS: Final = ("scheduling.k8s.io", "resource.k8s.io", "coordination.k8s.io")
PARITY_SUITES: Final = (
    "tests/integration/test_runtime_parity.py",
    "tests/integration/test_dra_parity_with_upstream.py",
    "tests/integration/test_gangs_parity.py",
    "tests/integration/test_coscheduling_parity.py",
)
FIELDS: Final = ("default", "stage", "locked", "dependencies")
# A gate pkg/scheduler reads: features.X, genericfeatures.X, ... in its non-test Go files.
GATE_READ = re.compile(r"\b\w*features\.([A-Z][A-Za-z0-9]+)\b")

# kube-scheduler's own defaulting (SetDefaults_KubeSchedulerConfiguration, every gate at its
# default at the release's version): the default profile's plugins, as the config API spells
# them.
DEFAULTS_PROGRAM: Final = """\
package main

import (
	"encoding/json"
	"os"

	configv1 "k8s.io/kube-scheduler/config/v1"
	schedulerv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"
)

func main() {
	cfg := configv1.KubeSchedulerConfiguration{}
	schedulerv1.SetDefaults_KubeSchedulerConfiguration(&cfg)
	if err := json.NewEncoder(os.Stdout).Encode(cfg.Profiles[0].Plugins); err != nil {
		panic(err)
	}
}
"""

Plugins = tuple[tuple[str, int], ...]


class KitError(RuntimeError):
    """A step that could not run, with the reason in its words."""


# --- the pure parts: differences and their report ------------------------------------------


@dataclass(frozen=True)
class GateChange:
    name: str
    field: str
    old: object
    new: object


@dataclass(frozen=True)
class GateDiff:
    """Gates added, removed and changed, scheduler-relevant ones first in each list."""

    added: tuple[Gate, ...]
    removed: tuple[Gate, ...]
    changed: tuple[GateChange, ...]
    scheduling: frozenset[str]


def _relevance(scheduling: frozenset[str]) -> Callable[[str], tuple[bool, str]]:
    return lambda name: (name not in scheduling, name)


def diff_gates(old: Iterable[Gate], new: Iterable[Gate], scheduling: Iterable[str]) -> GateDiff:
    """Each gate's (default, stage, locked, dependencies) compared by name."""
    before = {gate[0]: gate for gate in old}
    after = {gate[0]: gate for gate in new}
    relevant = frozenset(scheduling)
    order = _relevance(relevant)
    changed = [
        GateChange(name, label, before[name][index], after[name][index])
        for name in sorted(before.keys() & after.keys(), key=order)
        for index, label in enumerate(FIELDS, start=1)
        if before[name][index] != after[name][index]
    ]
    return GateDiff(
        added=tuple(after[name] for name in sorted(after.keys() - before.keys(), key=order)),
        removed=tuple(before[name] for name in sorted(before.keys() - after.keys(), key=order)),
        changed=tuple(changed),
        scheduling=relevant,
    )


def scheduler_gates(source: Path, known: Iterable[str]) -> frozenset[str]:
    """The gates among `known` that a release's pkg/scheduler reads (non-test Go files)."""
    names = frozenset(known)
    read: set[str] = set()
    for path in sorted((source / "pkg" / "scheduler").rglob("*.go")):
        if not path.name.endswith("_test.go"):
            read.update(GATE_READ.findall(path.read_text(errors="replace")))
    return frozenset(read & names)


@dataclass(frozen=True)
class PluginDiff:
    """The default multiPoint plugins of the known minor and of the new release."""

    old: Plugins
    new: Plugins
    other_points: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def added(self) -> list[str]:
        known = {name for name, _ in self.old}
        return [name for name, _ in self.new if name not in known]

    @property
    def removed(self) -> list[str]:
        kept = {name for name, _ in self.new}
        return [name for name, _ in self.old if name not in kept]

    @property
    def reweighted(self) -> list[tuple[str, int, int]]:
        weights = dict(self.old)
        return [(n, weights[n], w) for n, w in self.new if n in weights and weights[n] != w]

    @property
    def reordered(self) -> bool:
        """Whether the plugins both have run in another order."""
        kept = {name for name, _ in self.new} & {name for name, _ in self.old}
        return [n for n, _ in self.old if n in kept] != [n for n, _ in self.new if n in kept]


def plugins_from_json(document: Mapping[str, Any]) -> PluginDiff:
    """Splits kube-scheduler's Plugins (JSON) into its multiPoint list and the rest."""
    multi = document.get("multiPoint", {}).get("enabled", [])
    new = tuple((entry["name"], int(entry.get("weight", 0))) for entry in multi)
    others = {
        point: {
            state: tuple(entry["name"] for entry in entries)
            for state, entries in sets.items()
            if entries
        }
        for point, sets in document.items()
        if point != "multiPoint" and sets
    }
    return PluginDiff(old=(), new=new, other_points=others)


@dataclass(frozen=True)
class APIVersions:
    """Per group: the versions served, preferred first ("" when the group is not served)."""

    served: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class SourceDiff:
    """pkg/scheduler of the two releases: plugin packages and the size of the Go diff."""

    plugins_added: tuple[str, ...]
    plugins_removed: tuple[str, ...]
    files_changed: int
    files_added: int
    files_removed: int
    lines_added: int
    lines_removed: int


@dataclass(frozen=True)
class ParityResult:
    name: str
    outcome: str  # passed, failed, error, skipped
    first_line: str = ""


@dataclass
class Step:
    title: str
    seconds: float = 0.0
    lines: list[str] = field(default_factory=list)
    error: str = ""


def plugin_packages(source: Path) -> set[str]:
    root = source / "pkg" / "scheduler" / "framework" / "plugins"
    return {path.name for path in root.iterdir() if path.is_dir()} if root.is_dir() else set()


def diff_sources(old: Path, new: Path) -> SourceDiff:
    """Go files of pkg/scheduler compared line by line (test files included)."""
    before, after = _go_files(old), _go_files(new)
    added = removed = changed = 0
    for name in before.keys() & after.keys():
        old_lines = before[name].read_text(errors="replace").splitlines()
        new_lines = after[name].read_text(errors="replace").splitlines()
        if old_lines == new_lines:
            continue
        changed += 1
        plus, minus = _count(difflib.unified_diff(old_lines, new_lines, lineterm="", n=0))
        added, removed = added + plus, removed + minus
    for name in after.keys() - before.keys():
        added += len(after[name].read_text(errors="replace").splitlines())
    for name in before.keys() - after.keys():
        removed += len(before[name].read_text(errors="replace").splitlines())
    old_plugins, new_plugins = plugin_packages(old), plugin_packages(new)
    return SourceDiff(
        plugins_added=tuple(sorted(new_plugins - old_plugins)),
        plugins_removed=tuple(sorted(old_plugins - new_plugins)),
        files_changed=changed,
        files_added=len(after.keys() - before.keys()),
        files_removed=len(before.keys() - after.keys()),
        lines_added=added,
        lines_removed=removed,
    )


def _go_files(source: Path) -> dict[str, Path]:
    root = source / "pkg" / "scheduler"
    return {str(path.relative_to(root)): path for path in root.rglob("*.go")}


def _count(diff: Iterable[str]) -> tuple[int, int]:
    plus = minus = 0
    for line in diff:
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


def parse_junit(text: str) -> list[ParityResult]:
    """pytest's junit XML as one result per test, with a failure's first message line."""
    results = []
    for case in ET.fromstring(text).iter("testcase"):  # noqa: S314 (pytest's own output)
        module = case.get("classname", "").rsplit(".", 1)[-1]
        name = f"{module}::{case.get('name', '')}"
        outcome, first = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = "failed" if tag == "failure" else tag
                message = found.get("message") or found.text or ""
                first = _first_line(message)
                break
        results.append(ParityResult(name, outcome, first))
    return results


# Where pytest's assertion rewriting names the first difference of two collections.
FIRST_DIFFERENCE = re.compile(r"(?:first extra item|first differing item|At index \d+ diff): (.*)")


def _first_line(message: str) -> str:
    """The first difference pytest names (its first extra or differing item), else the first
    line saying something ("AssertionError: " dropped)."""
    found = FIRST_DIFFERENCE.search(message)
    if found:
        return found.group(1).strip()[:600]
    for raw in message.splitlines():
        line = raw.strip().removeprefix("AssertionError: ").strip()
        if line:
            return line[:600]
    return ""


def format_gates(diff: GateDiff, limit: int = 40) -> list[str]:
    lines = [
        f"{len(diff.added)} added, {len(diff.removed)} removed, "
        f"{len({change.name for change in diff.changed})} changed "
        f"(* = read by pkg/scheduler, listed first)"
    ]

    def mark(name: str) -> str:
        return f"{'*' if name in diff.scheduling else ' '} {name}"

    shown = [
        *(
            f"  + {mark(g[0])}: default={g[1]} {g[2]}{_locked(g[3])}{_deps(g[4])}"
            for g in diff.added
        ),
        *(f"  - {mark(g[0])} (was {g[2]}, default={g[1]})" for g in diff.removed),
        *(
            f"  ~ {mark(c.name)}: {c.field} {_shown(c.old)} -> {_shown(c.new)}"
            for c in diff.changed
        ),
    ]
    relevant = [line for line in shown if line[4] == "*"]
    rest = [line for line in shown if line[4] != "*"]
    kept = rest[: max(0, limit - len(relevant))]
    lines += relevant + kept
    if len(kept) < len(rest):
        lines.append(f"  ... {len(rest) - len(kept)} more (not scheduling)")
    return lines


def _locked(locked: bool) -> str:
    return " locked" if locked else ""


def _deps(dependencies: tuple[str, ...]) -> str:
    return f" needs {','.join(dependencies)}" if dependencies else ""


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return "(" + ",".join(str(item) for item in value) + ")"
    return str(value)


def format_plugins(diff: PluginDiff) -> list[str]:
    lines = ["multiPoint: the same plugins, weights and order"] if diff.old == diff.new else []
    if diff.added:
        lines.append(f"added: {', '.join(diff.added)}")
    if diff.removed:
        lines.append(f"removed: {', '.join(diff.removed)}")
    lines += [f"weight of {name}: {old} -> {new}" for name, old, new in diff.reweighted]
    if diff.reordered or diff.added or diff.removed:
        lines.append("known: " + " ".join(_plugin(entry) for entry in diff.old))
        lines.append("new:   " + " ".join(_plugin(entry) for entry in diff.new))
    for point, sets in diff.other_points.items():
        for state, names in sets.items():
            lines.append(f"outside multiPoint: {point}.{state} = {', '.join(names)}")
    return lines


def _plugin(entry: tuple[str, int]) -> str:
    name, weight = entry
    return f"{name}({weight})" if weight else name


def format_api_versions(old: APIVersions | None, new: APIVersions) -> list[str]:
    lines = []
    for group in API_GROUPS:
        served = new.served.get(group, ())
        was = old.served.get(group, ()) if old is not None else None
        text = ", ".join(served) or "(not served)"
        if was is None:
            lines.append(f"{group}: {text}")
        elif was == served:
            lines.append(f"{group}: {text} (unchanged)")
        else:
            lines.append(f"{group}: {text} (was {', '.join(was) or 'not served'})")
    return lines


def format_source(diff: SourceDiff) -> list[str]:
    return [
        f"plugin packages added: {', '.join(diff.plugins_added) or 'none'}",
        f"plugin packages removed: {', '.join(diff.plugins_removed) or 'none'}",
        f"pkg/scheduler Go diff: {diff.files_changed} files changed, {diff.files_added} added, "
        f"{diff.files_removed} removed; +{diff.lines_added} -{diff.lines_removed} lines",
    ]


def format_parity(results: Sequence[ParityResult]) -> list[str]:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.outcome] = counts.get(result.outcome, 0) + 1
    lines = [", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))]
    for result in results:
        if result.outcome in ("failed", "error"):
            lines.append(f"  FAIL {result.name}: {result.first_line}")
    return lines


def format_report(
    version: str, known: str, steps: Sequence[Step], replaces: Sequence[str] = ()
) -> str:
    """The whole report: one section a step, with its time, and the timings at the end."""
    out = [f"Kubernetes {version} against {known}, the newest release the runtime knows"]
    out += [f"built with {replace.replace('=', ' replaced by ', 1)}" for replace in replaces]
    out.append("")
    for step in steps:
        out.append(f"== {step.title} ({step.seconds:.0f} s)")
        out += step.lines
        if step.error:
            out.append(f"not done: {step.error}")
        out.append("")
    out.append("timings: " + ", ".join(f"{step.title} {step.seconds:.0f} s" for step in steps))
    return "\n".join(out) + "\n"


# --- the steps that run things ---------------------------------------------------------------


def _feature_gates_tool() -> ModuleType:
    """tools/feature_gates.py, which writes the gate tables (its Go wrapper module too)."""
    spec = importlib.util.spec_from_file_location("feature_gates", TOOLS / "feature_gates.py")
    if spec is None or spec.loader is None:
        raise KitError("tools/feature_gates.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(command: Sequence[str], env: Mapping[str, str], log: Path) -> None:
    with log.open("w") as out:
        done = subprocess.run(command, cwd=REPO, env=dict(env), stdout=out, stderr=out, check=False)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise KitError(
            f"{' '.join(command)} failed ({done.returncode}), see {log}:\n" + "\n".join(tail)
        )


def build(env: Mapping[str, str], log: Path, *components: str) -> list[str]:
    """tools/build-binaries.sh for `env` (KUBE_VERSION, SCHEDULER_VERSION, GO_REPLACES)."""
    try:
        _run([str(TOOLS / "build-binaries.sh"), *components], env, log)
    except KitError:
        missing = unavailable_modules(log.read_text(errors="replace"))
        if missing:
            raise KitError(
                f"the Go module proxy does not serve {', '.join(missing)} (see {log})"
            ) from None
        raise
    return [f"built (log: {log})"]


def judge_env(
    env: Mapping[str, str], version: str, known_release: str, whole: bool
) -> dict[str, str]:
    """Where the release is judged: on a control plane of its own when its binaries were
    built (`whole`), else its kube-scheduler on the known release's control plane."""
    if whole:
        return {**env, "KUBE_VERSION": version}
    return {**env, "KUBE_VERSION": known_release, "SCHEDULER_VERSION": version}


# go's words for a module version the proxy refuses (403/404/410).
UNAVAILABLE = re.compile(
    r"reading https?://\S+?/([^@\s]+)/@v/([^\s/]+?)\.(?:zip|mod|info): [45]\d\d"
)


def unavailable_modules(log: str) -> list[str]:
    """module@version for each version a Go build could not download, in first-seen order."""
    return list(dict.fromkeys(f"{m}@{v}" for m, v in UNAVAILABLE.findall(log)))


def gate_table(version: str, replaces: tuple[str, ...], scratch: Path) -> tuple[Gate, ...]:
    """The release's table, written by tools/feature_gates.py --release into `scratch`."""
    tool = _feature_gates_tool()
    try:
        path: Path = tool.write_release(version, scratch, replaces)
    except SystemExit as error:
        raise KitError(str(error)) from None
    return load_table(path.read_text())


def load_table(text: str) -> tuple[Gate, ...]:
    """GATES of a generated table module, read as a literal (the module is not imported)."""
    for node in ast.parse(text).body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "GATES"
            and node.value is not None
        ):
            gates: tuple[Gate, ...] = ast.literal_eval(node.value)
            return gates
    raise KitError("the generated table has no GATES")


def release_source(version: str, env: Mapping[str, str]) -> Path:
    """k8s.io/kubernetes at `version` in the Go module cache (downloaded when missing)."""
    cache = subprocess.run(
        ["go", "env", "GOMODCACHE"], env=dict(env), capture_output=True, text=True, check=True
    ).stdout.strip()
    path = Path(cache) / "k8s.io" / f"kubernetes@{version}"
    if not path.is_dir():
        with tempfile.TemporaryDirectory() as work:
            subprocess.run(
                ["go", "mod", "download", f"k8s.io/kubernetes@{version}"],
                cwd=work,
                env=dict(env),
                capture_output=True,
                check=False,
            )
    if not path.is_dir():
        raise KitError(f"k8s.io/kubernetes@{version} is not in the Go module cache ({cache})")
    return path


def release_defaults(version: str, replaces: tuple[str, ...]) -> PluginDiff:
    """The release's default plugins, from its own defaulting."""
    tool = _feature_gates_tool()
    packages = ("k8s.io/kubernetes/pkg/scheduler/apis/config/v1",)
    try:
        document = tool.run_program(version, DEFAULTS_PROGRAM, packages, replaces)
    except SystemExit as error:
        raise KitError(str(error)) from None
    parsed = plugins_from_json(document)
    known = default_multi_point(FeatureGates(version=NEWEST).features, NEWEST)
    return PluginDiff(old=known, new=parsed.new, other_points=parsed.other_points)


def api_versions(kubeconfig: str, kubectl: Path) -> APIVersions:
    """Discovery: each group's served versions, the preferred one first."""
    served: dict[str, tuple[str, ...]] = {}
    for group in API_GROUPS:
        done = subprocess.run(
            [str(kubectl), "--kubeconfig", kubeconfig, "get", "--raw", f"/apis/{group}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            served[group] = ()
            continue
        document = json.loads(done.stdout)
        preferred = document.get("preferredVersion", {}).get("version", "")
        versions = [entry["version"] for entry in document.get("versions", [])]
        served[group] = tuple([preferred] + [v for v in versions if v != preferred])
    return APIVersions(served)


def cluster_name(version: str, scheduler: str | None = None) -> str:
    """The kit's own cluster for a release (never the tests' shared ones); with another
    release's kube-scheduler, named after both."""
    name = "upkit-" + version.removeprefix("v").replace(".", "-")
    if scheduler is not None and scheduler != version:
        name += "-ks-" + scheduler.removeprefix("v").replace(".", "-")
    return name


def _cluster(release: str, env: Mapping[str, str], *args: str) -> str:
    """tools/cluster.sh running `release`."""
    done = subprocess.run(
        [str(TOOLS / "cluster.sh"), *args],
        env={**env, "KUBE_VERSION": release},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise KitError(f"tools/cluster.sh {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip()


def discovery(version: str, known_release: str, env: Mapping[str, str], keep: bool) -> list[str]:
    """The served versions on a cluster of each release (the kit's own clusters; the new
    release's is left for the parity suites when `keep`)."""
    found: dict[str, APIVersions] = {}
    for release in dict.fromkeys((known_release, version)):
        kubeconfig = _cluster(release, env, "up", cluster_name(release))
        kubectl = Path(_cluster(release, env, "bin").splitlines()[0]) / "kubectl"
        found[release] = api_versions(kubeconfig, kubectl)
        if release != version or not keep:
            _cluster(release, env, "down", cluster_name(release))
    old = found[known_release] if known_release != version else None
    return format_api_versions(old, found[version])


def parity(env: Mapping[str, str], suites: Sequence[str], scratch: Path) -> list[str]:
    """The parity suites against a cluster of env's KUBE_VERSION (and SCHEDULER_VERSION's
    kube-scheduler); one line a failure. The suites keep their clusters (KEEP_CLUSTER=1: the
    results are read before anything waits on the binaries' lock) and the kit deletes them
    after."""
    junit = scratch / "parity.xml"
    version = env["KUBE_VERSION"]
    name = cluster_name(version, env.get("SCHEDULER_VERSION"))
    suite_env = {**env, "TEST_CLUSTER_NAME": name, "KEEP_CLUSTER": "1"}
    command = [str(REPO / ".venv" / "bin" / "pytest"), "-vv", "-p", "no:cacheprovider"]
    command += [*suites, f"--junitxml={junit}"]
    log = scratch / "parity.log"
    with log.open("w") as out:
        subprocess.run(command, cwd=REPO, env=suite_env, stdout=out, stderr=out, check=False)
    if not junit.exists():
        raise KitError(f"pytest wrote no results, see {log}")
    lines = [*format_parity(parse_junit(junit.read_text())), f"(log: {log})"]
    listed = _cluster(version, env, "kwokctl", "get", "clusters").splitlines()
    for cluster in kit_clusters(listed, name):
        _cluster(version, env, "down", cluster)
    return lines


def kit_clusters(listed: Iterable[str], name: str) -> list[str]:
    """The kit's cluster and the gang suites' workload cluster named after it."""
    own = {name, workload_cluster_name(name)}
    return [cluster for cluster in listed if cluster in own]


def run(args: argparse.Namespace) -> str:
    version: str = args.version
    known_minor = NEWEST
    known_release = RELEASE[known_minor]
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix=f"upgrade-kit-{version}-"))
    scratch.mkdir(parents=True, exist_ok=True)
    replaces = tuple(args.replace)
    env = {**os.environ, "KUBE_VERSION": version, "GO_REPLACES": " ".join(replaces)}
    env.setdefault("GOTOOLCHAIN", "auto")  # a newer release's go directive fetches its Go
    steps: list[Step] = []
    judged: dict[str, str] | None = None  # where the API versions and parity steps run
    if args.build:
        whole = _step(steps, "binaries", lambda: build(env, scratch / "build.log"))
        if not whole.error:
            judged = judge_env(env, version, known_release, whole=True)
        else:
            beside = judge_env(env, version, known_release, whole=False)
            log = scratch / "build-kube-scheduler.log"
            title = f"kube-scheduler {version} beside the control plane of {known_release}"
            alone = _step(steps, title, lambda: build(beside, log, "control-plane"))
            judged = None if alone.error else beside
    sources: dict[str, Path] = {}

    def gates() -> list[str]:
        new = gate_table(version, replaces, scratch)
        sources[version] = release_source(version, env)
        sources[known_release] = release_source(known_release, env)
        relevant = scheduler_gates(sources[version], (g[0] for g in new)) | SCHEDULING
        diff = diff_gates(RELEASES[known_minor][1], new, relevant)
        whole = scratch / "gates.txt"
        whole.write_text("\n".join(format_gates(diff, limit=len(new) * len(FIELDS))) + "\n")
        table = scratch / f"{version_module(version)}.py"
        return [*format_gates(diff), f"(every difference: {whole}; the table: {table})"]

    _step(steps, "feature gates", gates)
    _step(steps, "default plugins", lambda: format_plugins(release_defaults(version, replaces)))
    _step(
        steps,
        "pkg/scheduler",
        lambda: format_source(
            diff_sources(
                sources.get(known_release) or release_source(known_release, env),
                sources.get(version) or release_source(version, env),
            )
        ),
    )
    if judged is not None and "SCHEDULER_VERSION" not in judged:
        keep = bool(args.parity)
        _step(steps, "API versions", lambda: discovery(version, known_release, env, keep))
    elif judged is not None:
        steps.append(Step("API versions", error=f"the API server of {version} was not built"))
    if judged is not None and args.parity:
        _step(steps, "parity", lambda: parity(judged, args.suite, scratch))
    elif args.build and judged is None:
        steps.append(Step("API versions and parity", error="the binaries were not built"))
    return format_report(version, known_release, steps, replaces)


def version_module(version: str) -> str:
    """v1.38.0 -> v1_38, the table module's name."""
    return "v" + "_".join(version.removeprefix("v").split(".")[:2])


def _step(steps: list[Step], title: str, action: Callable[[], list[str]]) -> Step:
    step = Step(title)
    steps.append(step)
    print(f"upgrade-kit: {title} ...", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        step.lines = action()
    except (KitError, RuntimeError, OSError, ValueError) as error:
        step.error = str(error)
    step.seconds = time.monotonic() - started
    return step


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="the new Kubernetes release (v1.38.0-beta.0)")
    parser.add_argument("--scratch", help="where the tables, logs and results go")
    parser.add_argument(
        "--no-build",
        dest="build",
        action="store_false",
        help="source differences only: no binaries, cluster or parity",
    )
    parser.add_argument(
        "--no-parity", dest="parity", action="store_false", help="skip the parity suites"
    )
    parser.add_argument("--suite", action="append", help="a parity suite (repeatable)")
    parser.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="MODULE=MODULE@VERSION",
        help="a Go module version the proxy serves, for one it does not",
    )
    args = parser.parse_args(argv)
    if not re.fullmatch(r"v1\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?", args.version):
        parser.error(f"version {args.version!r}: expected a release such as v1.38.0-beta.0")
    args.suite = args.suite or list(PARITY_SUITES)
    print(run(args), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
