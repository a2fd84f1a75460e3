"""Quantities as apimachinery's ParseQuantity and String() have them: exact values, upstream's
canonical forms and error messages, and (hypothesis) printing and parsing agree."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_runtime.framework import quantity
from scheduler_runtime.framework.quantity import MAX_AMOUNT, NANO, Quantity, QuantityError, amount


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
        assert quantity.parse(str(q)) == q  # the same value, however large
    assert not message or message in messages


@pytest.mark.parametrize(
    ("text", "printed", "sign"),
    [
        ("1e999999999", "1e999999999", 1),
        ("-25e2147483647", "-250e2147483646", -1),
        ("1" + "0" * 2000, "100e1998", 1),
        ("7e2147483648", "1e-9", 1),  # the exponent wraps in int32, as Go's does
    ],
)
def test_a_huge_exponent_parses_without_building_the_number(
    text: str, printed: str, sign: int
) -> None:
    q = quantity.parse(text)
    assert (str(q), q.sign(), q.as_int64()) == (printed, sign, None)


def test_a_quantity_too_large_to_compute_with_is_refused_not_built() -> None:
    """Go compares `1e9999999` with 1 in 16 s and `1e999999999` never: here an error."""
    huge = quantity.parse("1e999999999")
    assert huge.approximate_float() == float("inf")
    assert quantity.parse("-1e400").approximate_float() == float("-inf")
    message = 'quantity "1e999999999" has more than 1000 digits: too large to compare or compute'
    for operation in (
        lambda: huge > quantity.parse("1"),
        lambda: huge.plus(quantity.parse("1")),
        huge.value,
    ):
        with pytest.raises(QuantityError, match=message):
            operation()
    assert huge == quantity.parse("10e999999998")
    assert huge != quantity.parse("1e999")
    # 1000 digits before the point still compute, exactly.
    assert quantity.parse("1e999") > quantity.parse("999e996")
    assert quantity.parse("1e999").plus(quantity.parse("1")).nanos == (10**999 + 1) * NANO


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("1e-999999999", 1),  # rounded up to 1n without dividing by 10^999999999
        ("0." + "0" * 998 + "5", 1),
        ("0e999999999", 0),
        ("1e-9", 1),
        ("15e-10", 2),
    ],
)
def test_tiny_quantities_round_up_to_one_nano_unit(text: str, nanos: int) -> None:
    assert quantity.parse(text).nanos == nanos


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1e99999999999999999999", quantity.ERR_SUFFIX),  # beyond int64: ParseInt fails
        ("1e" + "9" * 5000, quantity.ERR_SUFFIX),
        ("1" * 1001, quantity.ERR_TOO_MANY_DIGITS),
    ],
)
def test_exponents_beyond_int64_and_endless_digits_are_refused(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as e:
        quantity.parse(text)
    assert str(e.value) == message


def test_the_schedulers_amounts_come_from_the_same_parser() -> None:
    assert amount("cpu", "1e999999999") == amount("memory", "1e999") == MAX_AMOUNT
    assert amount("cpu", "1.5") == 1500
    assert amount("memory", "1Ki") == 1024
    with pytest.raises(QuantityError, match="the exponent is out of range"):
        amount("memory", "1e" + "9" * 5000)
    with pytest.raises(QuantityError, match="invalid quantity '1x': quantities must match"):
        amount("memory", "1x")
