#!/usr/bin/env python3
"""Writes scheduler_runtime/config/kube_feature_gates/: for each Kubernetes minor the runtime
emulates, every feature gate that release's kube-scheduler knows, with its default, stage and
lock at that release, and the gates each depends on, as kube-scheduler's own feature gate
holds them. For each release (RELEASES: the newest patch of each supported minor) a small Go
program built against that release registers the gates as kube-scheduler does (importing
k8s.io/kubernetes/pkg/features registers Kubernetes', the API server library's, client-go's,
the controller manager's and zpages'; then what cmd/kube-scheduler/app's init adds: logging's
and metrics'), and prints them, each resolved from its versioned specs by component-base's
own featureSpecAtEmulationAndMinCompatVersion at the release's version; this script formats
them. It needs the Go module proxy (or a warm module cache) and a Go toolchain.

    tools/feature_gates.py          # write the modules
    tools/feature_gates.py --check  # compare them with what each kube-scheduler holds
    tools/feature_gates.py --release v1.38.0 --out DIR  # one release's module, written to DIR

`--release` reads a release the runtime does not know yet (the upgrade kit compares it with
the newest table); `--replace MODULE=MODULE@VERSION` stands in a version the Go module proxy
serves for one it does not. A release that needs a newer Go than the one installed gets it
from the proxy (GOTOOLCHAIN=auto unless set).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "scheduler_runtime" / "config" / "kube_feature_gates"

# The newest patch of each supported minor on the Go module proxy (oldest first).
RELEASES = ("v1.35.4", "v1.36.3", "v1.37.2")

DUMPER = """\
package main

import (
	"encoding/json"
	"os"
	"sort"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
	_ "k8s.io/kubernetes/pkg/features"
)

type gate struct {
	Name         string   `json:"name"`
	Default      bool     `json:"default"`
	Stage        string   `json:"stage"`
	Locked       bool     `json:"locked"`
	Dependencies []string `json:"dependencies"`
}

func main() {
	fg := utilfeature.DefaultMutableFeatureGate
	// What cmd/kube-scheduler/app/server.go's init registers beyond pkg/features.
	utilruntime.Must(logsapi.AddFeatureGates(fg))
	utilruntime.Must(metricsfeatures.AddFeatureGates(fg))
	atVersion := fg.GetAll() // each gate's spec at the binary's version (pre-alpha ones left out)
	dependencies := fg.Dependencies()
	gates := []gate{}
	for name := range fg.GetAllVersioned() {
		spec, known := atVersion[name]
		stage := string(spec.PreRelease)
		if !known {
			stage = "PRE-ALPHA"
		}
		deps := []string{} // in their declared order, which errors list them in
		for _, dep := range dependencies[name] {
			deps = append(deps, string(dep))
		}
		gates = append(gates, gate{string(name), spec.Default, stage, spec.LockToDefault, deps})
	}
	sort.Slice(gates, func(i, j int) bool { return gates[i].Name < gates[j].Name })
	if err := json.NewEncoder(os.Stdout).Encode(gates); err != nil {
		panic(err)
	}
}
"""

HEADER = '''\
"""Every feature gate kube-scheduler {version} knows, as its `--feature-gates` flag takes them:
(name, default, stage, locked to default, the gates it depends on). Written by
tools/feature_gates.py from kube-scheduler's own feature gate: do not edit."""

from __future__ import annotations

from typing import Final

KUBERNETES_VERSION: Final = "{version}"

