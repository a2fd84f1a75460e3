"""The upgrade kit's pure parts: the gate table diff, the default plugin diff, the source diff,
the junit summary and the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.gangs import workload_cluster_name
from benchmarks.upgrade_kit import (
    APIVersions,
    GateChange,
    ParityResult,
    PluginDiff,
    Step,
    _feature_gates_tool,
    cluster_name,
    diff_gates,
    diff_sources,
    format_api_versions,
    format_gates,
    format_parity,
    format_plugins,
    format_report,
    judge_env,
    kit_clusters,
    load_table,
    main,
    parse_junit,
    plugins_from_json,
    scheduler_gates,
    unavailable_modules,
)
from scheduler_runtime.config.kube_feature_gates import v1_37

OLD = (
    ("Alpha", False, "ALPHA", False, ()),
    ("Gone", True, "GA", True, ()),
    ("Sched", False, "BETA", False, ()),
    ("Zeta", True, "BETA", False, ()),
)
NEW = (
    ("Alpha", True, "BETA", False, ()),
    ("Fresh", False, "ALPHA", False, ("Sched",)),
    ("Sched", True, "GA", True, ()),
    ("Zeta", True, "BETA", False, ("Alpha",)),
)


def test_gate_diff_names_each_addition_removal_and_change_scheduling_first() -> None:
    diff = diff_gates(OLD, NEW, {"Sched"})
    assert [gate[0] for gate in diff.added] == ["Fresh"]
    assert [gate[0] for gate in diff.removed] == ["Gone"]
    assert diff.changed == (
        GateChange("Sched", "default", False, True),
        GateChange("Sched", "stage", "BETA", "GA"),
        GateChange("Sched", "locked", False, True),
        GateChange("Alpha", "default", False, True),
        GateChange("Alpha", "stage", "ALPHA", "BETA"),
        GateChange("Zeta", "dependencies", (), ("Alpha",)),
    )


def test_gate_diff_of_a_table_with_itself_is_empty() -> None:
    diff = diff_gates(v1_37.GATES, v1_37.GATES, ())
    assert (diff.added, diff.removed, diff.changed) == ((), (), ())
    assert format_gates(diff) == [
        "0 added, 0 removed, 0 changed (* = read by pkg/scheduler, listed first)"
    ]


def test_gate_report_lists_scheduling_gates_first_and_cuts_the_rest() -> None:
    lines = format_gates(diff_gates(OLD, NEW, {"Sched"}), limit=4)
    assert lines[0] == "1 added, 1 removed, 3 changed (* = read by pkg/scheduler, listed first)"
    assert lines[1:4] == [
        "  ~ * Sched: default False -> True",
        "  ~ * Sched: stage BETA -> GA",
        "  ~ * Sched: locked False -> True",
    ]
    assert lines[4] == "  +   Fresh: default=False ALPHA needs Sched"
    assert lines[-1] == "  ... 4 more (not scheduling)"


def test_a_generated_table_is_read_back_without_importing_it() -> None:
    text = Path(v1_37.__file__).read_text()
    assert load_table(text) == v1_37.GATES


def test_scheduler_gates_are_those_read_by_non_test_files(tmp_path: Path) -> None:
    plugin = tmp_path / "pkg" / "scheduler" / "framework"
    plugin.mkdir(parents=True)
    (plugin / "a.go").write_text("if feature.DefaultFeatureGate.Enabled(features.Sched) {}\n")
    (plugin / "b.go").write_text("x := genericfeatures.Alpha; y := features.Unknown\n")
    (plugin / "a_test.go").write_text("features.Zeta\n")
    assert scheduler_gates(tmp_path, ("Sched", "Alpha", "Zeta")) == {"Sched", "Alpha"}


def test_default_plugins_from_kube_schedulers_json() -> None:
    document = {
        "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "Fit", "weight": 2}]},
        "reserve": {"disabled": [{"name": "DefaultPreemption"}]},
    }
    parsed = plugins_from_json(document)
    assert parsed.new == (("PrioritySort", 0), ("Fit", 2))
    assert parsed.other_points == {"reserve": {"disabled": ("DefaultPreemption",)}}


def test_plugin_diff_reports_additions_weights_and_order() -> None:
    diff = PluginDiff(
        old=(("A", 0), ("B", 1), ("C", 2)),
        new=(("B", 3), ("A", 0), ("D", 1)),
        other_points={"reserve": {"disabled": ("A",)}},
    )
    assert (diff.added, diff.removed, diff.reordered) == (["D"], ["C"], True)
    assert format_plugins(diff) == [
        "added: D",
        "removed: C",
        "weight of B: 1 -> 3",
        "known: A B(1) C(2)",
        "new:   B(3) A D(1)",
        "outside multiPoint: reserve.disabled = A",
    ]


def test_plugin_diff_of_the_same_defaults_says_so() -> None:
    same = PluginDiff(old=(("A", 0), ("B", 1)), new=(("A", 0), ("B", 1)))
    assert format_plugins(same) == ["multiPoint: the same plugins, weights and order"]
    gated = PluginDiff(old=same.old, new=same.new, other_points={"reserve": {"disabled": ("A",)}})
    assert format_plugins(gated) == [
        "multiPoint: the same plugins, weights and order",
        "outside multiPoint: reserve.disabled = A",
    ]
    moved = PluginDiff(old=(("A", 0), ("B", 1)), new=(("B", 1), ("A", 0)))
    assert moved.reordered
    assert format_plugins(moved) == ["known: A B(1)", "new:   B(1) A"]


def test_source_diff_counts_files_lines_and_plugin_packages(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for root, files in (
        (old, {"s.go": "a\nb\nc\n", "gone.go": "x\ny\n", "framework/plugins/fit/f.go": "f\n"}),
        (new, {"s.go": "a\nB\nc\nd\n", "framework/plugins/gang/g.go": "g\n"}),
    ):
        for name, text in files.items():
            path = root / "pkg" / "scheduler" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    diff = diff_sources(old, new)
    assert (diff.plugins_added, diff.plugins_removed) == (("gang",), ("fit",))
    assert (diff.files_changed, diff.files_added, diff.files_removed) == (1, 1, 2)
    assert (diff.lines_added, diff.lines_removed) == (3, 4)


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.integration.test_runtime_parity" name="test_ok[1.5]" time="1"/>
<testcase classname="tests.integration.test_runtime_parity" name="test_bad" time="2">
<failure message="AssertionError: placements differ: pod-a on node-1, upstream node-2&#10;more">
trace</failure></testcase>
<testcase classname="tests.integration.test_gangs_parity" name="test_skip" time="0">
<skipped message="needs root"/></testcase>
</testsuite></testsuites>
"""


