"""The Kubernetes CEL environment for device selectors, as k8s.io/dynamic-resource-allocation
v0.36.3 `cel/` builds it (v0.37.2's with `Features.stored_list_types`, for 1.37): the variable
`device` (`driver`, `allowMultipleAllocations`,
`attributes[domain][id]`, `capacity[domain][id]`), the Kubernetes libraries (quantity, semver,
lists, regex, sets, strings, optional types, `cel.bind`), the DRA cost limit and upstream's
compile and runtime error messages.

Parsing, macro expansion and type checking are done by Google's CEL implementation
(`cel-expr-python`, the C++ CEL runtime: its parser is generated from the same grammar as
cel-go's and prints the same diagnostics). The checked tree is then compiled once into Python
closures that evaluate with Kubernetes' semantics: attribute maps that answer an unknown
domain with an empty map, the `kubernetes.Quantity` and `kubernetes.Semver` types, and cel-go's
runtime error texts (`no such key: x`, `operation cancelled: actual cost limit exceeded`).
Regular expressions run on RE2 (linear time, Go's syntax, Go's error texts): selectors are
written by tenants, and a backtracking engine would let one stall the scheduler.

API (what the allocator and the plugin use):
- `Compiler(features).compile(expression) -> CompilationResult`, cached per expression string
  (`Cache`, upstream's `cel.Cache`); a result carries `error` (upstream's text) or evaluates.
- `CompilationResult.device_matches(device_input, deadline=...) -> bool`, raising
  `CelRuntimeError` with upstream's message; `deadline` (a `time.monotonic()` instant) is the
  context upstream passes: comprehensions stop once it has passed (`CelDeadlineError`).
  `device_input(...)` builds a device's variables once; the allocator keeps it on the parsed
  device, so a selector evaluated on many devices never rebuilds them.

Nesting: the C++ parser stops at a depth of 32 (not configurable from Python); cel-go allows
250. A selector it refuses as too deep is parsed by `celparse` (cel-go's grammar and its two
limits, with cel-go's messages) and compiled in slices of at most `_SLICE_LEVELS` levels, each
checked by the C++ checker with the slices below it as variables of their checked types, then
grafted into one tree. Trees are built, walked and evaluated without recursion per node beyond
two Python frames per level.

Known difference: the running cost is counted per evaluated node, not with cel-go's
per-function costs (a 300 x 300 comprehension costs 812,102 here, 721,501 upstream). The limit
(1,000,000) is the same in v0.36 and v0.37; cel-go 0.29 and apiserver v0.37 charge startsWith,
endsWith, the global `matches` and `includes` by size, which a per-node count does not see."""

from __future__ import annotations

import functools
import math
import operator
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Any

from re2 import _re2  # type: ignore[attr-defined]

from scheduler_runtime.dra import celast, celparse
from scheduler_runtime.dra.celast import NULL, Expr, NullValue, Uint
from scheduler_runtime.framework.quantity import Quantity, QuantityError
from scheduler_runtime.framework.quantity import parse as parse_quantity

# resourceapi.CELSelectorExpressionMaxCost, and the list limit of the `includes` function.
SELECTOR_MAX_COST = 1_000_000
MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1


@dataclass(frozen=True, slots=True)
class Features:
    """cel.Features: which optional parts of the environment are on (1.36 defaults)."""

    consumable_capacity: bool = True  # DRAConsumableCapacity (beta, on)
    list_type_attributes: bool = False  # DRAListTypeAttributes (alpha, off)
    # 1.37 (v0.37): the stored-expressions environment ignores the gate and declares the newest
    # device type, so attributes are always dyn and list values always passed; `includes` is
    # the apiserver library's, without v0.36's limit of 48 list values.
    stored_list_types: bool = False
    # The `includes` function, declared from 1.36 (v0.36); 1.35's selectors may not call it.
    includes: bool = True

    @property
    def lists(self) -> bool:
        """Whether attributes may hold lists (dyn attributes, list values passed)."""
        return self.list_type_attributes or self.stored_list_types


class CelRuntimeError(Exception):
    """An evaluation failed; str() is cel-go's message."""


class CelDeadlineError(CelRuntimeError):
    """The evaluation's deadline passed (upstream: its context's, `context deadline exceeded`)."""


class _CostLimitExceededError(Exception):
    """Raised through the evaluator when the cost limit is exceeded (not a CEL error value)."""


@dataclass(frozen=True, slots=True)
class Semver:
    """kubernetes.Semver: a parsed semantic version (github.com/blang/semver/v4)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def compare(self, other: Semver) -> int:
        for a, b in ((self.major, other.major), (self.minor, other.minor)):
            if a != b:
                return 1 if a > b else -1
        if self.patch != other.patch:
            return 1 if self.patch > other.patch else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for mine, theirs in zip(self.pre, other.pre, strict=False):
            c = _compare_pre(mine, theirs)
            if c:
                return c
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def _compare_pre(a: int | str, b: int | str) -> int:
    if isinstance(a, int) != isinstance(b, int):
        return -1 if isinstance(a, int) else 1
    return (a > b) - (a < b)  # type: ignore[operator]


_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def parse_semver(text: str) -> Semver:  # noqa: PLR0912 (blang/semver Parse, step by step)
    """blang/semver's Parse, with its error messages."""
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major = _semver_number(parts[0], "major", "Major")
    minor = _semver_number(parts[1], "minor", "Minor")
    rest, build, pre = parts[2], [], []
    if "+" in rest:
        rest, _, tail = rest.partition("+")
        build = tail.split(".")
    if "-" in rest:
        rest, _, tail = rest.partition("-")
        pre = tail.split(".")
    patch = _semver_number(rest, "patch", "Patch")
    pre_parsed: list[int | str] = []
    for item in pre:
        if not item:
            raise ValueError("Prerelease is empty")
        if set(item) <= _NUMBERS:
            if len(item) > 1 and item[0] == "0":
                raise ValueError(
                    f"Numeric PreRelease version must not contain leading zeroes {_goq(item)}"
                )
            pre_parsed.append(int(item))
        elif set(item) <= _ALPHANUM:
            pre_parsed.append(item)
        else:
            raise ValueError(f"Invalid character(s) found in prerelease {_goq(item)}")
    for item in build:
        if not item:
            raise ValueError("Build meta data is empty")
        if not set(item) <= _ALPHANUM:
            raise ValueError(f"Invalid character(s) found in build meta data {_goq(item)}")
    return Semver(major, minor, patch, tuple(pre_parsed), tuple(build))


def _semver_number(text: str, lower: str, upper: str) -> int:
    if not set(text) <= _NUMBERS:
        raise ValueError(f"Invalid character(s) found in {lower} number {_goq(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{upper} number must not contain leading zeroes {_goq(text)}")
    if not text or int(text) > UINT64_MAX:
        reason = "invalid syntax" if not text else "value out of range"
        raise ValueError(f"strconv.ParseUint: parsing {_goq(text)}: {reason}")
    return int(text)


def _normalize_semver(text: str) -> Semver:
    """The semver library's normalizeAndParse (a `v` prefix, short versions, leading zeros)."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            trimmed = part.lstrip("0")
            if not trimmed or trimmed[0] not in _NUMBERS:
                trimmed = "0" + trimmed
            parts[i] = trimmed
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse_semver(".".join(parts))


def _goq(text: str) -> str:
    """Go's %q for the plain strings these messages quote."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Optional:
    """CEL optional values (`optional.of(x)`, `m[?k]`)."""

    __slots__ = ("value",)
    _EMPTY: Any = object()

    def __init__(self, value: Any = _EMPTY) -> None:
        self.value = value

    @property
    def present(self) -> bool:
        return self.value is not Optional._EMPTY


class DefaultMap(dict[str, Any]):
    """A map whose lookups of unknown keys yield `default` (upstream's mapper with default)."""

    __slots__ = ("default",)

    def __init__(self, items: Mapping[str, Any], default: Any) -> None:
        super().__init__(items)
        self.default = default


_EMPTY_MAP: dict[str, Any] = {}


def _err(message: str) -> CelRuntimeError:
    return CelRuntimeError(message)


_NO_OVERLOAD = "no such overload"


# ---------------------------------------------------------------------------------------------
# Values: equality, ordering, names.


def _is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is Uint


def cel_equal(a: Any, b: Any) -> bool:  # noqa: PLR0911 (one case per CEL type)
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if isinstance(a, DefaultMap):
        ta = dict
    if isinstance(b, DefaultMap):
        tb = dict
    if ta is not tb:
        return False
    if ta is list:
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict:
        return len(a) == len(b) and all(k in b and cel_equal(v, b[k]) for k, v in a.items())
    if ta is Semver:
        return bool(a.compare(b) == 0)
    if ta is Optional:
        if a.present != b.present:
            return False
        return not a.present or cel_equal(a.value, b.value)
    return bool(a == b)


def _compare(a: Any, b: Any) -> int:
    ta, tb = type(a), type(b)
    if (ta is bool and tb is bool) or (ta is str and tb is str) or (ta is bytes and tb is bytes):
        return int((a > b) - (a < b))
    if _is_num(a) and _is_num(b) and ta is not bool and tb is not bool:
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return 2  # NaN: every ordering is false
        return int((a > b) - (a < b))
    raise _err(_NO_OVERLOAD)


_GO_TYPES = {bool: "types.Bool", int: "types.Int", Uint: "types.Uint", float: "types.Double"}
_GO_TYPES.update({str: "types.String", bytes: "types.Bytes", NullValue: "types.Null"})
_GO_TYPES.update({Semver: "cel.Semver", Quantity: "cel.Quantity", Optional: "*types.Optional"})


def _cel_type(v: Any) -> str:
    t = type(v)
    names = {bool: "bool", int: "int", Uint: "uint", float: "double", str: "string"}
    names.update({bytes: "bytes", NullValue: "null_type", list: "list", dict: "map"})
    names.update({DefaultMap: "map", Quantity: "kubernetes.Quantity", Semver: "kubernetes.Semver"})
    names[Optional] = "optional_type"
    return names.get(t, "dyn")


