"""Quantities as apimachinery's ParseQuantity and String() have them: exact values, upstream's
canonical forms and error messages, and (hypothesis) printing and parsing agree."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_runtime.dra import quantity
from scheduler_runtime.dra.quantity import NANO, Quantity, QuantityError


@pytest.mark.parametrize(
    ("text", "nanos", "canonical"),
    [
        ("0", 0, "0"),
        ("1", NANO, "1"),
        ("1.5", 1_500_000_000, "1500m"),
        ("100m", 100_000_000, "100m"),
        ("1000m", NANO, "1"),
        ("1k", 1000 * NANO, "1k"),
        ("1e3", 1000 * NANO, "1e3"),
        ("1Ki", 1024 * NANO, "1Ki"),
        ("1024Mi", 2**30 * NANO, "1Gi"),
        ("1.5Gi", 3 * 2**29 * NANO, "1536Mi"),
        ("0.5Ki", 512 * NANO, "512"),
        ("80Gi", 80 * 2**30 * NANO, "80Gi"),
        ("-2Ki", -2048 * NANO, "-2Ki"),
        ("1n", 1, "1n"),
        ("0.1n", 1, "1n"),  # rounded up to the smallest unit
        ("+12", 12 * NANO, "12"),
        ("12e6", 12_000_000 * NANO, "12e6"),
    ],
)
def test_parse_and_print(text: str, nanos: int, canonical: str) -> None:
    q = quantity.parse(text)
    assert q.nanos == nanos
    assert str(q) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", quantity.ERR_FORMAT_WRONG),
        ("1x", quantity.ERR_FORMAT_WRONG),
        ("abc", quantity.ERR_FORMAT_WRONG),
        ("1Kib", quantity.ERR_FORMAT_WRONG),
        ("1KiB", quantity.ERR_FORMAT_WRONG),
        ("1iK", quantity.ERR_SUFFIX),
        ("1mm", quantity.ERR_SUFFIX),
        ("1Z", quantity.ERR_FORMAT_WRONG),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as e:
        quantity.parse(text)
    assert str(e.value) == message


def test_integer_views() -> None:
    assert quantity.parse("1.5").as_int64() is None
    assert quantity.parse("1.5").value() == 2
    assert quantity.parse("2k").as_int64() == 2000
    assert Quantity.from_int(3, "BinarySI") == quantity.parse("3")


suffixes = st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "e3", "e-3", "n", "u"])


@given(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.integers(min_value=0, max_value=999),
    suffixes,
)
def test_printed_form_parses_to_the_same_value(whole: int, fraction: int, suffix: str) -> None:
    text = f"{whole}.{fraction:03d}{suffix}" if fraction else f"{whole}{suffix}"
    q = quantity.parse(text)
    again = quantity.parse(str(q))
    assert again.nanos == q.nanos


@given(st.text(alphabet="0123456789.+-eEinumkKMGTP", max_size=12))
def test_any_text_parses_or_fails_with_upstreams_message(text: str) -> None:
    messages = (quantity.ERR_FORMAT_WRONG, quantity.ERR_SUFFIX, quantity.ERR_NUMERIC)
    try:
        q = quantity.parse(text)
    except QuantityError as e:
        message = str(e)
    else:
        message = ""
        assert quantity.parse(str(q)).nanos == q.nanos
    assert not message or message in messages