def test_junit_results_carry_the_first_line_of_each_failure() -> None:
    results = parse_junit(JUNIT)
    assert results == [
        ParityResult("test_runtime_parity::test_ok[1.5]", "passed"),
        ParityResult(
            "test_runtime_parity::test_bad",
            "failed",
            "placements differ: pod-a on node-1, upstream node-2",
        ),
        ParityResult("test_gangs_parity::test_skip", "skipped", "needs root"),
    ]
    assert format_parity(results) == [
        "1 failed, 1 passed, 1 skipped",
        "  FAIL test_runtime_parity::test_bad: placements differ: pod-a on node-1, upstream node-2",
    ]


def test_api_versions_against_the_known_release() -> None:
    old = APIVersions({"scheduling.k8s.io": ("v1", "v1alpha1"), "resource.k8s.io": ("v1",)})
    new = APIVersions({"scheduling.k8s.io": ("v1", "v1alpha2"), "resource.k8s.io": ("v1",)})
    assert format_api_versions(old, new) == [
        "scheduling.k8s.io: v1, v1alpha2 (was v1, v1alpha1)",
        "resource.k8s.io: v1 (unchanged)",
        "coordination.k8s.io: (not served) (unchanged)",
    ]
    assert format_api_versions(None, new)[0] == "scheduling.k8s.io: v1, v1alpha2"


def test_report_has_a_section_and_a_time_per_step() -> None:
    steps = [Step("feature gates", 12.4, ["0 added"]), Step("binaries", 3.0, error="no proxy")]
    assert format_report("v1.38.0", "v1.37.2", steps) == (
        "Kubernetes v1.38.0 against v1.37.2, the newest release the runtime knows\n\n"
        "== feature gates (12 s)\n0 added\n\n"
        "== binaries (3 s)\nnot done: no proxy\n\n"
        "timings: feature gates 12 s, binaries 3 s\n"
    )


