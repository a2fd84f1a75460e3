"""The alerts, checked by the promtool built with Prometheus: the rules are valid as the
PrometheusRule ships them (both the kustomize component's and the chart's copy), and each
alert's unit tests (tests/data/monitoring/alert-rules.test.yaml) pass, with every alert shown
both firing and staying quiet."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from chart_support import CHART, COMPONENTS

from benchmarks.tools import built_binary

REPO = Path(__file__).resolve().parents[2]
RULES = CHART / "files" / "alert-rules.yaml"
UNIT_TESTS = REPO / "tests" / "data" / "monitoring" / "alert-rules.test.yaml"
WANTED = {
    "SchedulerDown",
    "SchedulerPodDown",
    "SchedulerNoLeader",
    "SchedulerPendingPodsGrowing",
    "SchedulerSchedulingErrors",
    "SchedulerFailedSchedulingHigh",
    "SchedulerNetworkTrafficQueryFailures",
    "SchedulerOperatorDown",
    "SchedulerOperatorReconcileErrors",
}


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(built_binary("promtool")), *args], capture_output=True, text=True, check=False
    )


def alerts() -> set[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {rule["alert"] for group in groups for rule in group["rules"]}


def test_the_rules_pass_promtool_check_as_the_chart_and_the_component_ship_them(
    tmp_path: Path,
) -> None:
    rule = yaml.safe_load((COMPONENTS / "monitoring" / "prometheusrule.yaml").read_text())
    component = tmp_path / "component-rules.yaml"
    component.write_text(yaml.safe_dump(rule["spec"]))
    for rules in (RULES, component):
        done = promtool("check", "rules", str(rules))
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"SUCCESS: {len(WANTED)} rules found" in done.stdout


def test_the_alerts_are_the_ones_asked_for() -> None:
    assert alerts() == WANTED


def test_the_alert_unit_tests_pass() -> None:
    done = promtool("test", "rules", str(UNIT_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_alert_is_tested_firing_and_quiet() -> None:
    cases = [
        case
        for test in yaml.safe_load(UNIT_TESTS.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    ]
    firing = {case["alertname"] for case in cases if case["exp_alerts"]}
    quiet = {case["alertname"] for case in cases if not case["exp_alerts"]}
    assert firing == alerts()
    assert quiet == alerts()