# Stage "GA" is upstream's empty prerelease.
GATES: Final[tuple[tuple[str, bool, str, bool, tuple[str, ...]], ...]] = (
'''

INDEX = '''\
"""The feature gates of each Kubernetes minor the runtime emulates, oldest first: the minor
("1.36"), the release its table was read from, and the table (see each module). Written by
tools/feature_gates.py: do not edit."""

from __future__ import annotations

from typing import Final

{imports}

Gate = tuple[str, bool, str, bool, tuple[str, ...]]

RELEASES: Final[dict[str, tuple[str, tuple[Gate, ...]]]] = {{
{entries}
}}
'''

STAGING = re.compile(r"^\s*(k8s\.io/[a-z0-9-]+) => \./staging/", re.MULTILINE)


def go(module: Path, *args: str) -> str:
    env = {**os.environ, "GOFLAGS": "-mod=mod -buildvcs=false", "CGO_ENABLED": "0"}
    env.setdefault("GOTOOLCHAIN", "auto")  # a newer release's go directive fetches its Go
    done = subprocess.run(
        ["go", *args], cwd=module, env=env, check=False, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"go {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def wrapper_module(module: Path, release: str, replaces: tuple[str, ...] = ()) -> None:
    """A module requiring k8s.io/kubernetes at `release`, its staging modules replaced by their
    published v0.<minor>.<patch> (a dependent module must: the release points them at
    ./staging), and each of `replaces` (MODULE=MODULE@VERSION) replaced as it says."""
    go(module, "mod", "init", "local.build/featuregates")
    gomod = json.loads(go(module, "mod", "download", "-json", f"k8s.io/kubernetes@{release}"))
    staging = STAGING.findall(Path(gomod["GoMod"]).read_text())
    published = "v0." + release.removeprefix("v1.")
    with (module / "go.mod").open("a") as out:
        out.write(f"require k8s.io/kubernetes {release}\nreplace (\n")
        out.writelines(f"\t{name} => {name} {published}\n" for name in staging)
        out.writelines(f"\t{old} => {new.replace('@', ' ', 1)}\n" for old, new in pairs(replaces))
        out.write(")\n")


def pairs(replaces: tuple[str, ...]) -> list[tuple[str, str]]:
    """MODULE=MODULE@VERSION arguments as (module, replacement); a malformed one stops here."""
    found = []
    for text in replaces:
        old, equals, new = text.partition("=")
        if not equals or "@" not in new or not old:
            raise SystemExit(f"--replace {text!r}: expected MODULE=MODULE@VERSION")
        found.append((old.strip(), new.strip()))
    return found


def run_program(
    release: str, source: str, packages: tuple[str, ...], replaces: tuple[str, ...] = ()
) -> Any:
    """Runs the Go program `source` (package main) built against `release`, which imports
    `packages` of k8s.io/kubernetes, and returns the JSON it prints."""
    with tempfile.TemporaryDirectory() as work:
        module = Path(work)
        wrapper_module(module, release, replaces)
        go(module, "get", *(f"{package}@{release}" for package in packages))
        (module / "main.go").write_text(source)
        return json.loads(go(module, "run", "."))


def dump(release: str, replaces: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    gates: list[dict[str, Any]] = run_program(
        release, DUMPER, ("k8s.io/kubernetes/pkg/features",), replaces
    )
    return gates


def ruff_format(text: str, path: Path) -> str:
    """`text` as `ruff format` leaves it (the project's ruff, else the one on PATH)."""
    venv = REPO / ".venv" / "bin" / "ruff"
    formatted = subprocess.run(
        [str(venv) if venv.exists() else "ruff", "format", "--stdin-filename", str(path), "-"],
        input=text,
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    return formatted.stdout


def module_name(release: str) -> str:
    """v1.36.3 -> v1_36"""
    return "v" + "_".join(release.removeprefix("v").split(".")[:2])


def render_table(gates: list[dict[str, Any]], release: str) -> str:
    lines = [HEADER.format(version=release)]
    for gate in gates:
        entry = (gate["name"], gate["default"], gate["stage"] or "GA", gate["locked"])
        entry += (tuple(gate["dependencies"]),)
        lines.append(f"    {entry!r},\n".replace("'", '"'))
    lines.append(")\n")
    return ruff_format("".join(lines), TARGET / f"{module_name(release)}.py")


def render_index() -> str:
    names = [module_name(release) for release in RELEASES]
    imports = f"from scheduler_runtime.config.kube_feature_gates import {', '.join(names)}"
    entries = "\n".join(
        f'    "{name[1:].replace("_", ".")}": ({name}.KUBERNETES_VERSION, {name}.GATES),'
        for name in names
    )
    return ruff_format(INDEX.format(imports=imports, entries=entries), TARGET / "__init__.py")


def expected() -> dict[Path, str]:
    """Every file of the package, as the releases' kube-schedulers say it should read."""
    dumps = {release: dump(release) for release in RELEASES}
    files = {TARGET / "__init__.py": render_index()}
    for release, gates in dumps.items():
        files[TARGET / f"{module_name(release)}.py"] = render_table(gates, release)
    return files


def write_release(release: str, out: Path, replaces: tuple[str, ...] = ()) -> Path:
    """Writes `release`'s table module into `out` (as it would read in the package) and
    returns its path; the package itself is left alone."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{module_name(release)}.py"
    path.write_text(render_table(dump(release, replaces), release))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--release", help="read this release only (v1.38.0), into --out")
    parser.add_argument("--out", type=Path, help="where --release writes its module")
    parser.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="MODULE=MODULE@VERSION",
        help="a Go module version to build with instead of the one the release asks for",
    )
    args = parser.parse_args()
    if args.release:
        if args.out is None or args.check:
            parser.error("--release writes to --out (and does not --check)")
        print(write_release(args.release, args.out, tuple(args.replace)))
        return 0
    files = expected()
    if args.check:
        stale = [
            path for path, text in files.items() if not path.exists() or path.read_text() != text
        ]
        for path in stale:
            print(f"{path.relative_to(REPO)} differs: run tools/feature_gates.py", file=sys.stderr)
        return 1 if stale else 0
    TARGET.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
