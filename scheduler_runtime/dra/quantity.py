"""Kubernetes resource quantities as the DRA allocator and the CEL `quantity` library see them
(k8s.io/apimachinery `pkg/api/resource`): parsed once into an exact integer count of
nano-units (every Quantity is a multiple of 1n: ParseQuantity rounds smaller values up), plus
the format that decides how it prints (`1Gi`, `1500m`, `1e3`).

Printing follows `CanonicalizeBytes`, so a consumed capacity written into a claim's
`status.allocation` reads as the API server would serialize it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

NANO = 10**9
_INT64_MAX = 2**63 - 1
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15}
_DECIMAL_SUFFIXES["E"] = 18
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NAMES = {exponent: name for name, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_NAMES = {exponent: name for name, exponent in _BINARY_SUFFIXES.items()}

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """A string that ParseQuantity refuses; the message is upstream's."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact quantity: `nanos` units of 1e-9, printed in `format`."""

    nanos: int
    format: Format = "DecimalSI"

    def __str__(self) -> str:
        return _canonical(self.nanos, self.format)

    def __lt__(self, other: Quantity) -> bool:
        return self.nanos < other.nanos

    def __le__(self, other: Quantity) -> bool:
        return self.nanos <= other.nanos

    def __gt__(self, other: Quantity) -> bool:
        return self.nanos > other.nanos

    def __ge__(self, other: Quantity) -> bool:
        return self.nanos >= other.nanos

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.nanos == other.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def plus(self, other: Quantity) -> Quantity:
        """Go's `q.Add(other)`: the receiver's format wins, unless the receiver is zero."""
        return Quantity(self.nanos + other.nanos, self.format if self.nanos else other.format)

    def minus(self, other: Quantity) -> Quantity:
        return Quantity(self.nanos - other.nanos, self.format if self.nanos else other.format)

    def sign(self) -> int:
        return (self.nanos > 0) - (self.nanos < 0)

    def as_int64(self) -> int | None:
        """`AsInt64`: the integer value when exact and within int64, else None."""
        whole, rest = divmod(self.nanos, NANO)
        if rest or not -(2**63) <= whole <= _INT64_MAX:
            return None
        return whole

    def value(self) -> int:
        """`Value()`: rounded up to an integer (away from zero for negative values, as Go does)."""
        whole, rest = divmod(abs(self.nanos), NANO)
        whole += 1 if rest else 0
        return whole if self.nanos >= 0 else -whole

    def approximate_float(self) -> float:
        return self.nanos / NANO

    @classmethod
    def from_int(cls, value: int, fmt: Format = "DecimalSI") -> Quantity:
        return cls(value * NANO, fmt)


def parse(text: str) -> Quantity:
    """`resource.ParseQuantity`, cached: the same strings recur in every slice."""
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, "DecimalSI")
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    digits = int(num + denom) if (num + denom) else 0
    scale = -len(denom)
    if base == 10:
        scale += exponent
        multiplier = 1
    else:
        multiplier = 1 << exponent
    nanos = _to_nanos(digits * multiplier, scale)
    if fmt == "BinarySI" and nanos > _INT64_MAX * NANO:
        nanos = _INT64_MAX * NANO  # ParseQuantity caps binary quantities at int64
    if fmt == "BinarySI" and 0 < nanos < NANO:
        fmt = "DecimalSI"  # below 1, binary would round: upstream switches to decimal
    return Quantity(nanos if positive else -nanos, fmt)


def _to_nanos(unscaled: int, scale: int) -> int:
    """value = unscaled * 10**scale, rounded up (away from zero) to a multiple of 1e-9."""
    shift = scale + 9
    if shift >= 0:
        return int(unscaled * 10**shift)
    whole, rest = divmod(unscaled, 10**-shift)
    return int(whole + (1 if rest else 0))


def _split(text: str) -> tuple[bool, str, str, str]:
    """parseQuantityString: sign, numerator (no leading zeros), fraction digits, suffix."""
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
        if body and all(c in _DIGITS for c in body):
            return 10, int(rest), "DecimalExponent"
    raise QuantityError(ERR_SUFFIX)


def _canonical(nanos: int, fmt: Format) -> str:
    """`Quantity.String()` for a quantity without a cached string (CanonicalizeBytes)."""
    if nanos == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 * NANO < nanos < 1024 * NANO or nanos % NANO):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        amount, exponent = nanos // NANO, 0
        while amount % 1024 == 0:
            amount //= 1024
            exponent += 10
        return f"{amount}{_BINARY_NAMES.get(exponent, '')}"
    amount, exponent = nanos, -9
    while amount % 10 == 0:
        amount //= 10
        exponent += 1
    while exponent % 3:
        amount *= 10
        exponent -= 1
    if fmt == "DecimalSI" and exponent in _DECIMAL_NAMES:
        return f"{amount}{_DECIMAL_NAMES[exponent]}"
    return f"{amount}e{exponent}" if exponent else str(amount)


__all__ = ["NANO", "Format", "Quantity", "QuantityError", "parse"]
