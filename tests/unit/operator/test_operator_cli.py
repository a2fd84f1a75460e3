"""`scheduler-operator render` works offline and fails with one line naming the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

SAMPLE = """
apiVersion: scheduling.schedops.io/v1alpha1
kind: SchedulerProfile
metadata:
  name: tenant
spec:
  replicas: 2
"""


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler_operator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def test_render_prints_the_children_as_a_yaml_stream() -> None:
    done = run("render", "-f", "-", stdin=SAMPLE)
    assert done.returncode == 0, done.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(done.stdout)]
    assert kinds[0] == "ServiceAccount"
    assert kinds[-1] == "Deployment"
    assert len(kinds) == 9


def test_invalid_input_is_one_line_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SAMPLE.replace("replicas: 2", "replicas: 0"))
    done = run("render", "-f", str(bad))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: spec.replicas: ")


def test_an_unknown_plugin_for_the_engine_is_refused() -> None:
    stdin = (
        SAMPLE
        + "  engine: KubeScheduler\n  profiles: [{plugins: {score: {enabled: [{name: Nope}]}}}]\n"
    )
    done = run("render", "-f", "-", stdin=stdin)
    assert done.returncode == 1
    assert "spec.profiles[0].plugins.score.enabled[0].name: unknown plugin 'Nope'" in done.stderr


def test_unreadable_and_malformed_files_are_reported_without_a_traceback(tmp_path: Path) -> None:
    missing = run("render", "-f", str(tmp_path / "none.yaml"))
    assert missing.returncode == 1
    assert "No such file" in missing.stderr
    broken = run("render", "-f", "-", stdin="spec: [unclosed")
    assert broken.returncode == 1
    assert "Traceback" not in broken.stderr
    assert broken.stderr.count("\n") == 1
