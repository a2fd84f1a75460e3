"""Properties over arbitrary input: bad input is always a SpecError, render always stays safe."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from scheduler_operator.engines import validate
from scheduler_operator.errors import SpecError
from scheduler_operator.parsing import parse
from scheduler_operator.render import render
from test_operator_render import KINDS, config_of, hostile_profile

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    [
        "schedulerName", "engine", "namespace", "profiles", "replicas", "leaderElection",
        "image", "imagePullPolicy", "resources", "nodeSelector", "tolerations", "affinity",
        "logVerbosity", "featureGates",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(FIELDS, JSON, max_size=4))
def test_any_spec_is_accepted_or_refused_with_a_field(spec: dict[str, Any]) -> None:
    body = {"metadata": {"name": "p", "uid": "u"}, "spec": spec}
    refused: SpecError | None = None
    try:
        profile = parse(body)
        validate(profile)
    except SpecError as error:
        refused = error
    if refused is not None:
        assert refused.path.startswith("spec")
        assert refused.reason
    else:
        assert [o["kind"] for o in render(profile).objects] == KINDS


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
# Escaped, this key is longer than the 1024 characters YAML allows a plain mapping key.
@example("Z\u0315\u033a\u0361" * 100)
def test_any_text_in_any_field_stays_a_value(text: str) -> None:
    rendered = render(hostile_profile(text))
    assert [o["kind"] for o in rendered.objects] == KINDS
    config = config_of(rendered.objects)
    assert config["profiles"][0]["schedulerName"] == text
    assert rendered.objects[-1]["spec"]["template"]["spec"]["containers"][0]["image"] == text