def _format_key(key: Any) -> str:
    if type(key) is bool:
        return "true" if key else "false"
    return str(key)


# ---------------------------------------------------------------------------------------------
# Arithmetic.


def _int_result(v: int) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise _err("integer overflow")
    return v


def _uint_result(v: int) -> Uint:
    if not 0 <= v <= UINT64_MAX:
        raise _err("unsigned integer overflow")
    return Uint(v)


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is not tb and not (ta in (dict, DefaultMap) and tb in (dict, DefaultMap)):
        raise _err(_NO_OVERLOAD)
    if ta is int:
        return _int_result(a + b)
    if ta is Uint:
        return _uint_result(a + b)
    if ta in (float, str, bytes, list):
        return a + b
    raise _err(_NO_OVERLOAD)


def _sub(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is not type(b):
        raise _err(_NO_OVERLOAD)
    if ta is int:
        return _int_result(a - b)
    if ta is Uint:
        return _uint_result(a - b)
    if ta is float:
        return a - b
    raise _err(_NO_OVERLOAD)


def _mul(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is not type(b):
        raise _err(_NO_OVERLOAD)
    if ta is int:
        return _int_result(a * b)
    if ta is Uint:
        return _uint_result(a * b)
    if ta is float:
        return a * b
    raise _err(_NO_OVERLOAD)


def _div(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is not type(b):
        raise _err(_NO_OVERLOAD)
    if ta is float:
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan
        return a / b
    if ta not in (int, Uint):
        raise _err(_NO_OVERLOAD)
    if b == 0:
        raise _err("division by zero")
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    return _int_result(q) if ta is int else Uint(q)


def _mod(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is not type(b) or ta not in (int, Uint):
        raise _err(_NO_OVERLOAD)
    if b == 0:
        raise _err("modulus by zero")
    if ta is int and a == INT64_MIN and b == -1:
        raise _err("integer overflow")  # Go's MinInt64 % -1 would trap: cel-go checks first
    r = abs(a) % abs(b) * (1 if a >= 0 else -1)
    return r if ta is int else Uint(r)


def _neg(a: Any) -> Any:
    if type(a) is int:
        return _int_result(-a)
    if type(a) is float:
        return -a
    raise _err(_NO_OVERLOAD)


def _not(a: Any) -> bool:
    if type(a) is not bool:
        raise _err(_NO_OVERLOAD)
    return not a


def _in(item: Any, container: Any) -> bool:
    if type(container) is list:
        return any(cel_equal(item, x) for x in container)
    if isinstance(container, dict):
        if item in container:
            return True
        if _is_num(item) and type(item) is not bool:
            return any(_is_num(k) and type(k) is not bool and k == item for k in container)
        return False
    raise _err(_NO_OVERLOAD)


def _index(container: Any, key: Any) -> Any:
    if type(container) is list:
        if type(key) is float:
            if key != int(key):
                raise _err("unsupported index value")
            key = int(key)
        if type(key) not in (int, Uint):
            raise _err(_NO_OVERLOAD)
        if not 0 <= key < len(container):
            raise _err(f"index out of bounds: {key}")
        return container[key]
    if isinstance(container, dict):
        if type(key) in (int, str, Uint, bool) or _is_num(key):
            try:
                return container[key]
            except (KeyError, TypeError):
                pass
            if isinstance(container, DefaultMap):
                return container.default
            raise _err(f"no such key: {_format_key(key)}")
        raise _err(f"unsupported key type: {_cel_type(key)}")
    raise _err(_NO_OVERLOAD)


def _select(operand: Any, field: str) -> Any:
    if isinstance(operand, dict):
        try:
            return operand[field]
        except KeyError:
            if isinstance(operand, DefaultMap):
                return operand.default
            raise _err(f"no such key: {field}") from None
    raise _err(f"type '{_cel_type(operand)}' does not support field selection")


def _has(operand: Any, field: str) -> bool:
    if isinstance(operand, DefaultMap):
        return True  # upstream's lookup with a default finds every key
    if isinstance(operand, dict):
        return field in operand
    raise _err(f"type '{_cel_type(operand)}' does not support field selection")


# ---------------------------------------------------------------------------------------------
# Functions, by name: member functions get the receiver as first argument.


def _size(v: Any) -> int:
    if type(v) in (str, bytes, list) or isinstance(v, dict):
        return len(v)
    raise _err(_NO_OVERLOAD)


def _str_args(*args: Any) -> None:
    if any(type(a) is not str for a in args):
        raise _err(_NO_OVERLOAD)


# Regular expressions: RE2 (linear time, as Go's regexp that cel-go uses), never a backtracking
# engine, with Go's error texts. Constant patterns are compiled once with the expression, the
# others through a bounded cache. The binding's own C++ layer (`_re2`) is used directly: the
# `re2` module's Python wrapper around it costs four times the match itself.
_RE2_OPTIONS = _re2.RE2.Options()
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.never_capture = True  # only the whole match is ever used
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_REGEX_CACHE_SIZE = 256
# RE2's error codes as Go's regexp/syntax names them.
_GO_REGEXP_ERRORS = {
    "unexpected error": "regexp/syntax: internal error",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
}


class RegexError(Exception):
    """A pattern Go's regexp refuses; str() is Go's message without the `error parsing
    regexp: ` prefix each caller adds in its own way."""


class Regex:
    """A compiled pattern with Go's regexp semantics (leftmost-first, UTF-8 byte offsets)."""

    __slots__ = ("_match",)

    def __init__(self, pattern: str) -> None:
        encoded = pattern.encode("utf-8", "surrogatepass")
        if _has_any_byte_escape(encoded):
            raise RegexError("invalid escape sequence: `\\C`")
        compiled = _re2.RE2(encoded, _RE2_OPTIONS)
        if not compiled.ok():
            raise RegexError(_go_regexp_error(_text(compiled.error()), pattern))
        self._match: Callable[[Any, bytes, int, int], list[tuple[int, int]]] = compiled.Match

    def _span(self, data: bytes, pos: int = 0) -> tuple[int, int]:
        return self._match(_UNANCHORED, data, pos, len(data))[0]

    def search(self, text: str) -> bool:
        return self._span(text.encode("utf-8", "surrogatepass"))[0] >= 0

    def find(self, text: str) -> str:
        data = text.encode("utf-8", "surrogatepass")
        start, stop = self._span(data)
        return data[start:stop].decode("utf-8", "replace") if start >= 0 else ""

    def find_all(self, text: str, limit: int) -> list[str]:
        """Go's FindAllString: an empty match right after a match is skipped."""
        data = text.encode("utf-8", "surrogatepass")
        out: list[str] = []
        pos, prev_end, end = 0, -1, len(data)
        while (limit < 0 or len(out) < limit) and pos <= end:
            start, stop = self._span(data, pos)
            if start < 0:
                break
            accept = True
            if stop == pos:
                accept = start != prev_end
                pos += _utf8_width(data, pos)
            else:
                pos = stop
            prev_end = stop
            if accept:
                out.append(data[start:stop].decode("utf-8", "replace"))
        return out


def _has_any_byte_escape(pattern: bytes) -> bool:
    """RE2 accepts `\\C` (any byte), Go's parser refuses it (outside `\\Q...\\E`)."""
    i, n = 0, len(pattern)
    while i < n - 1:
        if pattern[i] != 0x5C:  # backslash
            i += 1
        elif pattern[i + 1] == 0x43:  # C
            return True
        elif pattern[i + 1] == 0x51:  # Q: literal text up to \E
            close = pattern.find(b"\\E", i + 2)
            i = n if close < 0 else close + 2
        else:
            i += 2
    return False


def _utf8_width(data: bytes, pos: int) -> int:
    if pos >= len(data):
        return 1
    lead = data[pos]
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _text(arg: Any) -> str:
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def _go_regexp_error(re2_message: str, pattern: str) -> str:
    """RE2's `<code>: <offending text>` as Go's `<code>: `<offending text>``."""
    code, _, arg = re2_message.partition(": ")
    if code == "invalid perl operator" and arg.startswith("(?<"):
        # Go reads every `(?<` as a named capture: a look-behind has an invalid name, or
        # no closing `>` at all (then Go shows the rest of the pattern).
        rest = pattern[max(pattern.find(arg), 0) :]
        end = rest.find(">")
        return f"invalid named capture: `{rest if end < 0 else rest[: end + 1]}`"
    return f"{_GO_REGEXP_ERRORS.get(code, code)}: `{arg}`"


@functools.lru_cache(maxsize=_REGEX_CACHE_SIZE)
def _cached_regex(pattern: str) -> Regex:
    return Regex(pattern)  # a refused pattern raises, and is not kept


def _regex(pattern: str) -> Regex:
    try:
        return _cached_regex(pattern)
    except RegexError as e:
        raise _err(f"error parsing regexp: {e}") from None


def _matches(s: Any, pattern: Any) -> bool:
    _str_args(s, pattern)
    return _regex(pattern).search(s)


def _contains(s: Any, sub: Any) -> bool:
    _str_args(s, sub)
    return bool(sub in s)


def _starts(s: Any, prefix: Any) -> bool:
    _str_args(s, prefix)
    return bool(s.startswith(prefix))


def _ends(s: Any, suffix: Any) -> bool:
    _str_args(s, suffix)
    return bool(s.endswith(suffix))


def _to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v  # type: ignore[no-any-return]
    if t is Uint:
        return _int_result(int(v))
    if t is float:
        if math.isnan(v) or not INT64_MIN <= v < 2.0**63:
            raise _err("integer overflow")
        return int(v)
    if t is str:
        try:
            return _int_result(int(v, 10))
        except ValueError:
            raise _err(f"cannot convert string {_goq(v)} to int") from None
    raise _err(_NO_OVERLOAD)


def _to_uint(v: Any) -> Uint:
    t = type(v)
    if t in (int, Uint):
        return _uint_result(int(v))
    if t is float:
        if math.isnan(v) or not 0 <= v < 2.0**64:
            raise _err("unsigned integer overflow")
        return Uint(int(v))
    if t is str:
        try:
            return _uint_result(int(v, 10))
        except ValueError:
            raise _err(f"cannot convert string {_goq(v)} to uint") from None
    raise _err(_NO_OVERLOAD)


def _to_double(v: Any) -> float:
    t = type(v)
    if t in (int, Uint, float):
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError:
            raise _err(f"cannot convert string {_goq(v)} to double") from None
    raise _err(_NO_OVERLOAD)


def _to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v  # type: ignore[no-any-return]
    if t is bool:
        return "true" if v else "false"
    if t in (int, Uint):
        return str(int(v))
    if t is float:
        return _go_float(v)
    if t is bytes:
        return v.decode("utf-8", errors="replace")  # type: ignore[no-any-return]
    raise _err(_NO_OVERLOAD)


def _go_float(v: float) -> str:
    """fmt.Sprintf("%g", v), as cel-go's string(double): the shortest digits that read back
    as v, in exponent form when the exponent is below -4 or at least 6 (Go's %g with the
    shortest precision)."""
    if not math.isfinite(v) or v == 0:
        special = {math.inf: "+Inf", -math.inf: "-Inf"}.get(v, "NaN" if math.isnan(v) else "0")
        return "-0" if special == "0" and math.copysign(1, v) < 0 else special
    sign = "-" if v < 0 else ""
    digits, exp = _shortest_digits(abs(v))
    if exp < -4 or exp >= 6:
        tail = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{tail}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    point = exp + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest_digits(v: float) -> tuple[str, int]:
    """The shortest round-tripping decimal digits of a positive finite v (Python's repr,
    which is the same shortest representation Go computes) and the exponent of the first."""
    mantissa, _, exponent = repr(v).partition("e")
    whole, _, fraction = mantissa.partition(".")
    every = whole + fraction
    significant = every.lstrip("0")
    exp = int(exponent or 0) + len(whole) - 1 - (len(every) - len(significant))
    return significant.rstrip("0") or "0", exp


def _to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        table = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
        table.update({"0": False, "f": False, "F": False, "FALSE": False, "false": False})
        table["False"] = False
        if v in table:
            return table[v]
        raise _err(f"type conversion error from 'string' to 'bool'")  # noqa: F541
    raise _err(_NO_OVERLOAD)


def _to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode()
    raise _err(_NO_OVERLOAD)


# Strings extension (ext.Strings version 2).


def _char_at(s: Any, i: Any) -> str:
    _str_args(s)
    if not 0 <= i <= len(s):
        raise _err(f"index out of range: {i}")
    return s[i : i + 1]  # type: ignore[no-any-return]


def _index_of(s: Any, sub: Any, start: Any = 0) -> int:
    if type(s) is list:
        return next((i for i, x in enumerate(s) if cel_equal(x, sub)), -1)
    _str_args(s, sub)
    if not 0 <= start < max(len(s), 1) and not (start == 0 and not s):
        raise _err(f"index out of range: {start}")
    return s.find(sub, start)  # type: ignore[no-any-return]


def _last_index_of(s: Any, sub: Any, end: Any = None) -> int:
    if type(s) is list:
        return next((i for i in range(len(s) - 1, -1, -1) if cel_equal(s[i], sub)), -1)
    _str_args(s, sub)
    if end is None:
        return s.rfind(sub)  # type: ignore[no-any-return]
    if not 0 <= end < len(s):
        raise _err(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))  # type: ignore[no-any-return]


def _lower(s: Any) -> str:
    _str_args(s)
    return "".join(c.lower() if c.isascii() else c for c in s)


def _upper(s: Any) -> str:
    _str_args(s)
    return "".join(c.upper() if c.isascii() else c for c in s)


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    _str_args(s, old, new)
    return s.replace(old, new, n if n >= 0 else -1)  # type: ignore[no-any-return]


def _split(s: Any, sep: Any, n: Any = -1) -> list[str]:
    _str_args(s, sep)
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1 if n > 0 else -1)  # type: ignore[no-any-return]


def _substring(s: Any, start: Any, end: Any = None) -> str:
    _str_args(s)
    end = len(s) if end is None else end
    if not 0 <= start <= len(s):
        raise _err(f"index out of range: {start}")
    if not 0 <= end <= len(s):
        raise _err(f"index out of range: {end}")
    if start > end:
        raise _err(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]  # type: ignore[no-any-return]


def _trim(s: Any) -> str:
    _str_args(s)
    return s.strip()  # type: ignore[no-any-return]


def _join(items: Any, sep: Any = "") -> str:
    if type(items) is not list or any(type(x) is not str for x in items):
        raise _err(_NO_OVERLOAD)
    return sep.join(items)  # type: ignore[no-any-return]


def _reverse(v: Any) -> Any:
    if type(v) is str:
        return v[::-1]
    if type(v) is list:
        return v[::-1]
    raise _err(_NO_OVERLOAD)


# Kubernetes lists library and the lists extension.


def _list_arg(v: Any) -> list[Any]:
    if type(v) is not list:
        raise _err(_NO_OVERLOAD)
    return v


def _is_sorted(v: Any) -> bool:
    items = _list_arg(v)
    return all(_compare(items[i], items[i + 1]) <= 0 for i in range(len(items) - 1))


def _sum(v: Any) -> Any:
    items = _list_arg(v)
    if not items:
        return 0
    total = items[0]
    for x in items[1:]:
        total = _add(total, x)
    return total


def _min(v: Any) -> Any:
    items = _list_arg(v)
    if not items:
        raise _err("min called on empty list")
    best = items[0]
    for x in items[1:]:
        if _compare(x, best) < 0:
            best = x
    return best


def _max(v: Any) -> Any:
    items = _list_arg(v)
    if not items:
        raise _err("max called on empty list")
    best = items[0]
    for x in items[1:]:
        if _compare(x, best) > 0:
            best = x
    return best


def _slice(v: Any, start: Any, end: Any) -> list[Any]:
    items = _list_arg(v)
    if start < 0 or end < 0:
        raise _err(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise _err(
            f"cannot slice({start}, {end}), start index must be less than or equal to end index"
        )
    if end > len(items):
        raise _err(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(v: Any, depth: Any = 1) -> list[Any]:
    items = _list_arg(v)
    if depth < 0:
        raise _err("level must be non-negative")
    out: list[Any] = []
    for x in items:
        if type(x) is list and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(v: Any) -> list[Any]:
    out: list[Any] = []
    for x in _list_arg(v):
        if not any(cel_equal(x, y) for y in out):
            out.append(x)
    return out


def _sort(v: Any) -> list[Any]:
    return sorted(_list_arg(v), key=cmp_to_key(_compare))


def _first(v: Any) -> Optional:
    items = _list_arg(v)
    return Optional(items[0]) if items else Optional()


def _last(v: Any) -> Optional:
    items = _list_arg(v)
    return Optional(items[-1]) if items else Optional()


def _range(n: Any) -> list[int]:
    return list(range(n))


def _sets_contains(a: Any, b: Any) -> bool:
    return all(_in(x, _list_arg(a)) for x in _list_arg(b))


def _sets_equivalent(a: Any, b: Any) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


def _sets_intersects(a: Any, b: Any) -> bool:
    return any(_in(x, _list_arg(a)) for x in _list_arg(b))


def _k8s_regex(pattern: str) -> Regex:
    """The Kubernetes regex library's compile: its own error prefix."""
    try:
        return _cached_regex(pattern)
    except RegexError as e:
        raise _err(f"Illegal regex: error parsing regexp: {e}") from None


def _find(s: Any, pattern: Any) -> str:
    _str_args(s, pattern)
    return _k8s_regex(pattern).find(s)


def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    _str_args(s, pattern)
    return _k8s_regex(pattern).find_all(s, limit)


# Quantity and semver libraries.


def _quantity(s: Any) -> Quantity:
    _str_args(s)
    try:
        return parse_quantity(s)
    except QuantityError as e:
        raise _err(str(e)) from None


def _is_quantity(s: Any) -> bool:
    _str_args(s)
    try:
        parse_quantity(s)
    except QuantityError:
        return False
    return True


def _q(*args: Any) -> None:
    if any(type(a) is not Quantity for a in args):
        raise _err(_NO_OVERLOAD)


def _s(*args: Any) -> None:
    if any(type(a) is not Semver for a in args):
        raise _err(_NO_OVERLOAD)


def _greater(a: Any, b: Any) -> bool:
    if type(a) is Semver:
        _s(b)
        return bool(a.compare(b) == 1)
    _q(a, b)
    return bool(a.nanos > b.nanos)


def _less(a: Any, b: Any) -> bool:
    if type(a) is Semver:
        _s(b)
        return bool(a.compare(b) == -1)
    _q(a, b)
    return bool(a.nanos < b.nanos)


def _compare_to(a: Any, b: Any) -> int:
    if type(a) is Semver:
        _s(b)
        return a.compare(b)
    _q(a, b)
    return int(a.nanos > b.nanos) - int(a.nanos < b.nanos)


def _q_add(a: Any, b: Any) -> Quantity:
    _q(a)
    if type(b) is int:
        return Quantity(a.nanos + b * 10**9, a.format)
    _q(b)
    return a.plus(b)  # type: ignore[no-any-return]


def _q_sub(a: Any, b: Any) -> Quantity:
    _q(a)
    if type(b) is int:
        return Quantity(a.nanos - b * 10**9, a.format)
    _q(b)
    return a.minus(b)  # type: ignore[no-any-return]


def _as_integer(a: Any) -> int:
    _q(a)
    value = a.as_int64()
    if value is None:
        raise _err("cannot convert value to integer")
    return value  # type: ignore[no-any-return]


def _is_integer(a: Any) -> bool:
    _q(a)
    return a.as_int64() is not None


def _sign(a: Any) -> int:
    _q(a)
    return a.sign()  # type: ignore[no-any-return]


def _as_float(a: Any) -> float:
    _q(a)
    return a.approximate_float()  # type: ignore[no-any-return]


def _semver(s: Any, normalize: Any = False) -> Semver:
    _str_args(s)
    try:
        return _normalize_semver(s) if normalize else parse_semver(s)
    except ValueError as e:
        raise _err(str(e)) from None


def _is_semver(s: Any, normalize: Any = False) -> bool:
    _str_args(s)
    try:
        _normalize_semver(s) if normalize else parse_semver(s)
    except ValueError:
        return False
    return True


def _major(v: Any) -> int:
    _s(v)
    return v.major  # type: ignore[no-any-return]


def _minor(v: Any) -> int:
    _s(v)
    return v.minor  # type: ignore[no-any-return]


def _patch(v: Any) -> int:
    _s(v)
    return v.patch  # type: ignore[no-any-return]


def _includes(target: Any, arg: Any, limit: int = MAX_ATTRIBUTE_VALUES_PER_DEVICE) -> bool:
    """The DRA `includes` function (v0.36): list membership, or equality for a single value;
    a list longer than `limit` is an error."""
    if type(target) is list:
        for i, item in enumerate(target):
            if i >= limit:
                raise _err(
                    "'includes' function cannot be applied to lists longer than "
                    f"{MAX_ATTRIBUTE_VALUES_PER_DEVICE} values"
                )
            if cel_equal(item, arg):
                return True
        return False
    return cel_equal(target, arg)


def _includes_unlimited(target: Any, arg: Any) -> bool:
    """The apiserver library's `includes` (v0.37): the same, for a list of any length."""
    return _includes(target, arg, limit=UINT64_MAX)


# Optional values.


def _opt_of(v: Any) -> Optional:
    return Optional(v)


def _opt_of_non_zero(v: Any) -> Optional:
    zero = (v in (0, "", b"", False) and type(v) is not float) or v == 0.0
    zero = zero or (type(v) in (list, dict, DefaultMap) and not v) or v is NULL
    return Optional() if zero else Optional(v)


def _opt_none() -> Optional:
    return Optional()


def _opt(v: Any) -> Optional:
    if type(v) is not Optional:
        raise _err(_NO_OVERLOAD)
    return v


def _has_value(v: Any) -> bool:
    return _opt(v).present


def _value(v: Any) -> Any:
    o = _opt(v)
    if not o.present:
        raise _err("optional.none() dereference")
    return o.value


def _or_value(v: Any, default: Any) -> Any:
    o = _opt(v)
    return o.value if o.present else default


def _or(v: Any, other: Any) -> Optional:
    o = _opt(v)
    return o if o.present else _opt(other)


def _opt_index(container: Any, key: Any) -> Optional:
    if type(container) is Optional:
        if not container.present:
            return container
        container = container.value
    if isinstance(container, dict) and not isinstance(container, DefaultMap):
        if key in container:
            return Optional(container[key])
        return Optional()
    if type(container) is list:
        if type(key) in (int, Uint) and 0 <= key < len(container):
            return Optional(container[key])
        return Optional()
    return Optional(_index(container, key))


def _type_of(v: Any) -> str:
    return _cel_type(v)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "size": _size,
    "contains": _contains,
    "startsWith": _starts,
    "endsWith": _ends,
    "matches": _matches,
    "int": _to_int,
    "uint": _to_uint,
    "double": _to_double,
    "string": _to_string,
    "bool": _to_bool,
    "bytes": _to_bytes,
    "dyn": lambda v: v,
    "type": _type_of,
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _lower,
    "upperAscii": _upper,
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "reverse": _reverse,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _min,
    "max": _max,
    "slice": _slice,
    "flatten": _flatten,
    "distinct": _distinct,
    "sort": _sort,
    "first": _first,
    "last": _last,
    "lists.range": _range,
    "sets.contains": _sets_contains,
    "sets.equivalent": _sets_equivalent,
    "sets.intersects": _sets_intersects,
    "find": _find,
    "findAll": _find_all,
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "compareTo": _compare_to,
    "add": _q_add,
    "sub": _q_sub,
    "asInteger": _as_integer,
    "isInteger": _is_integer,
    "sign": _sign,
    "asApproximateFloat": _as_float,
    "semver": _semver,
    "isSemver": _is_semver,
    "major": _major,
    "minor": _minor,
    "patch": _patch,
    "includes": _includes,
    "optional.of": _opt_of,
    "optional.ofNonZeroValue": _opt_of_non_zero,
    "optional.none": _opt_none,
    "hasValue": _has_value,
    "value": _value,
    "orValue": _or_value,
    "or": _or,
    "_[?_]": _opt_index,
    "_+_": _add,
    "_-_": _sub,
    "_*_": _mul,
    "_/_": _div,
    "_%_": _mod,
    "-_": _neg,
    "!_": _not,
    "_[_]": _index,
    "@in": _in,
    "_==_": cel_equal,
    "_!=_": lambda a, b: not cel_equal(a, b),
    "_<_": lambda a, b: _compare(a, b) == -1,
    "_<=_": lambda a, b: _compare(a, b) in (-1, 0),
    "_>_": lambda a, b: _compare(a, b) == 1,
    "_>=_": lambda a, b: _compare(a, b) in (0, 1),
}


# ---------------------------------------------------------------------------------------------
# The checker's declarations (types only: the evaluator above runs them).


def _checker() -> Any:
    """cel-go's checker (cel_expr_python), loaded when the first expression is checked: it
    holds about 14 MiB that a scheduler never given a device selector does without."""
    from cel_expr_python import cel  # noqa: PLC0415

    return cel


def _declarations(checker: Any) -> list[Any]:
    t = checker.Type
    q, s = t.AbstractType("kubernetes.Quantity"), t.AbstractType("kubernetes.Semver")
    dyn, b, i, st, d = t.DYN, t.BOOL, t.INT, t.STRING, t.DOUBLE
    lst, lst_s = t.List(t.DYN), t.List(t.STRING)
    member: dict[str, list[tuple[Any, list[Any]]]] = {
        "charAt": [(st, [st, i])],
        "indexOf": [(i, [st, st]), (i, [st, st, i]), (i, [lst, dyn])],
        "lastIndexOf": [(i, [st, st]), (i, [st, st, i]), (i, [lst, dyn])],
        "lowerAscii": [(st, [st])],
        "upperAscii": [(st, [st])],
        "replace": [(st, [st, st, st]), (st, [st, st, st, i])],
        "split": [(lst_s, [st, st]), (lst_s, [st, st, i])],
        "substring": [(st, [st, i]), (st, [st, i, i])],
        "trim": [(st, [st])],
        "join": [(st, [lst_s]), (st, [lst_s, st])],
        "reverse": [(st, [st]), (lst, [lst])],
        "isSorted": [(b, [lst])],
        "sum": [(dyn, [lst])],
        "min": [(dyn, [lst])],
        "max": [(dyn, [lst])],
        "slice": [(lst, [lst, i, i])],
        "flatten": [(lst, [lst]), (lst, [lst, i])],
        "distinct": [(lst, [lst])],
        "sort": [(lst, [lst])],
        "find": [(st, [st, st])],
        "findAll": [(lst_s, [st, st]), (lst_s, [st, st, i])],
        "isGreaterThan": [(b, [q, q]), (b, [s, s])],
        "isLessThan": [(b, [q, q]), (b, [s, s])],
        "compareTo": [(i, [q, q]), (i, [s, s])],
        "add": [(q, [q, q]), (q, [q, i])],
        "sub": [(q, [q, q]), (q, [q, i])],
        "asInteger": [(i, [q])],
        "isInteger": [(b, [q])],
        "asApproximateFloat": [(d, [q])],
        "major": [(i, [s])],
        "minor": [(i, [s])],
        "patch": [(i, [s])],
        "includes": [(b, [dyn, dyn])],
    }
    global_: dict[str, list[tuple[Any, list[Any]]]] = {
        "quantity": [(q, [st])],
        "isQuantity": [(b, [st])],
        "sign": [(i, [q])],
        "semver": [(s, [st]), (s, [st, b])],
        "isSemver": [(b, [st]), (b, [st, b])],
        "lists.range": [(t.List(i), [i])],
        "sets.contains": [(b, [lst, lst])],
        "sets.equivalent": [(b, [lst, lst])],
        "sets.intersects": [(b, [lst, lst])],
    }
    decls = []
    for is_member, table in ((True, member), (False, global_)):
        for name, overloads in table.items():
            decls.append(
                checker.FunctionDecl(
                    name,
                    [
                        checker.Overload(
                            f"{name}_{n}", ret, params, is_member=is_member, impl=_unused
                        )
                        for n, (ret, params) in enumerate(overloads)
                    ],
                )
            )
    return decls


def _unused(*args: Any) -> Any:
    raise AssertionError("evaluated by the Python evaluator, never by the checker")


def _new_env(extra: Mapping[str, Any] | None = None) -> Any:
    from cel_expr_python.ext import ext_bindings, ext_optional  # noqa: PLC0415 (see _checker)

    checker = _checker()
    t = checker.Type
    q = t.AbstractType("kubernetes.Quantity")
    variables = {
        "device.driver": t.STRING,
        "device.allowMultipleAllocations": t.BOOL,
        "device.attributes": t.Map(t.STRING, t.Map(t.STRING, t.DYN)),
        "device.capacity": t.Map(t.STRING, t.Map(t.STRING, q)),
        **(extra or {}),
    }
    return checker.NewEnv(
        variables=variables,
        functions=_declarations(checker),
        extensions=[ext_bindings.ExtBindings(), ext_optional.ExtOptional()],
    )


_ENV_LOCK = threading.Lock()
_ENV: Any = None


def _env() -> Any:
    global _ENV  # noqa: PLW0603 (built once: declaring the libraries takes milliseconds)
    with _ENV_LOCK:
        if _ENV is None:
            _ENV = _new_env()
        return _ENV


# ---------------------------------------------------------------------------------------------
# Compilation to closures.

Env = dict[str, Any]
Fn = Callable[[Env], Any]
_DEVICE_VARS: tuple[str, ...] = ("device.driver", "device.allowMultipleAllocations")
_DEVICE_VARS += ("device.attributes", "device.capacity")


_REGEX_FUNCTIONS = frozenset(("matches", "find", "findAll"))


def _string(v: Any) -> str:
    if type(v) is not str:
        raise _err(_NO_OVERLOAD)
    return v


def _int(v: Any) -> int:
    if type(v) is not int:
        raise _err(_NO_OVERLOAD)
    return v


class _Builder:
    def __init__(self, checked: celast.Checked, tracked: bool, features: Features) -> None:
        self.refs = checked.references
        self.tracked = tracked
        self.features = features
        self.program_error: str | None = None

    def build(self, root: Expr) -> Fn:
        """The closure of `root`, children first, without recursion (a tree may be 250
        levels deep)."""
        built: dict[int, Fn] = {}
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            e, ready = stack.pop()
            parts = self._parts(e)
            if not ready:
                stack.append((e, True))
                stack.extend((c, False) for c in reversed(parts))
                continue
            fn = self._build(e, [built.pop(id(c)) for c in parts])
            if self.tracked and e.kind not in _UNCOSTED and not _charges_itself(e):
                fn = _costed(fn, 1)
            built[id(e)] = fn
        return built[id(root)]

    def _parts(self, e: Expr) -> list[Expr]:
        """The children whose closures `e`'s closure calls."""
        kind = e.kind
        if kind in (celast.CONST, celast.IDENT) or (kind == celast.STRUCT and e.name):
            return []
        if kind == celast.SELECT:
            resolved = self.refs.get(e.id) and not e.test_only
            return [] if resolved or e.operand is None else [e.operand]
        if kind == celast.COMPREHENSION:
            parts = (e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result)
            return [_required(x) for x in parts]
        return _children(e)

    def _build(self, e: Expr, parts: list[Fn]) -> Fn:  # noqa: PLR0911 (one case per kind)
        kind = e.kind
        if kind == celast.CONST:
            value = e.value
            return lambda env: value
        ref = self.refs.get(e.id)
        if kind == celast.IDENT or (kind == celast.SELECT and ref and not e.test_only):
            name = ref or e.name
            return _ident(name)
        if kind == celast.SELECT:
            operand, field = parts[0], e.name
            if e.test_only:
                return lambda env: _has(operand(env), field)
            return lambda env: _select(operand(env), field)
        if kind == celast.CALL:
            return self._call(e, parts)
        if kind == celast.LIST:
            return self._list(e, parts)
        if kind == celast.STRUCT:
            return self._map(e, parts)
        return self._comprehension(e, parts)

    def _list(self, e: Expr, items: list[Fn]) -> Fn:
        optional = set(e.optional_indices)
        if not optional:
            return _list_of(items)

        def build_list(env: Env) -> list[Any]:
            out = []
            for n, f in enumerate(items):
                v = f(env)
                if n in optional:
                    o = _opt(v)
                    if o.present:
                        out.append(o.value)
                else:
                    out.append(v)
            return out

        return build_list

    def _map(self, e: Expr, parts: list[Fn]) -> Fn:
        if e.name:
            message = e.name
            return lambda env: _raise(f"unknown type: {message}")
        entries = [(parts[2 * i], parts[2 * i + 1], opt) for i, (_, _, opt) in enumerate(e.entries)]

        def build_map(env: Env) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for kf, vf, opt in entries:
                key, value = kf(env), vf(env)
                if type(key) not in (str, int, Uint, bool):
                    raise _err(f"unsupported key type: {_cel_type(key)}")
                if opt:
                    o = _opt(value)
                    if not o.present:
                        continue
                    value = o.value
                if key in out:
                    raise _err(f"insert failed: key {_format_key(key)} already exists")
                out[key] = value
            return out

        return build_map

    def _call(self, e: Expr, args: list[Fn]) -> Fn:
        name = e.name
        special = self._special(name, args)
        if special is not None:
            return special
        nodes = ([e.operand] if e.operand is not None else []) + e.args
        pattern = nodes[1].value if len(nodes) > 1 and nodes[1].kind == celast.CONST else None
        if name in _REGEX_FUNCTIONS and type(pattern) is str:
            return self._constant_regex(name, pattern, args)
        impl = _FUNCTIONS.get(name)
        if name == "includes" and self.features.stored_list_types:
            impl = _includes_unlimited
        if impl is None:
            return lambda env: _raise(f"no such overload: {name}")
        return _applied(impl, args)

    def _constant_regex(self, name: str, pattern: str, args: list[Fn]) -> Fn:
        """cel-go's regex optimization: a literal pattern is compiled with the program, and
        one Go refuses fails the program's instantiation."""
        try:
            compiled = Regex(pattern)
        except RegexError as e:
            self.program_error = f"program instantiation failed: error parsing regexp: {e}"
            return lambda env: _raise(self.program_error or "")
        text, rest = args[0], args[2:]
        if name == "matches":
            return lambda env: compiled.search(_string(text(env)))
        if name == "find":
            return lambda env: compiled.find(_string(text(env)))
        if not rest:
            return lambda env: compiled.find_all(_string(text(env)), -1)
        limit = rest[0]
        return lambda env: compiled.find_all(_string(text(env)), _int(limit(env)))

    def _special(self, name: str, args: list[Fn]) -> Fn | None:
        if name == "_&&_":
            return _and(args[0], args[1], self.tracked)
        if name == "_||_":
            return _or_fn(args[0], args[1], self.tracked)
        if name == "_?_:_":
            return _ternary(args[0], args[1], args[2], self.tracked)
        if name == "@not_strictly_false":
            inner = args[0]

            def not_strictly_false(env: Env) -> bool:
                try:
                    v = inner(env)
                except CelRuntimeError:
                    return True
                return v if type(v) is bool else True

            return not_strictly_false
        if name == "_?._":
            operand, field = args[0], args[1]
            return lambda env: _opt_select(operand(env), field(env))
        return None

    def _comprehension(self, e: Expr, parts: list[Fn]) -> Fn:
        iter_range, init, cond, step, result = parts
        iter_var, iter_var2, accu_var = e.iter_var, e.iter_var2, e.accu_var
        tracked = self.tracked

        def comprehension(env: Env) -> Any:
            items = iter_range(env)
            pairs: Iterable[tuple[Any, Any]]
            if type(items) is list:
                pairs = enumerate(items) if iter_var2 else ((x, None) for x in items)
            elif isinstance(items, dict):
                pairs = items.items() if iter_var2 else ((k, None) for k in items)
            else:
                raise _err(
                    f"got '{_GO_TYPES.get(type(items), 'types.Val')}', expected iterable type"
                )
            saved = {n: env.get(n, _MISSING) for n in (iter_var, iter_var2, accu_var) if n}
            interrupt: _Interrupt | None = env.get(_INTERRUPT)
            try:
                env[accu_var] = init(env)
                for first, second in pairs:
                    if not cond(env):
                        break
                    env[iter_var] = first
                    if iter_var2:
                        env[iter_var2] = second
                    env[accu_var] = step(env)
                    if interrupt is not None and interrupt.due():
                        raise _err(INTERRUPTED)
                out = result(env)
                if tracked:
                    _charge(env)
                return out
            finally:
                for n, v in saved.items():
                    if v is _MISSING:
                        env.pop(n, None)
                    else:
                        env[n] = v

        return comprehension


_MISSING = object()


def _applied(impl: Callable[..., Any], args: list[Fn]) -> Fn:
    """A call's closure: its arguments evaluated in order, without a frame of their own."""
    if len(args) == 1:
        (a0,) = args
        return lambda env: impl(a0(env))
    if len(args) == 2:
        a0, a1 = args
        return lambda env: impl(a0(env), a1(env))
    if len(args) == 3:
        a0, a1, a2 = args
        return lambda env: impl(a0(env), a1(env), a2(env))
    return lambda env: impl(*map(operator.methodcaller("__call__", env), args))


def _list_of(items: list[Fn]) -> Fn:
    """A list literal's closure. Short lists (how deep nesting is written) call their items
    directly and longer ones through map: no comprehension frame per level of nesting."""
    if len(items) == 1:
        (f0,) = items
        return lambda env: [f0(env)]
    if len(items) == 2:
        f0, f1 = items
        return lambda env: [f0(env), f1(env)]
    return lambda env: list(map(operator.methodcaller("__call__", env), items))


def _required(e: Expr | None) -> Expr:
    if e is None:
        raise ValueError("comprehension without all of its parts")
    return e


def _raise(message: str) -> Any:
    raise _err(message)


def _ident(name: str) -> Fn:
    def ident(env: Env) -> Any:
        try:
            return env[name]
        except KeyError:
            raise _err(f"no such attribute(s): {name}") from None

    return ident


def _opt_select(operand: Any, field: Any) -> Optional:
    if type(operand) is Optional:
        if not operand.present:
            return operand
        operand = operand.value
    if isinstance(operand, dict) and not isinstance(operand, DefaultMap):
        return Optional(operand[field]) if field in operand else Optional()
    return Optional(_select(operand, field))


# The nodes whose closures count their own cost (no wrapper: one Python frame less per level
# of the deepest trees, which nest comprehensions and logical operators).
_UNCOSTED = (celast.CONST, celast.LIST, celast.STRUCT)
_SELF_CHARGING = frozenset(("_&&_", "_||_", "_?_:_"))


def _charges_itself(e: Expr) -> bool:
    return e.kind == celast.COMPREHENSION or (e.kind == celast.CALL and e.name in _SELF_CHARGING)


def _and(left: Fn, right: Fn, tracked: bool = False) -> Fn:
    return _logical(False, left, right, tracked)


def _or_fn(left: Fn, right: Fn, tracked: bool = False) -> Fn:
    return _logical(True, left, right, tracked)


def _logical(absorbing: bool, left: Fn, right: Fn, tracked: bool) -> Fn:
    """`&&` (absorbing false) or `||` (absorbing true) with cel-go's commutative errors: an
    error on one side is forgiven when the other side is the absorbing value."""
    neutral = not absorbing

    def logical(env: Env) -> Any:
        try:
            lv = left(env)
        except CelRuntimeError as e:
            if right(env) is not absorbing:
                raise e from None
            result = absorbing
        else:
            rv = absorbing if lv is absorbing else right(env)
            if lv is absorbing or rv is absorbing:
                result = absorbing
            elif lv is neutral and type(rv) is bool:
                result = rv
            else:
                raise _err(_NO_OVERLOAD)
        if tracked:
            _charge(env)
        return result

    return logical


def _ternary(cond: Fn, yes: Fn, no: Fn, tracked: bool = False) -> Fn:
    def ternary(env: Env) -> Any:
        c = cond(env)
        if c is True:
            result = yes(env)
        elif c is False:
            result = no(env)
        else:
            raise _err(_NO_OVERLOAD)
        if tracked:
            _charge(env)
        return result

    return ternary


def _charge(env: Env) -> None:
    """One unit of cost for the node just evaluated (what `_costed` adds around others)."""
    cost: _Cost = env[_COST]
    cost.value += 1
    if cost.value > cost.limit:
        raise _CostLimitExceededError


class _Cost:
    """The running cost of one evaluation (only expressions with loops track it)."""

    __slots__ = ("limit", "value")

    def __init__(self, limit: int) -> None:
        self.value = 0
        self.limit = limit


_COST = "@cost"
_INTERRUPT = "@interrupt"
# cel-go's error for a comprehension stopped by its context, and how often it looks
# (celconfig.CheckFrequency: every 100th iteration, counted over the whole evaluation).
INTERRUPTED = "operation interrupted"
INTERRUPT_CHECK_FREQUENCY = 100


class _Interrupt:
    """The deadline of one evaluation, looked at every INTERRUPT_CHECK_FREQUENCY iterations."""

    __slots__ = ("count", "deadline")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.count = 0

    def due(self) -> bool:
        self.count += 1
        return self.count % INTERRUPT_CHECK_FREQUENCY == 0 and time.monotonic() >= self.deadline


def _costed(fn: Fn, units: int) -> Fn:
    def costed(env: Env) -> Any:
        result = fn(env)
        cost: _Cost = env[_COST]
        cost.value += units
        if cost.value > cost.limit:
            raise _CostLimitExceededError
        return result

    return costed


def _has_comprehension(e: Expr | None) -> bool:
    return any(node.kind == celast.COMPREHENSION for node in _walk(e))


# ---------------------------------------------------------------------------------------------
# Devices as CEL input.


@dataclass(slots=True)
class DeviceInput:
    """A device's CEL variables, built once (`device_input`), or the error building them hit."""

    variables: dict[str, Any]
    error: str | None = None


def device_input(
    driver: str,
    allow_multiple_allocations: bool | None,
    attributes: Mapping[str, Mapping[str, Any]],
    capacity: Mapping[str, Quantity],
    features: Features,
) -> DeviceInput:
    """CompilationResult.DeviceMatches' input maps: names split into domain and id (the
    driver is the domain of unqualified names), attribute values typed, semvers parsed."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in attributes.items():
        try:
            value = _attribute_value(attr, features)
        except ValueError as e:
            return DeviceInput({}, f"attribute {name}: {e}")
        domain, ident = _split_name(name, driver)
        attrs.setdefault(domain, {})[ident] = value
    caps: dict[str, dict[str, Quantity]] = {}
    for name, quantity in capacity.items():
        domain, ident = _split_name(name, driver)
        caps.setdefault(domain, {})[ident] = quantity
    variables = {
        "device.driver": driver,
        "device.allowMultipleAllocations": bool(allow_multiple_allocations),
        "device.attributes": DefaultMap(attrs, _EMPTY_MAP),
        "device.capacity": DefaultMap(caps, _EMPTY_MAP),
    }
    return DeviceInput(variables)


def _split_name(name: str, default_domain: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def _attribute_value(attr: Mapping[str, Any], features: Features) -> Any:
    if features.lists:
        for key in ("ints", "bools", "strings"):
            if attr.get(key) is not None:
                return list(attr[key])
        if attr.get("versions") is not None:
            return [_parse_attribute_version(v) for v in attr["versions"]]
    if attr.get("int") is not None:
        return int(attr["int"])
    if attr.get("bool") is not None:
        return bool(attr["bool"])
    if attr.get("string") is not None:
        return str(attr["string"])
    if attr.get("version") is not None:
        return _parse_attribute_version(attr["version"])
    raise ValueError("unsupported attribute value")


def _parse_attribute_version(text: str) -> Semver:
    try:
        return parse_semver(text)
    except ValueError as e:
        raise ValueError(f"parse semantic version: {e}") from None


# ---------------------------------------------------------------------------------------------
# Compilation results and the cache.


class CompilationResult:
    """One compiled selector: `error` (upstream's message) or a program to evaluate."""

    __slots__ = ("_fn", "_tracked", "error", "expression")

    def __init__(self, expression: str, error: str | None, fn: Fn | None, tracked: bool) -> None:
        self.expression = expression
        self.error = error
        self._fn = fn
        self._tracked = tracked

    def device_matches(
        self,
        device: DeviceInput,
        cost_limit: int = SELECTOR_MAX_COST,
        *,
        deadline: float | None = None,
    ) -> bool:
        """CompilationResult.DeviceMatches: True/False, or CelRuntimeError with its message.
        `deadline` (a time.monotonic() instant) plays the context's part: comprehensions stop
        once it has passed, and the error is CelDeadlineError."""
        if device.error is not None:
            raise CelRuntimeError(device.error)
        assert self._fn is not None, self.error
        env: Env = device.variables
        if self._tracked:
            env = dict(env)
            env[_COST] = _Cost(cost_limit)
            if deadline is not None:
                env[_INTERRUPT] = _Interrupt(deadline)
        try:
            result = self._fn(env)
        except _CostLimitExceededError:
            raise CelRuntimeError("operation cancelled: actual cost limit exceeded") from None
        except CelRuntimeError as e:
            if str(e) == INTERRUPTED and deadline is not None and time.monotonic() >= deadline:
                # Upstream adds the context's cause to cel-go's error.
                raise CelDeadlineError(f"{INTERRUPTED}: context deadline exceeded") from None
            raise
        except RecursionError:
            raise CelRuntimeError("max recursion depth exceeded") from None
        if type(result) is bool:
            return result
        kind = _cel_type(result)
        raise CelRuntimeError(
            f"CEL result of type {kind} could not be converted to bool: {_conversion_error(result)}"
        )


# cel-go's ConvertToNative(bool) error, per value type (common/types: each type words its own).
_CONVERSION_ERRORS: dict[type, str] = {
    int: "unsupported type conversion from 'int' to bool",
    Uint: "unsupported type conversion from 'uint' to bool",
    float: "type conversion error from Double to 'bool'",
    bytes: "type conversion error from Bytes to 'bool'",
    list: "type conversion error from list to 'bool'",
    dict: "type conversion error from map to 'bool'",
    DefaultMap: "type conversion error from map to 'bool'",
    NullValue: "type conversion error from 'null_type' to 'bool'",
}


def _conversion_error(v: Any) -> str:
    found = _CONVERSION_ERRORS.get(type(v))
    if found is not None:
        return found
    names = {str: "string", Quantity: "Quantity", Semver: "Semver"}
    return f"unsupported native conversion from {names.get(type(v), 'dyn')} to 'bool'"


_ERROR_PREFIX = "INVALID_ARGUMENT: "
_ERROR_SUFFIX = " [INVALID_ARGUMENT]"
_UNDEFINED_FIELD = re.compile(r"undeclared reference to 'device\.([^'.]*)' \(in container ''\)")


def _compile_error_text(raw: str) -> str:
    """cel-expr-python's status text as cel-go's `issues.String()`."""
    text = raw.removeprefix(_ERROR_PREFIX).removesuffix(_ERROR_SUFFIX)
    return _UNDEFINED_FIELD.sub(lambda m: f"undefined field '{m.group(1)}'", text)


_ISSUE = re.compile(r"ERROR: <input>:-?\d+:-?\d+: ")
_RECURSION = re.compile(
    r"(?:Expression recursion limit exceeded\. limit: |Exceeded max recursion depth of )(\d+)"
)
# cel-go's parser.ExpressionSizeCodePointLimit default.
EXPRESSION_CODE_POINT_LIMIT = 100_000
_NUMERIC = ("int", "uint", "double")
_CROSS_NUMERIC = re.compile(
    r"found no matching overload for '_(?:<|<=|>|>=)_' applied to '\((\w+), (\w+)\)'"
)


def _issues(text: str) -> list[str]:
    starts = [m.start() for m in _ISSUE.finditer(text)]
    ends = [*starts[1:], len(text)]
    return [text[a:b].rstrip("\n") for a, b in zip(starts, ends[: len(starts)], strict=True)]


def _upstream_issue(issue: str) -> bool:
    """cel-go's environment allows ordering across int, uint and double; the C++ checker not."""
    m = _CROSS_NUMERIC.search(issue)
    return not (m and m.group(1) in _NUMERIC and m.group(2) in _NUMERIC)


def _any_range_issue(checked: celast.Checked, expression: str) -> str | None:
    """With scalar attributes, upstream types an attribute `any`: not a comprehension range."""
    for node in _walk(checked.expr):
        if node.kind != celast.COMPREHENSION or node.iter_range is None:
            continue
        rng = node.iter_range
        operand = rng.operand if rng.kind == celast.SELECT else next(iter(rng.args), None)
        if (rng.kind == celast.CALL and rng.name != "_[_]") or operand is None:
            continue
        if checked.types.get(rng.id) != "dyn":
            continue
        if checked.types.get(operand.id) != "map(string, dyn)":
            continue
        where, snippet = _location(expression, checked.positions.get(rng.id, 0))
        return (
            f"ERROR: <input>:{where}: expression of type 'any' cannot be range of a "
            f"comprehension (must be list, map, or dynamic){snippet}"
        )
    return None


def _walk(e: Expr | None) -> Iterable[Expr]:
    """Every node, parents first, without recursion (trees may be 250 levels deep)."""
    stack = [e] if e is not None else []
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(_children(node)))


def _children(e: Expr) -> list[Expr]:
    """The children of `e`, in the order the checker visits them."""
    kind = e.kind
    if kind == celast.CALL:
        return e.args if e.operand is None else [e.operand, *e.args]
    if kind == celast.LIST:
        return e.args
    if kind == celast.SELECT:
        return [] if e.operand is None else [e.operand]
    if kind == celast.COMPREHENSION:
        parts = (e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result)
        return [x for x in parts if x is not None]
    if kind == celast.STRUCT:
        return [x for k, v, _ in e.entries for x in (k, v)]
    return []


def _location(expression: str, offset: int) -> tuple[str, str]:
    """line:column and cel-go's snippet lines for an offset (in code points)."""
    before = expression[:offset]
    line = before.count("\n") + 1
    column = offset - (before.rfind("\n") + 1)
    text = expression.split("\n")[line - 1]
    return f"{line}:{column + 1}", f"\n | {text}\n | {'.' * column}^"


def compile_expression(expression: str, features: Features = Features()) -> CompilationResult:
    """CompileCELExpression for the scheduler (StoredExpressions, no cost estimation)."""
    parsed = _parse_and_check(expression, features)
    if isinstance(parsed, str):
        return CompilationResult(expression, parsed, None, False)
    checked, checked_ok = parsed
    if checked_ok:
        output = checked.types.get(checked.expr.id, "dyn")
        if output not in ("bool", "any", "dyn"):
            message = f"must evaluate to bool or the unknown type, not {output}"
            return CompilationResult(expression, message, None, False)
    else:
        checked.references.update(_device_references(checked.expr))
    tracked = _has_comprehension(checked.expr)
    builder = _Builder(checked, tracked, features)
    fn = builder.build(checked.expr)
    if builder.program_error is not None:
        return CompilationResult(expression, builder.program_error, None, False)
    return CompilationResult(expression, None, fn, tracked)


def _parse_and_check(expression: str, features: Features) -> tuple[celast.Checked, bool] | str:
    """env.Compile: the checked tree and whether the C++ checker accepted it (it refuses some
    cross-type comparisons cel-go's environment allows), or upstream's compile error."""
    if len(expression) > EXPRESSION_CODE_POINT_LIMIT:
        return (
            "compilation failed: ERROR: <input>:-1:0: expression code point size exceeds limit: "
            f"size: {len(expression)}, limit {EXPRESSION_CODE_POINT_LIMIT}"
        )
    env = _env()
    checked_ok = True
    try:
        compiled = env.compile(expression)
    except RuntimeError as e:
        if _RECURSION.search(str(e)):
            return _parse_deep(expression, features)
        issues = _issues(_compile_error_text(str(e)))
        remaining = [i for i in issues if _upstream_issue(i)]
        if remaining or not issues:
            return "compilation failed: " + ("\n".join(remaining) or _compile_error_text(str(e)))
        compiled = env.compile(expression, disable_check=True)
        checked_ok = False
    return _checked_issues(celast.decode(compiled.serialize()), checked_ok, expression, features)


def _checked_issues(
    checked: celast.Checked, checked_ok: bool, expression: str, features: Features
) -> tuple[celast.Checked, bool] | str:
    """The checks cel-go's environment makes that the C++ checker does not."""
    issue = None if features.includes else _undeclared_includes(checked, expression)
    if issue is None and checked_ok and not features.lists:
        issue = _any_range_issue(checked, expression)  # a checker error: reported first
    issue = issue or _regex_literal_issues(checked, expression)
    if issue is not None:
        return "compilation failed: " + issue
    return checked, checked_ok


# ---------------------------------------------------------------------------------------------
# Selectors nested deeper than the C++ parser allows.

# Levels of the tree per slice: each adds at most 1 to any of the C++ parser's counts, whose
# limit is 32.
_SLICE_LEVELS = 20
# Type checks of what a macro iterates, per selector; past these its variables are dyn.
_MAX_TYPE_QUERIES = 32
_NOT_NEWLINE = re.compile(r"[^\n]")
_ISSUE_AT = re.compile(r"ERROR: <input>:(-?\d+):(-?\d+): ")


def _parse_deep(expression: str, features: Features) -> tuple[celast.Checked, bool] | str:
    """cel-go's answer for a selector the C++ parser refuses as too deep: its own nesting
    limits (250), or the selector compiled in slices the C++ parser accepts, each deeper slice
    standing in its parent as a variable of the slice's checked type."""
    try:
        root = celparse.parse(expression)
    except celparse.LimitError as e:
        return f"compilation failed: ERROR: <input>:-1:0: {e}"
    except celparse.ParseError as e:
        where, snippet = _location(expression, e.offset)
        return f"compilation failed: ERROR: <input>:{where}: Syntax error: {e}{snippet}"
    sliced = _Slices(expression, root)
    result = sliced.compile()
    if isinstance(result, str):
        return result
    return _checked_issues(result, sliced.checked_ok, expression, features)


class _Slices:
    """One deep selector cut into slices of at most _SLICE_LEVELS levels, each checked by
    the C++ checker with the slices below it standing in as variables of their types, then
    grafted into one checked tree (positions and messages in the selector's coordinates)."""

    def __init__(self, expression: str, root: celparse.Node) -> None:
        self.expression = expression
        self.root = root
        prefix = "_s"
        while prefix in expression:
            prefix += "_"
        self.prefix = prefix
        self.spots: dict[int, int] = {}  # id(slice) -> where its name stands in the source
        longest = len(prefix) + len(str(sum(1 for _ in celparse.post_order(root))))
        self.room = re.compile(f"[^\n]{{{longest}}}")
        self.slices = self._cut()
        self.types: dict[int, str] = {}  # id(node) -> checked type, slices and binder sources
        self.trees: dict[int, Expr] = {}  # id(slice) -> its grafted tree
        self.scopes: dict[int, dict[str, str]] = {}  # id(binder) -> its variables' types
        self.queries = 0
        self.merged = celast.Checked(Expr(0, celast.CONST, NULL), {}, {}, {})
        self.next_id = 1
        self.checked_ok = True

    def _cut(self) -> list[celparse.Node]:
        """Slices where a path would grow past _SLICE_LEVELS, children before parents."""
        levels: dict[int, int] = {}
        out: list[celparse.Node] = []
        for node in celparse.post_order(self.root):
            level = 0
            for child in node.children:
                below = levels.pop(id(child)) + 1
                if below > _SLICE_LEVELS and self._can_stand_alone(child):
                    out.append(child)
                    below = 1
                level = max(level, below)
            levels[id(node)] = level
        out.append(self.root)
        return out

    def _can_stand_alone(self, node: celparse.Node) -> bool:
        parent = node.parent
        if parent is not None and parent.kind == "global" and parent.name == "has":
            return False  # has() takes a selection, not a variable
        # The name goes where a line of the span has room for it (lines stay lines).
        spot = self.room.search(self.expression, node.start, node.end)
        if spot is None:
            return False
        self.spots[id(node)] = spot.start()
        return True

    def compile(self) -> celast.Checked | str:
        issues: list[str] = []
        for piece in self.slices:
            holes, idents = self._holes(piece)
            result = self._check(piece, holes, self._scope(piece, idents))
            if isinstance(result, list):
                issues += result
                self.types[id(piece)] = "dyn"
                continue
            checked, ok = result
            self.checked_ok = self.checked_ok and ok
            self.types[id(piece)] = self._full_type(checked.types.get(checked.expr.id), holes)
            if issues:
                continue  # only the other slices' issues are still wanted
            trees = {self._name(n): self.trees.pop(id(h)) for n, h in enumerate(holes)}
            self.trees[id(piece)] = _graft(self._merge(checked, piece.start), trees)
        if issues:
            return "compilation failed: " + "\n".join(sorted(issues, key=_issue_position))
        self.merged.expr = self.trees[id(self.root)]
        self.merged.types[self.merged.expr.id] = self.types[id(self.root)]
        return self.merged

    def _name(self, n: int) -> str:
        """The variable the n-th hole of a slice is (the same in every slice, so slices with
        holes of the same types share an environment)."""
        return f"{self.prefix}{n}"

    def _full_type(self, kind: str | None, holes: list[celparse.Node]) -> str:
        """The slice's type with the parameters its holes were declared without put back."""
        kind = kind or "dyn"
        for hole in holes:
            full = self.types[id(hole)]
            declared = _truncated_type(full)
            if declared != full and declared in kind:
                kind = kind.replace(declared, full, 1)
        return kind

    def _holes(self, node: celparse.Node) -> tuple[list[celparse.Node], set[str]]:
        """The slices directly below `node` (none of them inside another), and the
        identifiers `node` uses outside them."""
        holes, idents, stack = [], set(), list(reversed(node.children))
        while stack:
            child = stack.pop()
            if id(child) in self.spots and id(child) in self.types:
                holes.append(child)
                continue
            if child.kind == "ident":
                idents.add(child.name)
            stack.extend(reversed(child.children))
        return holes, idents

    def _scope(self, node: celparse.Node, wanted: set[str]) -> dict[str, str]:
        """The variables `node` uses that macros above it bind, with their types."""
        needed = []
        child, above = node, node.parent
        while above is not None and wanted:
            names, source, bound_from = celparse.binder_scope(above)
            at = next(i for i, c in enumerate(above.children) if c is child)
            if source is not None and at >= bound_from and wanted & set(names):
                needed.append((above, names, source))
                wanted = (wanted - set(names)) | self._holes(source)[1]
            child, above = above, above.parent
        scope: dict[str, str] = {}
        for binder, names, source in reversed(needed):  # outermost first
            if id(binder) not in self.scopes:
                self.scopes[id(binder)] = self._bound(binder, names, source, dict(scope))
            scope.update(self.scopes[id(binder)])
        return scope

    def _bound(
        self, binder: celparse.Node, names: list[str], source: celparse.Node, scope: dict[str, str]
    ) -> dict[str, str]:
        """The types of a macro's variables, from the type of what it iterates or binds."""
        kind = self.types.get(id(source))
        if kind is None and self.queries < _MAX_TYPE_QUERIES:
            self.queries += 1
            result = self._check(source, self._holes(source)[0], scope)
            kind = "dyn" if isinstance(result, list) else result[0].types.get(result[0].expr.id)
        kind = kind or "dyn"
        if binder.name == "bind":
            return {names[0]: kind}
        if binder.name in ("optMap", "optFlatMap"):
            return {names[0]: _type_params(kind, "optional_type", 1)[0]}
        if kind.startswith("map("):
            return dict(zip(names, _type_params(kind, "map", 2), strict=False))
        element = _type_params(kind, "list", 1)[0]
        return dict(zip(names, ["int", element] if len(names) == 2 else [element], strict=True))

    def _check(
        self, node: celparse.Node, holes: list[celparse.Node], scope: dict[str, str]
    ) -> tuple[celast.Checked, bool] | list[str]:
        variables = dict(scope)
        parts, at = [], node.start
        for n, hole in enumerate(holes):
            name, spot = self._name(n), self.spots[id(hole)]
            variables[name] = self.types[id(hole)]
            before = _NOT_NEWLINE.sub(" ", self.expression[hole.start : spot])
            after = _NOT_NEWLINE.sub(" ", self.expression[spot + len(name) : hole.end])
            parts += [self.expression[at : hole.start], before, name, after]
            at = hole.end
        parts.append(self.expression[at : node.end])
        env = _scoped_env(tuple(sorted(variables.items())))
        text = "".join(parts)
        try:
            return celast.decode(env.compile(text).serialize()), True
        except RuntimeError as e:
            raw = _compile_error_text(str(e))
        issues = [self._restore(i, text, node.start) for i in _issues(raw)]
        remaining = [i for i in issues if _upstream_issue(i)]
        if remaining or not issues:
            return remaining or [raw]
        return celast.decode(env.compile(text, disable_check=True).serialize()), False

    def _restore(self, issue: str, text: str, start: int) -> str:
        """An issue about a slice's text as one about the selector (its line and column)."""
        m = _ISSUE_AT.match(issue)
        if m is None or int(m.group(1)) < 1:
            return issue
        lines = text.split("\n")
        line, column = int(m.group(1)), int(m.group(2))
        offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
        message = issue[m.end() :].split("\n", 1)[0]
        where, snippet = _location(self.expression, start + offset)
        return f"ERROR: <input>:{where}: {message}{snippet}"

    def _merge(self, checked: celast.Checked, start: int) -> Expr:
        """The slice's tree with ids renumbered past the slices merged before it, and its
        positions made the selector's."""
        offset, top = self.next_id, 0
        for e in _walk(checked.expr):
            top = max(top, e.id)
            e.id += offset
        self.next_id = offset + top + 1
        merged = self.merged
        merged.references.update({k + offset: v for k, v in checked.references.items()})
        merged.types.update({k + offset: v for k, v in checked.types.items()})
        merged.positions.update({k + offset: v + start for k, v in checked.positions.items()})
        return checked.expr


def _issue_position(issue: str) -> tuple[int, int]:
    m = _ISSUE_AT.match(issue)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _type_params(kind: str, name: str, count: int) -> list[str]:
    """The parameters of `name(a, b)` as cel-go prints types; dyn for anything else."""
    if not (kind.startswith(name + "(") and kind.endswith(")")):
        return ["dyn"] * count
    params, depth, start, inner = [], 0, 0, kind[len(name) + 1 : -1]
    for i, c in enumerate(inner):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            params.append(inner[start:i].strip())
            start = i + 1
    params.append(inner[start:].strip())
    return params if len(params) == count else ["dyn"] * count


_TYPE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_KNOWN_TYPES = frozenset(("bool", "int", "uint", "double", "string", "bytes", "dyn", "list"))
_KNOWN_TYPES |= {"map", "null_type", "optional_type", "type", "kubernetes.Quantity"}
_KNOWN_TYPES |= {"kubernetes.Semver", "google.protobuf.Timestamp", "google.protobuf.Duration"}


_TYPE_PART = re.compile(r"[A-Za-z0-9_.]+|[(), ]")
# The C++ checker's type nesting limit is 13; deeper parameters are declared dyn.
_TYPE_NESTING = 10


def _truncated_type(kind: str) -> str:
    """A type as the C++ checker can declare it: unknown names and deep parameters dyn."""
    text = _TYPE_WORD.sub(lambda m: m.group() if m.group() in _KNOWN_TYPES else "dyn", kind)
    out: list[str] = []
    depth = skip = 0
    for word in _TYPE_PART.findall(text):
        if skip:  # inside a parameter cut at the limit
            skip += (word == "(") - (word == ")")
            continue
        if word == "(" and depth == _TYPE_NESTING:
            out[-1], skip = "dyn", 1
            continue
        depth += (word == "(") - (word == ")")
        out.append(word)
    return "".join(out)


def _declared_type(kind: str) -> Any:
    """A type cel-go prints (`map(string, list(int))`) as a C++ declaration."""
    text = _truncated_type(kind)
    text = text.replace("(", "<").replace(")", ">").replace(" ", "")
    types = _checker().Type
    try:
        return types(text)
    except Exception:
        return types.DYN


@functools.lru_cache(maxsize=64)
def _scoped_env(variables: tuple[tuple[str, str], ...]) -> Any:
    """The environment with a slice's variables declared (building one takes milliseconds)."""
    if not variables:
        return _env()
    return _new_env({name: _declared_type(kind) for name, kind in variables})


def _graft(root: Expr, trees: Mapping[str, Expr]) -> Expr:
    """`root` with each identifier naming a slice replaced by the slice's (grafted) tree."""
    if root.kind == celast.IDENT and root.name in trees:
        return trees[root.name]
    stack = [root]
    while stack:
        e = stack.pop()
        for child, put in _slots(e):
            if child.kind == celast.IDENT and child.name in trees:
                put(trees[child.name])
            else:
                stack.append(child)
    return root


def _slots(e: Expr) -> list[tuple[Expr, Callable[[Expr], None]]]:
    """Each child of `e` with a function that puts another node in its place."""
    out: list[tuple[Expr, Callable[[Expr], None]]] = []
    if e.operand is not None:
        out.append((e.operand, functools.partial(setattr, e, "operand")))
    out += [(a, functools.partial(e.args.__setitem__, i)) for i, a in enumerate(e.args)]
    for i, (key, value, _) in enumerate(e.entries):

        def put_key(x: Expr, i: int = i) -> None:
            e.entries[i] = (x, e.entries[i][1], e.entries[i][2])

        def put_value(x: Expr, i: int = i) -> None:
            e.entries[i] = (e.entries[i][0], x, e.entries[i][2])

        out += [(key, put_key), (value, put_value)]
    for part in ("iter_range", "accu_init", "loop_condition", "loop_step", "result"):
        child = getattr(e, part)
        if child is not None:
            out.append((child, functools.partial(setattr, e, part)))
    return out


def _undeclared_includes(checked: celast.Checked, expression: str) -> str | None:
    """1.35's checker: `includes` is not declared there, and each call of it says so."""
    offsets = sorted(
        checked.positions.get(node.id, 0)
        for node in _walk(checked.expr)
        if node.kind == celast.CALL and node.name == "includes"
    )
    return _issues_at(expression, offsets, "undeclared reference to 'includes' (in container '')")


def _regex_literal_issues(checked: celast.Checked, expression: str) -> str | None:
    """cel-go's ValidateRegexLiterals: the first argument (after the receiver) of each
    `matches` call, when a literal, must be a pattern Go's regexp accepts."""
    offsets: list[int] = []
    for node in _walk(checked.expr):
        if node.kind != celast.CALL or node.name != "matches" or not node.args:
            continue
        arg = node.args[0]
        if arg.kind != celast.CONST or type(arg.value) is not str:
            continue
        try:
            Regex(arg.value)
        except RegexError:
            offsets.append(checked.positions.get(arg.id, 0))
    return _issues_at(expression, sorted(offsets), "invalid matches argument")


def _issues_at(expression: str, offsets: list[int], message: str) -> str | None:
    """cel-go's error lines, one per offset, each with its snippet (None for no offset)."""
    issues = []
    for offset in offsets:
        where, snippet = _location(expression, offset)
        issues.append(f"ERROR: <input>:{where}: {message}{snippet}")
    return "\n".join(issues) or None


def _device_references(root: Expr) -> dict[int, str]:
    """Resolve `device.<field>` in an unchecked tree, as the checker would."""
    refs: dict[int, str] = {}
    for node in _walk(root):
        operand = node.operand
        if (
            node.kind == celast.SELECT
            and operand is not None
            and operand.kind == celast.IDENT
            and operand.name == "device"
            and f"device.{node.name}" in _DEVICE_VARS
        ):
            refs[node.id] = f"device.{node.name}"
    return refs


class Cache:
    """cel.Cache: compiled selectors by expression, least recently used dropped first.
    Unlike upstream's 10 entries it keeps many: compiling is the expensive part, and one
    scheduler sees few distinct selectors; failed compilations are not kept."""

    def __init__(self, max_entries: int = 1024, features: Features = Features()) -> None:
        self.features = features
        self._max = max_entries
        self._entries: OrderedDict[str, CompilationResult] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compile(self, expression: str) -> CompilationResult:
        with self._lock:
            hit = self._entries.get(expression)
            if hit is not None:
                self._entries.move_to_end(expression)
                return hit
        result = compile_expression(expression, self.features)
        if result.error is None:
            with self._lock:
                self._entries[expression] = result
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
        return result


__all__ = [
    "SELECTOR_MAX_COST",
    "Cache",
    "CelDeadlineError",
    "CelRuntimeError",
    "CompilationResult",
    "DeviceInput",
    "Features",
    "Semver",
    "compile_expression",
    "device_input",
    "parse_semver",
]