def test_the_report_names_each_module_replaced() -> None:
    replaced = format_report("v1.38.0", "v1.37.2", [], ["a/v7=a/v7@v7.0.0"])
    assert replaced.splitlines()[1] == "built with a/v7 replaced by a/v7@v7.0.0"


def test_a_version_that_is_not_a_release_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["1.38"])
    assert "version '1.38': expected a release such as v1.38.0-beta.0" in capsys.readouterr().err


def test_feature_gates_replace_arguments() -> None:
    tool = _feature_gates_tool()
    assert tool.pairs(("a/b=a/b@v1.0.0",)) == [("a/b", "a/b@v1.0.0")]
    with pytest.raises(SystemExit, match="expected MODULE=MODULE@VERSION"):
        tool.pairs(("a/b@v1",))


def test_a_failed_build_names_the_module_versions_the_proxy_refused() -> None:
    log = (
        "go: downloading k8s.io/api v0.38.0-beta.0\n"
        "\tk8s.io/apiextensions-api/pkg/apis/apiextensions/v1: k8s.io/apiextensions-api@"
        "v0.38.0-beta.0: reading https://proxy.golang.org/k8s.io/apiextensions-api/@v/"
        "v0.38.0-beta.0.zip: 403 Forbidden\n"
        "\tsigs.k8s.io/structured-merge-diff/v7/value: reading https://proxy.golang.org/"
        "sigs.k8s.io/structured-merge-diff/v7/@v/v7.0.1.zip: 403 Forbidden\n"
        "\treading https://proxy.golang.org/k8s.io/apiextensions-api/@v/v0.38.0-beta.0.zip: 403\n"
    )
    assert unavailable_modules(log) == [
        "k8s.io/apiextensions-api@v0.38.0-beta.0",
        "sigs.k8s.io/structured-merge-diff/v7@v7.0.1",
    ]
    assert unavailable_modules("go: downloading k8s.io/api v0.38.0\n") == []


def test_the_kit_deletes_only_its_own_clusters() -> None:
    workload = workload_cluster_name("upkit-1-38-0")
    listed = ["test", "test-1-37-2", "upkit-1-38-0", workload, "upkit-1-38-01", "upkit-1-38-0-wl-x"]
    assert kit_clusters(listed, "upkit-1-38-0") == ["upkit-1-38-0", workload]


def test_a_failure_is_summed_up_by_the_first_item_pytest_says_differs() -> None:
    junit = JUNIT.replace(
        "AssertionError: placements differ: pod-a on node-1, upstream node-2&#10;more",
        "assert [&apos;p-008: upst...ling.&apos;]  == []&#10;  &#10;  Left contains 20 more "
        "items, first extra item: &apos;p-008: upstream refused with &quot;0/50&quot;&apos;",
    )
    failed = [result for result in parse_junit(junit) if result.outcome == "failed"]
    assert failed[0].first_line == "'p-008: upstream refused with \"0/50\"'"


def test_a_release_whose_control_plane_is_built_is_judged_on_its_own() -> None:
    env = {"KUBE_VERSION": "v1.38.0", "GO_REPLACES": ""}
    assert judge_env(env, "v1.38.0", "v1.37.2", whole=True) == env
    assert cluster_name("v1.38.0") == cluster_name("v1.38.0", "v1.38.0") == "upkit-1-38-0"


def test_else_its_kube_scheduler_is_judged_on_the_known_control_plane() -> None:
    """The new kube-scheduler beside the known release's API server: the cluster is named after
    both, so it is never taken for a cluster of either release alone."""
    env = {"KUBE_VERSION": "v1.38.0-beta.0", "GO_REPLACES": "a=b@v1"}
    beside = judge_env(env, "v1.38.0-beta.0", "v1.37.2", whole=False)
    assert beside == {
        "KUBE_VERSION": "v1.37.2",
        "SCHEDULER_VERSION": "v1.38.0-beta.0",
        "GO_REPLACES": "a=b@v1",
    }
    name = cluster_name("v1.37.2", "v1.38.0-beta.0")
    assert name == "upkit-1-37-2-ks-1-38-0-beta-0"
    assert kit_clusters([name, "upkit-1-37-2"], name) == [name]
