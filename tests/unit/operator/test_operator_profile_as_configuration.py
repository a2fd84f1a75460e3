"""`simulate --config` takes a SchedulerProfile: the runtime reads it as the configuration the
operator renders for it (the same profiles, resolved alike), for every sample."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from scheduler_operator.parsing import parse
from scheduler_operator.render.config import scheduler_configuration

from scheduler_runtime.config import load_configuration
from scheduler_runtime.config.schedulerprofile import configuration_of, is_scheduler_profile

SAMPLES = sorted((Path(__file__).parents[3] / "manifests" / "samples").glob("*.yaml"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.stem)
def test_the_runtime_reads_a_sample_as_the_operator_configures_it(sample: Path) -> None:
    doc = yaml.safe_load(sample.read_text())
    assert is_scheduler_profile(doc)
    rendered = load_configuration(scheduler_configuration(parse(doc)))
    read = load_configuration(configuration_of(doc))
    assert read.profiles == rendered.profiles
    assert read.scheduler_names == rendered.scheduler_names
