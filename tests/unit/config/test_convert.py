"""`scheduler-runtime convert-config`: v1beta2 and v1beta3 configurations as v1, meaning what
they meant, each change said; the loader's refusal of the old versions points to it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler_runtime.cli import main
from scheduler_runtime.config import ConfigError, load_configuration
from scheduler_runtime.config.convert import convert

# The ImageLocality-only demo profile of older write-ups.
IMAGE_LOCALITY_V1BETA2 = """\
apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: image-locality-scheduler
    plugins:
      score:
        disabled:
          - name: '*'
        enabled:
          - name: ImageLocality
            weight: 1
"""

OLD = """\
apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
healthzBindAddress: 0.0.0.0:10251
metricsBindAddress: 0.0.0.0:10251
profiles:
  - schedulerName: spread
    plugins:
      score:
        enabled:
          - name: SelectorSpread
          - name: NodeAffinity
            weight: 5
      filter:
        disabled:
          - name: EBSLimits
    pluginConfig:
      - name: NodeResourcesFit
        args:
          apiVersion: kubescheduler.config.k8s.io/v1beta2
          kind: NodeResourcesFitArgs
          scoringStrategy: {type: MostAllocated}
      - name: SelectorSpread
        args: {}
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("version", ["v1beta2", "v1beta3"])
def test_the_loader_refuses_old_versions_with_the_way_out(version: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_configuration(
            {
                "apiVersion": f"kubescheduler.config.k8s.io/{version}",
                "kind": "KubeSchedulerConfiguration",
            }
        )
    assert caught.value.path == "apiVersion"
    assert "is no longer served (kube-scheduler removed it in 1.2" in caught.value.reason
    assert "`scheduler-runtime convert-config FILE` rewrites it as" in caught.value.reason


def test_the_image_locality_demo_converts_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.yaml"
    old.write_text(IMAGE_LOCALITY_V1BETA2)
    code, out, err = run(capsys, "simulate", "--config", str(old), "--state", str(old))
    assert code == 2
    assert "convert-config" in err
    code, out, err = run(capsys, "convert-config", str(old))
    assert code == 0
    assert err == (
        f"{old}: apiVersion: kubescheduler.config.k8s.io/v1beta2 -> "
        "kubescheduler.config.k8s.io/v1\n"
    )
    converted = yaml.safe_load(out)
    config = load_configuration(converted)
    assert config.profiles[0].enabled("score") == ("ImageLocality",)


def test_removed_fields_and_plugins_and_changed_defaults() -> None:
    conversion = convert(yaml.safe_load(OLD))
    document = conversion.document
    assert "healthzBindAddress" not in document
    plugins = document["profiles"][0]["plugins"]
    assert plugins["filter"]["disabled"] == []
    assert plugins["score"]["enabled"] == [
        {"name": "NodeAffinity", "weight": 5},
        {"name": "TaintToleration", "weight": 1},
        {"name": "InterPodAffinity", "weight": 1},
    ]
    configs = document["profiles"][0]["pluginConfig"]
    assert [c["name"] for c in configs] == ["NodeResourcesFit"]
    assert configs[0]["args"]["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    weights = load_configuration(document).profiles[0].score_weights
    assert (weights["TaintToleration"], weights["NodeAffinity"], weights["InterPodAffinity"]) == (
        1,
        5,
        1,
    )
    assert conversion.changes == [
        "apiVersion: kubescheduler.config.k8s.io/v1beta2 -> kubescheduler.config.k8s.io/v1",
        "healthzBindAddress: removed (health is served on the secure port (--secure-port))",
        "metricsBindAddress: removed (metrics are served on the secure port (--secure-port))",
        "profiles[0].plugins.filter.disabled: EBSLimits dropped (removed; NodeVolumeLimits "
        "counts these volumes through CSI migration)",
        "profiles[0].plugins.score.enabled: SelectorSpread dropped (removed in v1; "
        "PodTopologySpread's system default constraints spread pods of a Service or "
        "controller the same way)",
        "profiles[0].pluginConfig[0].args.apiVersion: kubescheduler.config.k8s.io/v1beta2 -> "
        "kubescheduler.config.k8s.io/v1",
        "profiles[0].pluginConfig[1]: SelectorSpread's args dropped (plugin removed)",
        "profiles[0].plugins.score: v1beta2's default weights kept: TaintToleration 1 (v1: 3), "
        "InterPodAffinity 1 (v1: 2)",
    ]


def test_v1beta3_keeps_its_weights_and_v1_is_left_alone() -> None:
    v1beta3 = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta3",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "a"}],
    }
    conversion = convert(v1beta3)
    assert conversion.document == {**v1beta3, "apiVersion": "kubescheduler.config.k8s.io/v1"}
    assert len(conversion.changes) == 1
    v1 = conversion.document
    assert convert(v1).document == v1
    assert convert(v1).changes == ["already kubescheduler.config.k8s.io/v1: nothing to change"]


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n"
    )
    code, out, err = run(capsys, "convert-config", str(path))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {path}: apiVersion: must be ")
    path.write_text("kind: [")
    code, out, err = run(capsys, "convert-config", str(path))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {path}:2:1: ")
    path.write_text(IMAGE_LOCALITY_V1BETA2.replace("ImageLocality", "Nope"))
    code, out, err = run(capsys, "convert-config", str(path))
    assert code == 2
    assert "converted, but still not valid: profiles[0].plugins.score.enabled[0].name: " in err
