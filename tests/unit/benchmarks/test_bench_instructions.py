"""The instruction guard's logic, without valgrind: what counts as a regression, the refusal
to compare counts taken with another Python or valgrind, the table, and the workloads'
split into warm-up and measured pods."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from benchmarks import instructions
from benchmarks.instructions import BaselineMismatchError, Callgrind, check_versions, regressions


def test_a_workload_grown_more_than_five_percent_is_a_regression() -> None:
    baseline = {"basic": 1000, "mixed": 2000, "gone": 10}
    now = {"basic": 1050, "mixed": 2110}  # +5.0% passes, +5.5% does not

    grown = regressions(baseline, now)

    assert len(grown) == 1
    assert grown[0].startswith("mixed: 2110 instructions per pod, +5.5% over")


def test_fewer_instructions_are_no_regression() -> None:
    assert regressions({"basic": 1000}, {"basic": 500}) == []


@pytest.mark.parametrize(
    "now",
    [{"python": "3.12", "valgrind": "3.19.0"}, {"python": "3.11", "valgrind": "4.0.0"}],
)
def test_counts_of_another_python_minor_or_valgrind_major_are_not_compared(
    now: dict[str, str],
) -> None:
    baseline = {"python": "3.11", "valgrind": "3.19.0", "workloads": {}}
    with pytest.raises(BaselineMismatchError, match="make instructions-baseline"):
        check_versions(baseline, now)


def test_another_valgrind_minor_compares() -> None:
    check_versions(
        {"python": "3.11", "valgrind": "3.19.0"}, {"python": "3.11", "valgrind": "3.22.0"}
    )


def test_the_table_shows_baseline_now_and_change() -> None:
    text = instructions.table({"basic": 1000}, {"basic": 900, "new": 5})
    lines = text.splitlines()
    assert lines[0].split() == ["workload", "baseline", "now", "change"]
    assert lines[1].split() == ["basic", "1000", "900", "-10.0%"]
    assert lines[2].split() == ["new", "-", "5", "-"]


def test_client_requests_outside_valgrind_do_nothing() -> None:
    counter = Callgrind()
    assert counter.request(Callgrind.DUMP_STATS) == 0
    counter.start()
    counter.stop()


@pytest.mark.parametrize("workload", instructions.WORKLOADS)
def test_every_workload_measures_whole_pods_after_its_warm_up(
    workload: str, tmp_path: Path
) -> None:
    setup, warm, measured = orjson.loads(instructions._state_file(tmp_path, workload).read_bytes())
    pods = [o for o in measured if o.get("kind") == "Pod"]
    assert len([o for o in warm if o.get("kind") == "Pod"]) == instructions.WARM_UP
    assert len(pods) == instructions.MEASURED
    assert len([o for o in setup if o.get("kind") == "Node"]) == instructions.NODES


def test_the_live_replay_binds_every_pod(tmp_path: Path) -> None:
    state = instructions._state_file(tmp_path, instructions.LIVE)
    assert (
        instructions.run(instructions.LIVE, state) == instructions.WARM_UP + instructions.MEASURED
    )
