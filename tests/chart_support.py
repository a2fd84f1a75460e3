"""The Helm chart and the kustomize tree as the tests render them: `helm` and `kubectl
kustomize` as built by tools/build-binaries.sh, their objects keyed by kind, namespace and name,
and compared as the API server would take them."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from cluster import REPO

from benchmarks.tools import built_binary

CHART = REPO / "charts" / "scheduler-operator"
MANIFESTS = REPO / "manifests"
COMPONENTS = MANIFESTS / "components"
Key = tuple[str, str, str]
# helm keeps its cache, configuration and repositories here, not in the user's home.
HELM_HOME = Path(tempfile.gettempdir()) / "scheduler-operator-tests-helm"


def helm(
    *args: str, kubeconfig: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HELM_CACHE_HOME": str(HELM_HOME / "cache"),
        "HELM_CONFIG_HOME": str(HELM_HOME / "config"),
        "HELM_DATA_HOME": str(HELM_HOME / "data"),
    }
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    done = subprocess.run(
        [str(built_binary("helm")), *args], capture_output=True, text=True, env=env, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed:\n{done.stderr}")
    return done


def set_flags(values: Mapping[str, str]) -> list[str]:
    return [flag for name, value in values.items() for flag in ("--set", f"{name}={value}")]


def helm_template(values: Mapping[str, str] | None = None, *extra: str) -> list[dict[str, Any]]:
    """`helm template --include-crds` of the chart with `--set` values."""
    done = helm("template", "scheduler-operator", str(CHART), "--include-crds",
                *set_flags(values or {}), *extra)  # fmt: skip
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def kustomize(*components: str) -> list[dict[str, Any]]:
    """`kubectl kustomize` of manifests/ with the named components, as a user's overlay."""
    with tempfile.TemporaryDirectory() as overlay:
        # kustomize takes only relative paths to other kustomizations.
        relative = os.path.relpath(MANIFESTS, overlay)
        (Path(overlay) / "kustomization.yaml").write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kustomize.config.k8s.io/v1beta1",
                    "kind": "Kustomization",
                    "resources": [relative],
                    "components": [f"{relative}/components/{c}" for c in components],
                }
            )
        )
        done = subprocess.run(
            [str(built_binary("kubectl")), "kustomize", overlay],
            capture_output=True,
            text=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def samples() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text()) for p in sorted((MANIFESTS / "samples").glob("*.yaml"))]


def key(obj: Mapping[str, Any]) -> Key:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def keyed(objects: Iterable[dict[str, Any]]) -> dict[Key, Any]:
    """The objects by kind, namespace and name, with blank lines in strings dropped: kustomize
    writes a folded YAML string whose lines are indented deeper (the CEL expressions of the
    admission policies) with an extra blank line, which neither CEL nor anything else minds."""
    out: dict[Key, Any] = {}
    for obj in objects:
        assert key(obj) not in out, f"{key(obj)} twice"
        out[key(obj)] = _without_blank_lines(obj)
    return out


def _without_blank_lines(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub(r"\n[ \t]*\n", "\n", value)
    if isinstance(value, dict):
        return {k: _without_blank_lines(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_blank_lines(v) for v in value]
    return value


def differences(expected: Iterable[dict[str, Any]], got: Iterable[dict[str, Any]]) -> list[str]:
    """What differs between two sets of objects, one line per object (empty: the same)."""
    want, have = keyed(expected), keyed(got)
    lines = [f"missing {k}" for k in sorted(set(want) - set(have))]
    lines += [f"extra {k}" for k in sorted(set(have) - set(want))]
    for k in sorted(set(want) & set(have)):
        if want[k] != have[k]:
            lines.append(f"differs {k}:\n{_diff(want[k], have[k])}")
    return lines


def _diff(want: Any, have: Any) -> str:
    import difflib  # noqa: PLC0415 - only when something differs

    a = yaml.safe_dump(want, sort_keys=True).splitlines()
    b = yaml.safe_dump(have, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "kustomize", "helm", lineterm="", n=2))


def of_kind(objects: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def named(objects: Iterable[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def metrics_reader_for(namespace: str) -> list[dict[str, Any]]:
    """The monitoring component's /metrics reader ClusterRole and its binding, renamed for
    `namespace` and bound to its ServiceAccount `prometheus` (which the caller creates)."""
    objects = kustomize("monitoring")
    role = named(objects, "ClusterRole", "scheduler-operator-metrics-reader")
    binding = named(objects, "ClusterRoleBinding", "scheduler-operator-metrics-reader")
    role["metadata"]["name"] = binding["roleRef"]["name"] = f"{namespace}-metrics-reader"
    binding["metadata"]["name"] = f"{namespace}-metrics-reader"
    binding["subjects"] = [{"kind": "ServiceAccount", "name": "prometheus", "namespace": namespace}]
    return [role, binding]
