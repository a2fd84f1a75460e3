"""Kubernetes resource quantities (k8s.io/apimachinery `pkg/api/resource`), one type for the
whole runtime: `parse` is ParseQuantity, a `Quantity` an exact count of nano-units (every
quantity is a multiple of 1n: ParseQuantity rounds smaller values up) plus the format that
decides how it prints (`1Gi`, `1500m`, `1e3`, as `CanonicalizeBytes` prints them, so a consumed
capacity written into a claim reads as the API server would serialize it). `amount` gives the
scheduler's integer amounts: milli-CPU and whole units (bytes), rounded up like Go's
`Quantity.MilliValue()` / `Quantity.Value()`.

Bounds: the exponent is an int32 (Go wraps it), and a quantity is kept as digits and a decimal
shift, never built in full, like Go's inf.Dec. Go then compares or adds such a quantity by
building it (`1e9999999` takes 16 s to compare with 1, `1e999999999` never ends); here a
quantity with more than MAX_DIGITS digits before the point parses, prints and has a sign, and
comparing or adding it raises QuantityError. More than MAX_DIGITS significant digits are
refused when parsing.

For the scheduler's amounts, within what the API server takes: a negative quantity is refused
(as the API server refuses it in a pod or a node), and so is an exponent beyond int32 (the API
server never answers a request holding one). The API server stores quantities far beyond int64
(1e999, say), which upstream's kube-scheduler reads as meaningless int64 values; here anything
above MAX_AMOUNT counts as MAX_AMOUNT."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

NANO: Final = 10**9
# Digits a quantity may have before the decimal point and still be compared or added (1e999
# has 1000), and significant digits a quantity may be written with. Far beyond any resource,
# and small enough that every operation on such a number takes microseconds.
MAX_DIGITS: Final = 1000
# 8 PiB of memory, 9 billion CPUs: more than any node has, and small enough that the requests
# of a node's pods summed stay far within int64.
MAX_AMOUNT: Final = 2**53

_INT64_MAX: Final = 2**63 - 1
_BINARY_CAP: Final = _INT64_MAX * NANO  # ParseQuantity caps binary quantities at int64
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15}
_DECIMAL_SUFFIXES["E"] = 18
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NAMES = {exponent: name for name, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_NAMES = {exponent: name for name, exponent in _BINARY_SUFFIXES.items()}
_EXPONENT: Final = re.compile(r"[eE]([+-]?)([0-9]+)$")
_SIMPLE: Final = re.compile(r"([0-9]+)([numkMGTPE]|[KMGTPE]i)?")

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_TOO_MANY_DIGITS = f"quantities must not have more than {MAX_DIGITS} significant digits"


class QuantityError(ValueError):
    """A quantity Kubernetes would not accept (upstream's message where it has one), or one
    too large to compute with."""


@dataclass(frozen=True, slots=True, eq=False)
class Quantity:
    """`coefficient` x 10^`shift` nano-units, printed in `format`. `shift` is 0 (the exact
    count of nano-units) unless the quantity has more than MAX_DIGITS digits before the
    point; then the coefficient has no trailing zero."""

    coefficient: int
    format: Format = "DecimalSI"
    shift: int = 0

    @property
    def nanos(self) -> int:
        """The exact count of nano-units; QuantityError for a quantity too large to compute
        with (Go builds it, taking minutes or forever)."""
        if self.shift:
            raise QuantityError(
                f'quantity "{self}" has more than {MAX_DIGITS} digits: too large to compare or '
                "compute with"
            )
        return self.coefficient

    def __str__(self) -> str:
        return _canonical(self.coefficient, self.shift, self.format)

    def __lt__(self, other: Quantity) -> bool:
        return self.nanos < other.nanos

    def __le__(self, other: Quantity) -> bool:
        return self.nanos <= other.nanos

    def __gt__(self, other: Quantity) -> bool:
        return self.nanos > other.nanos

    def __ge__(self, other: Quantity) -> bool:
        return self.nanos >= other.nanos

    def __eq__(self, other: object) -> bool:
        """The same value, whatever the format (as Go's Cmp == 0)."""
        if not isinstance(other, Quantity):
            return False
        return self.coefficient == other.coefficient and self.shift == other.shift

    def __hash__(self) -> int:
        return hash((self.coefficient, self.shift))

    def plus(self, other: Quantity) -> Quantity:
        """Go's `q.Add(other)`: the receiver's format wins, unless the receiver is zero."""
        return Quantity(self.nanos + other.nanos, self.format if self.nanos else other.format)

    def minus(self, other: Quantity) -> Quantity:
        return Quantity(self.nanos - other.nanos, self.format if self.nanos else other.format)

    def sign(self) -> int:
        return (self.coefficient > 0) - (self.coefficient < 0)

    def as_int64(self) -> int | None:
        """`AsInt64`: the integer value when exact and within int64, else None."""
        if self.shift:
            return None
        whole, rest = divmod(self.coefficient, NANO)
        if rest or not -(2**63) <= whole <= _INT64_MAX:
            return None
        return whole

    def value(self) -> int:
        """`Value()`: rounded up to an integer (away from zero for negative values, as Go does)."""
        nanos = self.nanos
        whole, rest = divmod(abs(nanos), NANO)
        whole += 1 if rest else 0
        return whole if nanos >= 0 else -whole

    def approximate_float(self) -> float:
        """`AsApproximateFloat64`: infinite beyond the range of a float, as in Go."""
        try:
            return self.coefficient * 10.0**self.shift / NANO if self.shift else self.nanos / NANO
        except OverflowError:
            return float("inf") if self.coefficient > 0 else float("-inf")

    @classmethod
    def from_int(cls, value: int, fmt: Format = "DecimalSI") -> Quantity:
        return cls(value * NANO, fmt)


@lru_cache(maxsize=4096)
def parse(text: str) -> Quantity:
    """`resource.ParseQuantity`, cached: the same strings recur in every slice and pod."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, "DecimalSI")
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    significant = (num + denom).lstrip("0")
    if not significant:
        return Quantity(0, fmt)
    digits = significant.rstrip("0")
    if len(digits) > MAX_DIGITS:
        raise QuantityError(ERR_TOO_MANY_DIGITS)
    # The value is int(digits) x multiplier x 10^(shift - 9), that is, in nano-units, x 10^shift.
    shift = len(significant) - len(digits) - len(denom) + 9
    multiplier = 1
    if base == 10:
        shift += exponent
    else:
        multiplier = 1 << exponent
    if len(digits) + shift > MAX_DIGITS + 9:
        quantity = _large(int(digits) * multiplier, shift, fmt)
    else:
        nanos = _to_nanos(int(digits) * multiplier, shift)
        if fmt == "BinarySI" and nanos > _BINARY_CAP:
            nanos = _BINARY_CAP
        if fmt == "BinarySI" and nanos < NANO:
            fmt = "DecimalSI"  # below 1, binary would round: upstream switches to decimal
        quantity = Quantity(nanos, fmt)
    if positive:
        return quantity
    return Quantity(-quantity.coefficient, quantity.format, quantity.shift)


_INT64_FACTORS: Final = 18  # maxInt64Factors: digits an int64Amount surely holds


def int64_amount(text: str) -> tuple[int, int] | None:
    """How ParseQuantity's fast path keeps `text`, which `parse` must accept: an int64 `value`
    x 10^`scale` as written ("1500m" is 1500 x 10^-3, "2k" 2 x 10^3), which Go's `%v` of a
    Quantity prints; None where Go keeps an inf.Dec instead (too many digits, a scale below
    nano, a fraction of a binary suffix, an int64 overflow)."""
    if text == "0":
        return 0, 0
    positive, num, denom, suffix = _split(text)
    base, exponent, _ = _interpret(suffix)
    if base == 2:
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        if denom or precision < 0:
            return None
        value, scale = int(num) << exponent, 0
    else:
        if _INT64_FACTORS - len(num) - len(denom) < 0:
            return None
        value, scale = int(num + denom), exponent - len(denom)
        if scale < -9:
            return None
    if value > _INT64_MAX:
        return None
    return (value if positive else -value), scale


def _large(coefficient: int, shift: int, fmt: Format) -> Quantity:
    """A quantity beyond MAX_DIGITS digits, kept as digits and a shift (binary ones are capped
    at int64 as ParseQuantity caps them, so never that large)."""
    if fmt == "BinarySI":
        return Quantity(_BINARY_CAP, fmt)
    while coefficient % 10 == 0:
        coefficient //= 10
        shift += 1
    return Quantity(coefficient, fmt, shift)


def _to_nanos(unscaled: int, shift: int) -> int:
    """unscaled x 10^shift, rounded up to a whole number; a positive value too small for 1n is
    1n, without dividing by a huge power of ten."""
    if shift >= 0:
        return unscaled * int(10**shift)
    if unscaled.bit_length() < -shift * 3:  # unscaled < 8^-shift < 10^-shift
        return 1
    whole, rest = divmod(unscaled, int(10**-shift))
    return whole + (1 if rest else 0)


def _split(text: str) -> tuple[bool, str, str, str]:
    """parseQuantityString: sign, numerator (no leading zeros), fraction digits, suffix."""
    simple = _SIMPLE.fullmatch(text)  # most quantities: digits and a suffix, scanned at once
    if simple is not None:
        return True, simple[1].lstrip("0") or "0", "", simple[2] or ""
    positive = True
    pos, end = 0, len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        body = rest[1:] if rest[0] in "+-" else rest
        # strconv.ParseInt(rest, 10, 64), then int32(): Go wraps the exponent.
        if body and all(c in _DIGITS for c in body) and len(body.lstrip("0")) <= 19:
            exponent = int(rest)
            if -(2**63) <= exponent <= _INT64_MAX:
                return 10, (exponent + 2**31) % 2**32 - 2**31, "DecimalExponent"
    raise QuantityError(ERR_SUFFIX)


def _canonical(coefficient: int, shift: int, fmt: Format) -> str:
    """`Quantity.String()` for a quantity without a cached string (CanonicalizeBytes)."""
    if coefficient == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 * NANO < coefficient < 1024 * NANO or coefficient % NANO):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        amount, exponent = coefficient // NANO, 0
        while amount % 1024 == 0:
            amount //= 1024
            exponent += 10
        return f"{amount}{_BINARY_NAMES.get(exponent, '')}"
    amount, exponent = coefficient, shift - 9
    while amount % 10 == 0:
        amount //= 10
        exponent += 1
    while exponent % 3:
        amount *= 10
        exponent -= 1
    if fmt == "DecimalSI" and exponent in _DECIMAL_NAMES:
        return f"{amount}{_DECIMAL_NAMES[exponent]}"
    return f"{amount}e{exponent}" if exponent else str(amount)


# ---------------------------------------------------------------------------------------------
# The scheduler's integer amounts.


def amount(resource: str, quantity: str | int | float) -> int:
    """The scheduler's integer amount of `resource`: milli-units for cpu, units otherwise, at
    most MAX_AMOUNT."""
    return _amount(str(quantity), resource == CPU)


@lru_cache(maxsize=4096)
def _amount(text: str, milli: bool) -> int:
    exponent = _EXPONENT.search(text)
    if exponent is not None:
        digits = exponent[2].lstrip("0")
        if len(digits) > 10 or int(exponent[1] + (digits or "0")) not in range(-(2**31), 2**31):
            raise QuantityError(f'Invalid value: "{text}": the exponent is out of range')
    try:
        quantity = parse(text)
    except QuantityError as error:
        raise QuantityError(f"invalid quantity {text!r}: {error}") from None
    if quantity.sign() < 0:
        raise QuantityError(f'Invalid value: "{text}": must be greater than or equal to 0')
    if quantity.shift:
        return MAX_AMOUNT
    unit = 10**6 if milli else NANO
    return min(-(-quantity.coefficient // unit), MAX_AMOUNT)


def resource_list(quantities: dict[str, str | int | float] | None) -> dict[str, int]:
    """A core/v1 ResourceList as integer amounts."""
    if not quantities:
        return {}
    return {name: amount(name, quantity) for name, quantity in quantities.items()}


__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "MAX_AMOUNT",
    "MAX_DIGITS",
    "MEMORY",
    "NANO",
    "PODS",
    "Format",
    "Quantity",
    "QuantityError",
    "amount",
    "int64_amount",
    "parse",
    "resource_list",
]
