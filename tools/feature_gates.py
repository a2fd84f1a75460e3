#!/usr/bin/env python3
"""Writes scheduler_runtime/config/kube_feature_gates.py: every feature gate kube-scheduler of
the pinned release knows, with its default, stage and lock at that release, and the gates
each depends on, as kube-scheduler's own feature gate holds them. A small Go program linked
against k8s.io/kubernetes/cmd/kube-scheduler/app (so every gate kube-scheduler registers is
there: Kubernetes', the API server library's, client-go's, logging's, ...) prints them; this
script formats them. It needs the Go module cache tools/build-binaries.sh fills.

    tools/feature_gates.py          # write the module
    tools/feature_gates.py --check  # compare it with what kube-scheduler holds
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "scheduler_runtime" / "config" / "kube_feature_gates.py"

DUMPER = """\
package main

import (
	"encoding/json"
	"os"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
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


def pinned_version() -> str:
    for line in (REPO / "tools" / "versions.env").read_text().splitlines():
        if line.startswith("KUBERNETES_VERSION="):
            return line.partition("=")[2].strip()
    raise SystemExit("tools/versions.env pins no KUBERNETES_VERSION")


def kubernetes_module() -> Path:
    """The wrapper module tools/build-binaries.sh builds kube-scheduler in (it holds the
    replace directives of Kubernetes' staging modules)."""
    built = subprocess.run(
        [str(REPO / "tools" / "build-binaries.sh")], check=True, capture_output=True, text=True
    ).stdout.split()
    return Path(built[0]) / "src"


def dump() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as work:
        module = Path(work)
        for name in ("go.mod", "go.sum"):
            shutil.copy(kubernetes_module() / name, module / name)
        (module / "main.go").write_text(DUMPER)
        env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
        out = subprocess.run(
            ["go", "run", "."], cwd=module, env=env, check=True, capture_output=True, text=True
        ).stdout
    gates: list[dict[str, Any]] = json.loads(out)
    return gates


def ruff() -> str:
    """The project's ruff (its venv's), else the one on PATH."""
    venv = REPO / ".venv" / "bin" / "ruff"
    return str(venv) if venv.exists() else "ruff"


def render(gates: list[dict[str, Any]], version: str) -> str:
    """The module's text, formatted as `ruff format` leaves it."""
    lines = [HEADER.format(version=version)]
    for gate in gates:
        entry = (gate["name"], gate["default"], gate["stage"] or "GA", gate["locked"])
        entry += (tuple(gate["dependencies"]),)
        lines.append(f"    {entry!r},\n".replace("'", '"'))
    lines.append(")\n")
    formatted = subprocess.run(
        [ruff(), "format", "--stdin-filename", str(TARGET), "-"],
        input="".join(lines),
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    return formatted.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = render(dump(), pinned_version())
    if args.check:
        if TARGET.read_text() != text:
            print(
                f"{TARGET.relative_to(REPO)} differs: run tools/feature_gates.py", file=sys.stderr
            )
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
