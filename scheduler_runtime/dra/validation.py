"""What the API server refuses of a resource.k8s.io/v1 object (ResourceClaim,
ResourceClaimTemplate, DeviceClass, ResourceSlice), for objects that did not come through it (a
state file for `simulate`): k8s.io/kubernetes v1.36.3 `pkg/apis/resource/validation` with the
limits of `pkg/apis/resource/types.go`, and the JSON decoding before it (a field of the wrong
type). Errors read as `field.ErrorList` prints them:
`spec.devices.requests[0].exactly.count: Invalid value: -5: must be greater than zero`.

Every list is measured before its items are looked at (upstream's short-circuit against
denial of service), so the work per object is bounded by its limits."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from scheduler_runtime.dra import cel
from scheduler_runtime.framework.quantity import Quantity, QuantityError
from scheduler_runtime.framework.quantity import parse as parse_quantity

VERSION: Final = "resource.k8s.io/v1"
CLAIM, TEMPLATE, CLASS, SLICE, TAINT_RULE = (
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceClass",
    "ResourceSlice",
    "DeviceTaintRule",
)
KINDS: Final = (CLAIM, TEMPLATE, CLASS, SLICE, TAINT_RULE)

# pkg/apis/resource/types.go
DRIVER_NAME_MAX_LENGTH: Final = 63
POOL_NAME_MAX_LENGTH: Final = 253
RESOURCE_SLICE_MAX_DEVICES: Final = 128
RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES: Final = 64
RESOURCE_SLICE_MAX_COUNTER_SETS: Final = 8
RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET: Final = 32
RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE: Final = 2
RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION: Final = 32
RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE: Final = 32
RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE: Final = 48
CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS: Final = 10
BINDING_CONDITIONS_MAX_SIZE: Final = 4
BINDING_FAILURE_CONDITIONS_MAX_SIZE: Final = 4
DEVICE_MAX_DOMAIN_LENGTH: Final = 63
DEVICE_MAX_ID_LENGTH: Final = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH: Final = 64
DEVICE_TAINTS_MAX_LENGTH: Final = 16
ALLOCATION_RESULTS_MAX_SIZE: Final = 32
DEVICE_REQUESTS_MAX_SIZE: Final = ALLOCATION_RESULTS_MAX_SIZE
DEVICE_CONSTRAINTS_MAX_SIZE: Final = 32
DEVICE_CONFIG_MAX_SIZE: Final = 32
DEVICE_SELECTORS_MAX_SIZE: Final = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE: Final = 8
DEVICE_TOLERATIONS_MAX_LENGTH: Final = 16
CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH: Final = 10 * 1024
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE: Final = 256
ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS: Final = 8
ATTRIBUTE_AND_CAPACITY_MAX_KEY_LENGTH: Final = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH

# Not the API server's: bounds that keep parsing a quantity cheap (the allocator holds them as
# exact integers, so `1e99999999` would be a number of a hundred million digits).
QUANTITY_MAX_LENGTH: Final = 256
QUANTITY_MAX_EXPONENT: Final = 256

EXACT_COUNT, ALL = "ExactCount", "All"
DEFAULT_FEATURES: Final = cel.Features()
TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule", "None")  # sets.List: sorted
TOLERATION_OPERATORS: Final = ("Equal", "Exists")
CONFIG_SOURCES: Final = ("FromClaim", "FromClass")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# apimachinery's util/validation and validate/content texts.
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_DNS_LABEL = re.compile(_DNS_LABEL_FMT)
_DNS_SUBDOMAIN = re.compile(_DNS_SUBDOMAIN_FMT)
_LABEL_KEY = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_C_IDENTIFIER = re.compile(_C_IDENTIFIER_FMT)
_DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string "
    "of alphanumeric characters or '_'"
)
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?",
    re.ASCII,
)
_REQUEST_REF_MSG = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)
_NODE_SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"
_DEVICE_NODE_SELECTION = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)
# What a value of the wrong type prints: Go's JSON type names as the API's schema calls them.
_TYPE_NAMES = {bool: "boolean", int: "integer", str: "string", dict: "object", list: "array"}
_SHOWN_VALUE_MAX = 64


class _Omitted:
    """field.OmitValueType: the error prints no value."""


OMIT: Final = _Omitted()


def render(value: Any) -> str:
    """A bad value as field.Error prints it: numbers and booleans with %v, strings quoted,
    anything else as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), default=str)


def _go_struct(
    names: Sequence[str], fields: Sequence[str], raw: Mapping[str, Any]
) -> dict[str, Any]:
    """An internal API struct as json.Marshal prints it in an error (it has no JSON tags):
    Go's field names in declaration order, unset ones null."""
    return {name: raw.get(field) for name, field in zip(names, fields, strict=True)}


def _go_attribute(raw: Mapping[str, Any]) -> dict[str, Any]:
    names = ("IntValue", "BoolValue", "StringValue", "VersionValue")
    lists = ("IntValues", "BoolValues", "StringValues", "VersionValues")
    fields = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
    return _go_struct((*names, *lists), fields, raw)


def _go_pod_claim(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "Name": raw.get("name") or "",
        "ResourceClaimName": raw.get("resourceClaimName"),
        "ResourceClaimTemplateName": raw.get("resourceClaimTemplateName"),
    }


def _go_terms(terms: Sequence[Any]) -> list[Any]:
    """core.NodeSelectorTerm values, as a NodeSelector error prints them."""

    def requirements(raw: Any) -> list[dict[str, Any]] | None:
        if not raw:
            return None
        return [
            _go_struct(("Key", "Operator", "Values"), ("key", "operator", "values"), r) for r in raw
        ]

    return [
        {
            "MatchExpressions": requirements(t.get("matchExpressions")),
            "MatchFields": requirements(t.get("matchFields")),
        }
        for t in terms
    ]


@dataclass(frozen=True, slots=True)
class FieldError:
    """One field.Error: where, what kind of error, the bad value (OMIT: none) and why."""

    field: str
    type: str
    value: Any = OMIT
    detail: str = ""

    def __str__(self) -> str:
        body = self.type
        if self.value is not OMIT:
            body += f": {render(self.value)}"
        if self.detail:
            body += f": {self.detail}"
        return f"{self.field}: {body}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value", OMIT, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, "Invalid value", value, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, "Forbidden", OMIT, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, "Duplicate value", value)


def not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(v) for v in supported)
    return FieldError(path, "Unsupported value", value, detail)


def not_found(path: str, value: Any) -> FieldError:
    return FieldError(path, "Not found", value)


def too_long(path: str, limit: int) -> FieldError:
    unit = "byte" if limit == 1 else "bytes"
    return FieldError(path, "Too long", OMIT, f"may not be more than {limit} {unit}")


def too_many(path: str, count: int, limit: int) -> FieldError:
    unit = "item" if limit == 1 else "items"
    return FieldError(path, "Too many", count, f"must have at most {limit} {unit}")


def wrong_type(path: str, value: Any, wanted: str) -> FieldError:
    """What JSON decoding refuses, in the words of the API's schema validation."""
    plain = isinstance(value, str | int | float | list | dict | type(None))
    shown = value if plain and len(render(value)) <= _SHOWN_VALUE_MAX else OMIT
    return FieldError(path, "Invalid value", shown, f"must be of type {wanted}")


class InvalidObjectError(ValueError):
    """An object the API server would refuse: the message names it, each field and why."""

    def __init__(self, described: str, errors: Sequence[FieldError]) -> None:
        self.errors = tuple(errors)
        # One line: a CEL diagnostic's snippet lines are joined to it.
        super().__init__(f"{described}: {aggregate(errors)}".replace("\n", " "))


def aggregate(errors: Sequence[FieldError]) -> str:
    """ErrorList.ToAggregate().Error(): one error as it is, several in brackets."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


# ---------------------------------------------------------------------------------------------
# Names (apimachinery util/validation).


def _byte_len(text: str) -> int:
    return len(text.encode())


def dns1123_label(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS_LABEL.fullmatch(value):
        if _DNS_SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS_LABEL_MSG, _DNS_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if _byte_len(value) > 253:
        errs.append(f"must be no more than 253 {unit}")
    if not _DNS_SUBDOMAIN.fullmatch(value):
        errs.append(_regex_error(_DNS_SUBDOMAIN_MSG, _DNS_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name(value: str) -> list[str]:
    """content.IsQualifiedName (a label key)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(prefix, unit="bytes")]
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY.fullmatch(name):
        errs.append(
            "name part "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


# ---------------------------------------------------------------------------------------------
# The walk over one object.

Check = Callable[[Any, str], object]


class _Validator:
    """Collects the errors of one object; `errors` is upstream's ErrorList, in its order."""

    def __init__(self, features: cel.Features) -> None:
        self.features = features
        self.errors: list[FieldError] = []
        self._compiled: dict[str, FieldError | None] = {}
        # (attributes or capacity, name, items) of device entries found valid.
        self.valid_entries: set[tuple[str, str, tuple[tuple[str, Any], ...]]] = set()

    def add(self, error: FieldError) -> None:
        self.errors.append(error)

    # ----- decoding: a value of the wrong type is an error, and is not looked at further

    def mapping(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if type(value) is not dict and not isinstance(value, Mapping):
            self.add(wrong_type(path, value, "object"))
            return None
        if not all(type(k) is str for k in value):
            self.add(wrong_type(path, value, "object"))
            return None
        return value

    def items(self, value: Any, path: str) -> Sequence[Any] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.add(wrong_type(path, value, "array"))
            return None
        return value

    def string(self, value: Any, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.add(wrong_type(path, value, "string"))
            return None
        return value

    def timestamp(self, value: Any, path: str) -> None:
        """metav1.Time: RFC 3339 text (YAML reads an unquoted one as a datetime)."""
        if value is not None and not isinstance(value, str | datetime.date):
            self.add(wrong_type(path, value, "string"))

    def integer(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
            self.add(wrong_type(path, value, "integer"))
            return None
        return value

    def boolean(self, value: Any, path: str) -> bool | None:
        if value is None:
            return None
        if type(value) is not bool:
            self.add(wrong_type(path, value, "boolean"))
            return None
        return value

    def strings(self, value: Any, path: str) -> list[str] | None:
        listed = self.items(value, path)
        if listed is None:
            return None
        kept = [self.string(v, f"{path}[{i}]") for i, v in enumerate(listed)]
        return None if any(v is None for v in kept) else [v for v in kept if v is not None]

    def quantity(self, value: Any, path: str) -> Quantity | None:
        """resource.Quantity from JSON (a string or a number), within bounds the allocator
        can hold exactly."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.add(wrong_type(path, value, "string"))
            return None
        text = str(value)
        problem = _quantity_problem(text, path)
        if problem is None:
            try:
                return parse_quantity(text)
            except QuantityError as error:
                problem = invalid(path, text, str(error))
        self.add(problem)
        return None

    # ----- upstream's list helpers

    def sized(self, value: Any, limit: int, path: str) -> Sequence[Any]:
        """validateSlice's size check (short-circuits: items of a list too long are not read)."""
        listed = self.items(value, path)
        if listed is None:
            return ()
        if 0 <= limit < len(listed):
            self.add(too_many(path, len(listed), limit))
            return ()
        return listed

    def each(self, value: Any, limit: int, path: str, check: Check) -> None:
        for index, item in enumerate(self.sized(value, limit, path)):
            check(item, f"{path}[{index}]")

    def unique(self, keys: Iterable[tuple[int, Any]], path: str) -> None:
        """validateSet's uniqueness check, by each item's key."""
        seen: set[Any] = set()
        for index, key in keys:
            if key is None:
                continue
            if key in seen:
                self.add(duplicate(f"{path}[{index}]", key))
            else:
                seen.add(key)

    def keyed(
        self,
        value: Any,
        limit: int,
        path: str,
        check_key: Callable[[str, str], None],
        check: Check,
    ) -> None:
        """validateMap: the size first, then every key and value."""
        mapped = self.mapping(value, path)
        if mapped is None:
            return
        if 0 <= limit < len(mapped):
            self.add(too_many(path, len(mapped), limit))
            return
        for key, item in mapped.items():
            check_key(key, path)
            check(item, f"{path}[{_truncated(key)}]")

    # ----- names

    def names(self, messages: list[str], path: str, value: str) -> None:
        for message in messages:
            self.add(invalid(path, value, message))

    def _named(self, value: Any, path: str, rule: Callable[[str], list[str]]) -> None:
        text = self.string(value, path)
        if text is not None:
            self.names(rule(text), path, text)

    def dns_label(self, value: Any, path: str) -> None:
        self._named(value, path, dns1123_label)

    def dns_subdomain(self, value: Any, path: str) -> None:
        self._named(value, path, dns1123_subdomain)

    def label_name(self, value: Any, path: str) -> None:
        self._named(value, path, qualified_name)

    def label_value(self, value: Any, path: str) -> None:
        self._named(value, path, label_value)

    def driver_name(self, value: Any, path: str) -> None:
        """ValidateCSIDriverName."""
        text = self.string(value, path)
        if text is None or text == "":
            if text is not None or value is None:
                self.add(required(path))
            return
        if _byte_len(text) > DRIVER_NAME_MAX_LENGTH:
            self.add(too_long(path, DRIVER_NAME_MAX_LENGTH))
        self.names(dns1123_subdomain(text.lower()), path, text)

    def pool_name(self, value: Any, path: str) -> None:
        text = self.string(value, path)
        if not text:
            if text is not None or value is None:
                self.add(required(path))
            return
        if _byte_len(text) > POOL_NAME_MAX_LENGTH:
            self.add(too_long(path, POOL_NAME_MAX_LENGTH))
        for part in text.split("/"):
            self.names(dns1123_subdomain(part), path, part)

    def device_class_name(self, value: Any, path: str) -> None:
        text = self.string(value, path)
        if not text:
            if text is not None or value is None:
                self.add(required(path))
            return
        self.names(dns1123_subdomain(text), path, text)

    def c_identifier(self, text: str, path: str) -> None:
        if _byte_len(text) > DEVICE_MAX_ID_LENGTH:
            self.add(too_long(path, DEVICE_MAX_ID_LENGTH))
        if not _C_IDENTIFIER.fullmatch(text):
            self.add(
                invalid(
                    path,
                    text,
                    _regex_error(
                        _C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName"
                    ),
                )
            )

    def qualified(self, name: str, path: str) -> None:
        """validateQualifiedName: `id` or `domain/id` (an attribute or capacity name)."""
        parts = name.split("/")
        if len(parts) == 1:
            self.c_identifier(parts[0], path)
        elif len(parts) == 2:
            if not parts[0]:
                self.add(invalid(path, "", "the domain must not be empty"))
            else:
                self.driver_name(parts[0], path)
            if not parts[1]:
                self.add(invalid(path, "", "the name must not be empty"))
            else:
                self.c_identifier(parts[1], path)

    def fully_qualified(self, value: Any, path: str) -> None:
        name = self.string(value, path)
        if name is None:
            return
        self.qualified(name, path)
        if "/" not in name:
            self.add(
                invalid(
                    path,
                    name,
                    "a fully qualified name must be a domain and a name separated by a slash",
                )
            )

    def node_name(self, value: str, path: str) -> None:
        self.names(dns1123_subdomain(value), path, value)

    # ----- CEL

    def cel_expression(self, value: Any, path: str) -> None:
        expression = "" if value is None else self.string(value, path)
        if expression is None:
            return
        if _byte_len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            self.add(too_long(path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH))
            return  # upstream does not compile an expression that long
        if expression not in self._compiled:
            self._compiled[expression] = _compile_error(expression, self.features)
        error = self._compiled[expression]
        if error is not None:
            shown = expression if error.type == "Invalid value" else OMIT
            self.add(FieldError(path, error.type, shown, error.detail))


def _compile_error(expression: str, features: cel.Features) -> FieldError | None:
    """CompileCELExpression's error (its field and value are filled in by the caller); a
    failure of the compiler itself is field.InternalError, as upstream reports one."""
    try:
        error = cel.compile_expression(expression, features).error
    except (RuntimeError, ValueError, RecursionError) as failure:
        # The compiler's own status, when what failed was reading it.
        cause = failure.__context__
        detail = str(cause if isinstance(cause, RuntimeError) else failure)
        return FieldError("", "Internal error", OMIT, detail)
    return None if error is None else FieldError("", "Invalid value", OMIT, error)


def _truncated(key: str, limit: int = ATTRIBUTE_AND_CAPACITY_MAX_KEY_LENGTH) -> str:
    """truncateIfTooLong: a long map key printed with its middle cut out."""
    limit = max(limit, 16)
    if len(key) <= limit:
        return key
    remaining = limit - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2 :]


def _quantity_problem(text: str, path: str) -> FieldError | None:
    """What keeps a quantity from being parsed in bounded time."""
    if len(text) > QUANTITY_MAX_LENGTH:
        return too_long(path, QUANTITY_MAX_LENGTH)
    if _exponent_out_of_range(text):
        return invalid(path, text, "the exponent is out of range")
    return None


def _exponent_out_of_range(text: str) -> bool:
    """A decimal exponent (`1e400`) past what the allocator can hold exactly."""
    for marker in ("e", "E"):
        _, found, exponent = text.partition(marker)
        if found and exponent.lstrip("+-").isdigit():
            return len(exponent) > 6 or abs(int(exponent)) > QUANTITY_MAX_EXPONENT
    return False


def _obj(v: _Validator, value: Any, path: str) -> Mapping[str, Any] | None:
    """A struct field: null decodes as the zero struct, a non-object is an error."""
    return {} if value is None else v.mapping(value, path)


# ---------------------------------------------------------------------------------------------
# ResourceClaim and ResourceClaimTemplate.

RequestNames = dict[str, frozenset[str] | None]


def _claim_spec(v: _Validator, raw: Any, path: str) -> RequestNames:
    """validateResourceClaimSpec; the request names (gatherRequestNames) for the status."""
    spec = _obj(v, raw, path)
    devices = _obj(v, (spec or {}).get("devices"), f"{path}.devices")
    if devices is None:
        return {}
    path = f"{path}.devices"
    requests = v.sized(devices.get("requests"), DEVICE_REQUESTS_MAX_SIZE, f"{path}.requests")
    names = _request_names(requests)
    for index, request in enumerate(requests):
        _device_request(v, request, f"{path}.requests[{index}]")
    v.unique(_names_of(requests), f"{path}.requests")
    v.each(
        devices.get("constraints"),
        DEVICE_CONSTRAINTS_MAX_SIZE,
        f"{path}.constraints",
        lambda c, where: _constraint(v, c, where, names),
    )
    v.each(
        devices.get("config"),
        DEVICE_CONFIG_MAX_SIZE,
        f"{path}.config",
        lambda c, where: _claim_config(v, c, where, names),
    )
    return names


def _names_of(items: Sequence[Any], key: str = "name") -> Iterable[tuple[int, Any]]:
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and isinstance(item.get(key), str):
            yield index, item[key]


def _request_names(requests: Sequence[Any]) -> RequestNames:
    names: RequestNames = {}
    for request in requests:
        if not isinstance(request, Mapping) or not isinstance(request.get("name", ""), str):
            continue
        subrequests = request.get("firstAvailable")
        if not isinstance(subrequests, list) or not subrequests:
            names[request.get("name", "")] = None
            continue
        names[request.get("name", "")] = frozenset(
            s["name"]
            for s in subrequests
            if isinstance(s, Mapping) and isinstance(s.get("name"), str)
        )
    return names


def _has_request(names: RequestNames, reference: str) -> bool:
    segments = reference.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    subrequests = names[segments[0]]
    return len(segments) == 1 or (subrequests is not None and segments[1] in subrequests)


def _device_request(v: _Validator, raw: Any, path: str) -> None:
    request = _obj(v, raw, path)
    if request is None:
        return
    v.dns_label(request.get("name", ""), f"{path}.name")
    subrequests = v.items(request.get("firstAvailable"), f"{path}.firstAvailable")
    exactly = request.get("exactly")
    kinds = bool(subrequests) + (exactly is not None)
    if kinds == 0 and subrequests is None and request.get("firstAvailable") is not None:
        return  # firstAvailable of the wrong type: already said
    if kinds == 0:
        v.add(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif kinds > 1:
        v.add(
            invalid(
                path,
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                "fields are set",
            )
        )
    elif subrequests:
        where = f"{path}.firstAvailable"
        v.each(
            subrequests,
            FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
            where,
            lambda s, at: _exact_request(v, s, at, subrequest=True),
        )
        if len(subrequests) <= FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE:
            v.unique(_names_of(subrequests), where)
    else:
        _exact_request(v, exactly, f"{path}.exactly", subrequest=False)


def _exact_request(v: _Validator, raw: Any, path: str, *, subrequest: bool) -> None:
    """validateExactDeviceRequest, or validateDeviceSubRequest (which has a name and no
    adminAccess)."""
    request = _obj(v, raw, path)
    if request is None:
        return
    if subrequest:
        v.dns_label(request.get("name", ""), f"{path}.name")
    else:
        v.boolean(request.get("adminAccess"), f"{path}.adminAccess")
    v.device_class_name(request.get("deviceClassName"), f"{path}.deviceClassName")
    _selectors(v, request.get("selectors"), f"{path}.selectors")
    _allocation_mode(v, request, path)
    tolerations = request.get("tolerations")
    v.each(tolerations, DEVICE_TOLERATIONS_MAX_LENGTH, f"{path}.tolerations", v_toleration(v))
    capacity = _obj(v, request.get("capacity"), f"{path}.capacity")
    if capacity:
        # Upstream checks neither the names nor the count here: only that each is a quantity.
        v.keyed(capacity.get("requests"), -1, f"{path}.capacity.requests", _any_key, v.quantity)


def _any_key(key: str, path: str) -> None:
    """A map key upstream does not check."""


def _allocation_mode(v: _Validator, request: Mapping[str, Any], path: str) -> None:
    """validateDeviceAllocationMode, after the defaults (ExactCount; a count of 0 is 1)."""
    mode = v.string(request.get("allocationMode"), f"{path}.allocationMode")
    count = v.integer(request.get("count"), f"{path}.count")
    if mode is None and request.get("allocationMode") is not None:
        return
    mode = mode or EXACT_COUNT
    if mode == ALL:
        if count:
            v.add(
                invalid(
                    f"{path}.count", count, f"must not be specified when allocationMode is '{ALL}'"
                )
            )
    elif mode == EXACT_COUNT:
        if count is not None and count < 0:
            v.add(invalid(f"{path}.count", count, "must be greater than zero"))
    else:
        v.add(not_supported(f"{path}.allocationMode", mode, (ALL, EXACT_COUNT)))


def _selectors(v: _Validator, raw: Any, path: str) -> None:
    v.each(raw, DEVICE_SELECTORS_MAX_SIZE, path, lambda s, at: _selector(v, s, at))


def _selector(v: _Validator, raw: Any, path: str) -> None:
    selector = _obj(v, raw, path)
    if selector is None:
        return
    if selector.get("cel") is None:
        v.add(required(f"{path}.cel"))
        return
    expression = _obj(v, selector["cel"], f"{path}.cel")
    if expression is not None:
        v.cel_expression(expression.get("expression", ""), f"{path}.cel.expression")


def v_toleration(v: _Validator) -> Check:
    def check(raw: Any, path: str) -> None:
        toleration = _obj(v, raw, path)
        if toleration is None:
            return
        key = v.string(toleration.get("key"), f"{path}.key")
        if key:
            v.label_name(key, f"{path}.key")
        value = v.string(toleration.get("value"), f"{path}.value") or ""
        operator = v.string(toleration.get("operator"), f"{path}.operator")
        operator = "Equal" if operator is None or operator == "" else operator
        if operator == "Exists":
            if value:
                v.add(invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
        elif operator == "Equal":
            v.label_value(value, f"{path}.value")
        else:
            v.add(not_supported(f"{path}.operator", operator, TOLERATION_OPERATORS))
        effect = v.string(toleration.get("effect"), f"{path}.effect")
        if effect and effect not in TAINT_EFFECTS:
            v.add(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
        v.integer(toleration.get("tolerationSeconds"), f"{path}.tolerationSeconds")

    return check


def _request_refs(v: _Validator, raw: Any, path: str, names: RequestNames) -> None:
    """A set of request names (`request` or `request/subrequest`) that must exist."""
    references = v.sized(raw, DEVICE_REQUESTS_MAX_SIZE, path)
    for index, reference in enumerate(references):
        _request_ref(v, reference, f"{path}[{index}]", names)
    v.unique(((i, r) for i, r in enumerate(references) if isinstance(r, str)), path)


def _request_ref(v: _Validator, raw: Any, path: str, names: RequestNames) -> None:
    reference = v.string(raw, path)
    if reference is None:
        if raw is None:
            v.dns_label("", path)
        return
    segments = reference.split("/")
    if len(segments) > 2:
        v.add(invalid(path, reference, _REQUEST_REF_MSG))
        return
    for segment in segments:
        v.dns_label(segment, path)
    if not _has_request(names, reference):
        v.add(invalid(path, reference, _REQUEST_REF_MSG))


def _constraint(v: _Validator, raw: Any, path: str, names: RequestNames) -> None:
    constraint = _obj(v, raw, path)
    if constraint is None:
        return
    _request_refs(v, constraint.get("requests"), f"{path}.requests", names)
    if constraint.get("matchAttribute") is not None:
        v.fully_qualified(constraint["matchAttribute"], f"{path}.matchAttribute")
    elif constraint.get("distinctAttribute") is not None:
        v.fully_qualified(constraint["distinctAttribute"], f"{path}.distinctAttribute")
    elif v.features.consumable_capacity:
        v.add(
            required(
                path,
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                "multiple fields are set",
            )
        )
    else:
        v.add(required(f"{path}.matchAttribute"))


def _claim_config(v: _Validator, raw: Any, path: str, names: RequestNames) -> None:
    config = _obj(v, raw, path)
    if config is None:
        return
    _request_refs(v, config.get("requests"), f"{path}.requests", names)
    _device_config(v, config, path)


def _device_config(v: _Validator, config: Mapping[str, Any], path: str) -> None:
    """validateDeviceConfiguration: an opaque configuration for a driver."""
    if config.get("opaque") is None:
        v.add(required(f"{path}.opaque"))
        return
    opaque = _obj(v, config["opaque"], f"{path}.opaque")
    if opaque is None:
        return
    v.driver_name(opaque.get("driver"), f"{path}.opaque.driver")
    _raw_extension(v, opaque.get("parameters"), f"{path}.opaque.parameters")


def _raw_extension(v: _Validator, value: Any, path: str) -> None:
    """validateRawExtension: a JSON object of at most 10 KiB."""
    if value is None:
        v.add(required(path))
        return
    size = len(json.dumps(value, separators=(",", ":"), default=str).encode())
    if size > OPAQUE_PARAMETERS_MAX_LENGTH:
        v.add(too_long(path, OPAQUE_PARAMETERS_MAX_LENGTH))
    elif not isinstance(value, Mapping):
        v.add(invalid(path, "<value omitted>", "must be a valid JSON object"))


def _claim_status(v: _Validator, raw: Any, names: RequestNames) -> None:
    """validateResourceClaimStatusUpdate from an empty status: what a claim's status may hold."""
    status = _obj(v, raw, "status")
    if status is None:
        return
    reserved = v.sized(
        status.get("reservedFor"), RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE, "status.reservedFor"
    )
    for index, consumer in enumerate(reserved):
        _consumer(v, consumer, f"status.reservedFor[{index}]")
    v.unique(_names_of(reserved, "uid"), "status.reservedFor")
    allocation = _obj(v, status.get("allocation"), "status.allocation")
    if reserved and status.get("allocation") is None:
        v.add(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
    if status.get("allocation") is not None and allocation is not None:
        _allocation(v, allocation, "status.allocation", names)
    v.each(status.get("devices"), -1, "status.devices", lambda d, at: _device_status(v, d, at))


def _consumer(v: _Validator, raw: Any, path: str) -> None:
    consumer = _obj(v, raw, path)
    if consumer is None:
        return
    for field in ("resource", "name", "uid"):
        if not v.string(consumer.get(field), f"{path}.{field}") and (
            consumer.get(field) is None or consumer.get(field) == ""
        ):
            v.add(required(f"{path}.{field}"))
    v.string(consumer.get("apiGroup"), f"{path}.apiGroup")


def _allocation(
    v: _Validator, allocation: Mapping[str, Any], path: str, names: RequestNames
) -> None:
    devices = _obj(v, allocation.get("devices"), f"{path}.devices")
    if devices is not None:
        where = f"{path}.devices"
        v.each(
            devices.get("results"),
            ALLOCATION_RESULTS_MAX_SIZE,
            f"{where}.results",
            lambda r, at: _result(v, r, at, names),
        )
        v.each(
            devices.get("config"),
            2 * DEVICE_CONFIG_MAX_SIZE,
            f"{where}.config",
            lambda c, at: _allocation_config(v, c, at, names),
        )
    if allocation.get("nodeSelector") is not None:
        _node_selector(v, allocation["nodeSelector"], f"{path}.nodeSelector")


def _result(v: _Validator, raw: Any, path: str, names: RequestNames) -> None:
    result = _obj(v, raw, path)
    if result is None:
        return
    _request_ref(v, result.get("request", ""), f"{path}.request", names)
    v.driver_name(result.get("driver"), f"{path}.driver")
    v.pool_name(result.get("pool"), f"{path}.pool")
    v.dns_label(result.get("device", ""), f"{path}.device")
    _binding_parameters(v, result, path)
    share = v.string(result.get("shareID"), f"{path}.shareID")
    if share is not None:
        _uid(v, share, f"{path}.shareID")
    v.boolean(result.get("adminAccess"), f"{path}.adminAccess")
    consumed = result.get("consumedCapacity")
    v.keyed(consumed, -1, f"{path}.consumedCapacity", lambda key, at: None, v.quantity)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _uid(v: _Validator, uid: str, path: str) -> None:
    if not _UUID.fullmatch(uid):
        v.add(
            invalid(
                path,
                uid,
                "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                "with lowercase hexadecimal characters",
            )
        )


def _allocation_config(v: _Validator, raw: Any, path: str, names: RequestNames) -> None:
    config = _obj(v, raw, path)
    if config is None:
        return
    source = v.string(config.get("source"), f"{path}.source")
    if source is None or source == "":
        if config.get("source") is None or source == "":
            v.add(required(f"{path}.source"))
    elif source not in CONFIG_SOURCES:
        v.add(not_supported(f"{path}.source", source, CONFIG_SOURCES))
    _request_refs(v, config.get("requests"), f"{path}.requests", names)
    _device_config(v, config, path)


def _device_status(v: _Validator, raw: Any, path: str) -> None:
    device = _obj(v, raw, path)
    if device is None:
        return
    v.driver_name(device.get("driver"), f"{path}.driver")
    v.pool_name(device.get("pool"), f"{path}.pool")
    v.dns_label(device.get("device", ""), f"{path}.device")
    conditions = v.items(device.get("conditions"), f"{path}.conditions")
    if conditions is not None and len(conditions) > ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS:
        v.add(
            too_many(f"{path}.conditions", len(conditions), ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS)
        )


def _binding_parameters(v: _Validator, owner: Mapping[str, Any], path: str) -> None:
    """validateDeviceBindingParameters."""
    conditions_path = f"{path}.bindingConditions"
    failures_path = f"{path}.bindingFailureConditions"
    conditions = v.sized(
        owner.get("bindingConditions"), BINDING_CONDITIONS_MAX_SIZE, conditions_path
    )
    failures = v.sized(
        owner.get("bindingFailureConditions"), BINDING_FAILURE_CONDITIONS_MAX_SIZE, failures_path
    )
    for index, condition in enumerate(conditions):
        v.label_name(condition, f"{conditions_path}[{index}]")
    for index, condition in enumerate(failures):
        v.label_name(condition, f"{failures_path}[{index}]")
    conditions = [c for c in conditions if isinstance(c, str)]
    failures = [c for c in failures if isinstance(c, str)]
    v.unique(enumerate(conditions), conditions_path)
    v.unique(enumerate(failures), failures_path)
    for index, condition in enumerate(failures):
        if condition in conditions:
            v.add(
                invalid(
                    f"{failures_path}[{index}]",
                    condition,
                    "bindingFailureConditions must not overlap with bindingConditions",
                )
            )
    if not conditions and failures:
        v.add(
            invalid(
                conditions_path,
                owner.get("bindingConditions"),
                "bindingConditions are required to use bindingFailureConditions",
            )
        )
    if not failures and conditions:
        v.add(
            invalid(
                failures_path,
                owner.get("bindingFailureConditions"),
                "bindingFailureConditions are required to use bindingConditions",
            )
        )


# ---------------------------------------------------------------------------------------------
# core/v1 NodeSelector (ValidateNodeSelector).


def _node_selector(v: _Validator, raw: Any, path: str) -> Sequence[Any]:
    selector = _obj(v, raw, path)
    if selector is None:
        return ()
    terms_path = f"{path}.nodeSelectorTerms"
    terms = v.items(selector.get("nodeSelectorTerms"), terms_path)
    if terms is None and selector.get("nodeSelectorTerms") is not None:
        return ()
    if not terms:
        v.add(required(terms_path, "must have at least one node selector term"))
        return ()
    for index, raw_term in enumerate(terms):
        term = _obj(v, raw_term, f"{terms_path}[{index}]")
        if term is None:
            continue
        where = f"{terms_path}[{index}]"
        v.each(
            term.get("matchExpressions"),
            -1,
            f"{where}.matchExpressions",
            lambda r, at: _label_requirement(v, r, at),
        )
        v.each(
            term.get("matchFields"),
            -1,
            f"{where}.matchFields",
            lambda r, at: _field_requirement(v, r, at),
        )
    return terms


def _label_requirement(v: _Validator, raw: Any, path: str) -> None:
    requirement = _obj(v, raw, path)
    if requirement is None:
        return
    operator = v.string(requirement.get("operator"), f"{path}.operator") or ""
    values = v.strings(requirement.get("values"), f"{path}.values") or []
    if operator in ("In", "NotIn"):
        if not values:
            v.add(
                required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            v.add(
                forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            v.add(
                required(
                    f"{path}.values",
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        v.add(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    v.label_name(requirement.get("key", ""), f"{path}.key")
    for index, value in enumerate(values):
        v.label_value(value, f"{path}.values[{index}]")


def _field_requirement(v: _Validator, raw: Any, path: str) -> None:
    requirement = _obj(v, raw, path)
    if requirement is None:
        return
    operator = v.string(requirement.get("operator"), f"{path}.operator") or ""
    values = v.strings(requirement.get("values"), f"{path}.values") or []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            v.add(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector",
                )
            )
    else:
        v.add(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = v.string(requirement.get("key"), f"{path}.key")
    if key != "metadata.name":
        if key is not None or requirement.get("key") is None:
            v.add(invalid(f"{path}.key", key or "", "not a valid field selector key"))
        return
    for index, value in enumerate(values):
        v.node_name(value, f"{path}.values[{index}]")


# ---------------------------------------------------------------------------------------------
# DeviceClass.


def _class_spec(v: _Validator, raw: Any) -> None:
    spec = _obj(v, raw, "spec")
    if spec is None:
        return
    _selectors(v, spec.get("selectors"), "spec.selectors")

    def config(item: Any, path: str) -> None:
        entry = _obj(v, item, path)
        if entry is not None:
            _device_config(v, entry, path)

    v.each(spec.get("config"), DEVICE_CONFIG_MAX_SIZE, "spec.config", config)
    name = v.string(spec.get("extendedResourceName"), "spec.extendedResourceName")
    if name is not None and not _extended_resource_name(name):
        v.add(invalid("spec.extendedResourceName", name, "must be a valid extended resource name"))


def _extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not qualified_name("requests." + name)


# ---------------------------------------------------------------------------------------------
# ResourceSlice.


def _slice_spec(v: _Validator, raw: Any) -> None:
    spec = _obj(v, raw, "spec")
    if spec is None:
        return
    v.driver_name(spec.get("driver"), "spec.driver")
    _pool(v, spec.get("pool"), "spec.pool")
    chosen = _node_selection(v, spec)
    if len(chosen) == 0:
        v.add(required("spec", f"{_NODE_SELECTION} is required"))
    elif len(chosen) > 1:
        v.add(
            invalid(
                "spec",
                "{" + ", ".join(chosen) + "}",
                f"{_NODE_SELECTION} is required, but multiple fields are set",
            )
        )
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        v.add(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    raw_devices = spec.get("devices")
    limit = RESOURCE_SLICE_MAX_DEVICES
    if isinstance(raw_devices, list) and any(
        _advanced(d) for d in raw_devices[: RESOURCE_SLICE_MAX_DEVICES + 1]
    ):
        limit = RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
    per_device = spec.get("perDeviceNodeSelection") is True
    devices = v.sized(raw_devices, limit, "spec.devices")
    for index, device in enumerate(devices):
        _device(v, device, f"spec.devices[{index}]", per_device)
    v.unique(_names_of(devices), "spec.devices")
    counter_sets = v.sized(
        spec.get("sharedCounters"), RESOURCE_SLICE_MAX_COUNTER_SETS, "spec.sharedCounters"
    )
    for index, counter_set in enumerate(counter_sets):
        _counter_set(v, counter_set, f"spec.sharedCounters[{index}]", "name")
    v.unique(_names_of(counter_sets), "spec.sharedCounters")


def _pool(v: _Validator, raw: Any, path: str) -> None:
    pool = _obj(v, raw, path)
    if pool is None:
        return
    v.pool_name(pool.get("name"), f"{path}.name")
    count = v.integer(pool.get("resourceSliceCount"), f"{path}.resourceSliceCount")
    decoded = count is not None or pool.get("resourceSliceCount") is None
    if decoded and (count or 0) <= 0:
        v.add(invalid(f"{path}.resourceSliceCount", count or 0, "must be greater than zero"))
    generation = v.integer(pool.get("generation"), f"{path}.generation")
    if generation is not None and generation < 0:
        v.add(invalid(f"{path}.generation", generation, "must be greater than or equal to zero"))


def _node_selection(v: _Validator, spec: Mapping[str, Any]) -> list[str]:
    """Which of the slice's node fields are set, each checked."""
    chosen = []
    name = v.string(spec.get("nodeName"), "spec.nodeName")
    if name:
        chosen.append("`nodeName`")
        v.node_name(name, "spec.nodeName")
    elif name is not None:
        v.add(invalid("spec.nodeName", name, "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        terms = _node_selector(v, spec["nodeSelector"], "spec.nodeSelector")
        if len(terms) > 1:
            v.add(
                invalid(
                    "spec.nodeSelector.nodeSelectorTerms",
                    _go_terms(terms),
                    "must have exactly one node selector term",
                )
            )
    for field in ("allNodes", "perDeviceNodeSelection"):
        flag = v.boolean(spec.get(field), f"spec.{field}")
        if flag:
            chosen.append(f"`{field}`")
        elif flag is not None:
            v.add(invalid(f"spec.{field}", False, "must be either unset or set to true"))
    return chosen


_LIST_ATTRIBUTE_FIELDS = ("bools", "ints", "strings", "versions")


def _advanced(device: Any) -> bool:
    """Taints, counters or list attributes: the lower device limit applies."""
    if not isinstance(device, Mapping):
        return False
    if device.get("taints") or device.get("consumesCounters"):
        return True
    attributes = device.get("attributes")
    if not isinstance(attributes, Mapping):
        return False
    return any(
        isinstance(a, Mapping) and any(a.get(f) is not None for f in _LIST_ATTRIBUTE_FIELDS)
        for a in list(attributes.values())[
            : RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE + 1
        ]
    )


def _device(v: _Validator, raw: Any, path: str, per_device: bool) -> None:
    device = _obj(v, raw, path)
    if device is None:
        return
    v.dns_label(device.get("name", ""), f"{path}.name")
    multiple = v.boolean(device.get("allowMultipleAllocations"), f"{path}.allowMultipleAllocations")
    attributes = v.mapping(device.get("attributes"), f"{path}.attributes") or {}
    capacity = v.mapping(device.get("capacity"), f"{path}.capacity") or {}
    total = len(attributes) + len(capacity)
    if total > RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        v.add(
            invalid(
                path,
                total,
                "the total number of attributes and capacities must not exceed "
                f"{RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}",
            )
        )
        return  # not in upstream: the attributes of a device this large are not read
    values = _attribute_values(attributes)
    if values > RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        v.add(
            invalid(
                path,
                values,
                "the total number of attribute values must not exceed "
                f"{RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE}",
            )
        )
        return
    _entries(v, attributes, f"{path}.attributes", lambda a, at: _attribute(v, a, at))
    _entries(
        v,
        capacity,
        f"{path}.capacity",
        lambda c, at: _capacity(v, c, at, multiple=bool(multiple)),
    )
    v.each(
        device.get("taints"),
        DEVICE_TAINTS_MAX_LENGTH,
        f"{path}.taints",
        lambda t, at: _taint(v, t, at),
    )
    consumes = v.sized(
        device.get("consumesCounters"),
        RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
        f"{path}.consumesCounters",
    )
    for index, consumption in enumerate(consumes):
        _counter_set(v, consumption, f"{path}.consumesCounters[{index}]", "counterSet")
    v.unique(_names_of(consumes, "counterSet"), f"{path}.consumesCounters")
    _device_node_selection(v, device, path, per_device)
    _binding_parameters(v, device, path)
    v.boolean(device.get("bindsToNode"), f"{path}.bindsToNode")
    _resource_mappings(v, device.get("nodeAllocatableResourceMappings"), capacity, path)


def _entries(v: _Validator, entries: Mapping[str, Any], path: str, check: Check) -> None:
    """validateMap over a device's attributes or capacities. The devices of a slice mostly
    repeat each other's entries (`model: a100`), so an entry of plain values found valid
    once is not checked again."""
    for key, item in entries.items():
        plain = None
        if type(item) is dict and all(type(x) in (str, int, bool) for x in item.values()):
            plain = (path.rpartition(".")[2], key, tuple(item.items()))
            if plain in v.valid_entries:
                continue
        before = len(v.errors)
        v.qualified(key, path)
        check(item, f"{path}[{_truncated(key)}]")
        if plain is not None and len(v.errors) == before:
            v.valid_entries.add(plain)


def _attribute_values(attributes: Mapping[str, Any]) -> int:
    """numEntriesDeviceAttribute: a scalar counts one, a list each of its items."""
    count = 0
    for attribute in attributes.values():
        listed = [
            attribute.get(f) for f in _LIST_ATTRIBUTE_FIELDS if isinstance(attribute, Mapping)
        ]
        sizes = [len(x) for x in listed if isinstance(x, list)]
        count += sum(sizes) if any(sizes) else 1
    return count


def _attribute(v: _Validator, raw: Any, path: str) -> None:
    attribute = _obj(v, raw, path)
    if attribute is None:
        return
    fields = 0
    if v.boolean(attribute.get("bool"), f"{path}.bool") is not None:
        fields += 1
    if v.integer(attribute.get("int"), f"{path}.int") is not None:
        fields += 1
    text = v.string(attribute.get("string"), f"{path}.string")
    if text is not None:
        fields += 1
        _attribute_string(v, text, f"{path}.string")
    version = v.string(attribute.get("version"), f"{path}.version")
    if version is not None:
        fields += 1
        _attribute_version(v, version, f"{path}.version")
    fields += _attribute_lists(v, attribute, path)
    if fields == 0 and all(attribute.get(f) is None for f in attribute):
        v.add(invalid(path, "", "exactly one value must be specified"))
    elif fields > 1:
        v.add(invalid(path, _go_attribute(attribute), "exactly one value must be specified"))


def _attribute_lists(v: _Validator, attribute: Mapping[str, Any], path: str) -> int:
    fields = 0
    checks: dict[str, Callable[[Any, str], Any]] = {
        "bools": v.boolean,
        "ints": v.integer,
        "strings": lambda s, at: _attribute_string(v, v.string(s, at), at),
        "versions": lambda s, at: _attribute_version(v, v.string(s, at), at),
    }
    for name, check in checks.items():
        listed = v.items(attribute.get(name), f"{path}.{name}")
        if listed is None:
            continue
        fields += 1
        if not listed:
            v.add(invalid(f"{path}.{name}", [], "must not be empty if specified"))
        for index, item in enumerate(listed):
            check(item, f"{path}.{name}[{index}]")
    return fields


def _attribute_string(v: _Validator, text: str | None, path: str) -> None:
    if text is not None and _byte_len(text) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        v.add(too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))


def _attribute_version(v: _Validator, text: str | None, path: str) -> None:
    if text is None:
        return
    if not _SEMVER.fullmatch(text):
        v.add(invalid(path, text, "must be a string compatible with semver.org spec 2.0.0"))
    if _byte_len(text) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        v.add(too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))


def _capacity(v: _Validator, raw: Any, path: str, *, multiple: bool) -> None:
    capacity = _obj(v, raw, path)
    if capacity is None:
        return
    value = v.quantity(capacity.get("value"), f"{path}.value")
    if capacity.get("requestPolicy") is None:
        return
    if not multiple:
        v.add(forbidden(f"{path}.requestPolicy", "allowMultipleAllocations must be true"))
        return
    policy = _obj(v, capacity["requestPolicy"], f"{path}.requestPolicy")
    if policy is not None:
        _request_policy(v, value or Quantity(0), policy, f"{path}.requestPolicy")


def _request_policy(v: _Validator, maximum: Quantity, policy: Mapping[str, Any], path: str) -> None:
    """validateRequestPolicy: validValues or validRange, each with a default inside."""
    default = v.quantity(policy.get("default"), f"{path}.default")
    options = v.sized(policy.get("validValues"), -1, f"{path}.validValues")
    valid_range = _obj(v, policy.get("validRange"), f"{path}.validRange")
    if options and policy.get("validRange") is not None:
        v.add(
            forbidden(
                path,
                'exactly one policy can be specified, cannot specify "validValues" and '
                '"validRange" at the same time',
            )
        )
    elif options:
        if default is None:
            v.add(required(f"{path}.default", "required when validValues is defined"))
        else:
            _valid_values(v, default, maximum, options, f"{path}.validValues")
    elif policy.get("validRange") is not None and valid_range is not None:
        if default is None:
            v.add(required(f"{path}.default", "required when validRange is defined"))
        else:
            _valid_range(v, default, maximum, valid_range, f"{path}.validRange")


def _valid_values(
    v: _Validator, default: Quantity, maximum: Quantity, raw: Sequence[Any], path: str
) -> None:
    if len(raw) > CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS:
        v.add(too_many(path, len(raw), CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS))
        return
    values = [v.quantity(q, f"{path}[{i}]") for i, q in enumerate(raw)]
    if any(q is None for q in values):
        return
    options = [q for q in values if q is not None]
    for index in range(len(options) - 1):
        if options[index] > options[index + 1]:
            v.add(
                invalid(
                    f"{path}[{index + 1}]",
                    str(options[index + 1]),
                    "values must be sorted in ascending order",
                )
            )
    for index, option in enumerate(options):
        if option > maximum:
            v.add(
                invalid(
                    f"{path}[{index}]",
                    str(option),
                    f"option is larger than capacity value: {maximum}",
                )
            )
    v.unique(((i, q.value()) for i, q in enumerate(options)), path)
    if default not in options:
        v.add(
            invalid(path, str(default), "default value is not valid according to the requestPolicy")
        )


def _valid_range(
    v: _Validator, default: Quantity, maximum: Quantity, raw: Mapping[str, Any], path: str
) -> None:
    low = v.quantity(raw.get("min"), f"{path}.min")
    high = v.quantity(raw.get("max"), f"{path}.max")
    step = v.quantity(raw.get("step"), f"{path}.step")
    if low is None:
        if raw.get("min") is None:
            v.add(required(f"{path}.min", "required when validRange is defined"))
        return
    if low > maximum:
        v.add(invalid(f"{path}.min", str(low), f"min is larger than capacity value: {maximum}"))
    if default < low:
        v.add(invalid(f"{path}.min", str(default), f"default is less than min: {low}"))
    if high is not None:
        if low > high:
            v.add(invalid(f"{path}.max", str(low), f"min is larger than max: {high}"))
        if high > maximum:
            v.add(
                invalid(f"{path}.max", str(high), f"max is larger than capacity value: {maximum}")
            )
        if default > high:
            v.add(invalid(f"{path}.max", str(default), f"default is more than max: {high}"))
    if step is not None:
        _range_step(v, (default, high), (low, step, maximum), f"{path}.step")


def _range_step(
    v: _Validator,
    values: tuple[Quantity | None, ...],
    bounds: tuple[Quantity, Quantity, Quantity],
    path: str,
) -> None:
    """One step above min fits the capacity; the default and max are whole steps from min.
    `bounds`: min, step and the capacity."""
    low, step, maximum = bounds
    added = low.plus(step)
    if added > maximum:
        v.add(
            invalid(path, str(step), f"one step {added} is larger than capacity value: {maximum}")
        )
    if step.value() == 0:  # upstream divides by it (and the API server panics)
        v.add(invalid(path, str(step), "must be greater than zero"))
        return
    for value in values:
        if value is not None and (value.value() - low.value()) % step.value():
            v.add(
                invalid(
                    path,
                    str(value),
                    f"value is not a multiple of a given step ({step}) from ({low})",
                )
            )


def _counter_set(v: _Validator, raw: Any, path: str, name_field: str) -> None:
    """validateCounterSet (`name`) or validateDeviceCounterConsumption (`counterSet`)."""
    counter_set = _obj(v, raw, path)
    if counter_set is None:
        return
    name = v.string(counter_set.get(name_field), f"{path}.{name_field}")
    if not name:
        if name is not None or counter_set.get(name_field) is None:
            v.add(required(f"{path}.{name_field}"))
    else:
        v.dns_label(name, f"{path}.{name_field}")
    counters = v.mapping(counter_set.get("counters"), f"{path}.counters")
    if counters is None and counter_set.get("counters") is not None:
        return
    if not counters:
        v.add(required(f"{path}.counters"))
        return
    limit = (
        RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET
        if name_field == "name"
        else RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION
    )
    v.keyed(counters, limit, f"{path}.counters", v.dns_label, lambda c, at: _counter(v, c, at))


def _counter(v: _Validator, raw: Any, path: str) -> None:
    counter = _obj(v, raw, path)
    if counter is not None:
        v.quantity(counter.get("value"), f"{path}.value")


def _taint(v: _Validator, raw: Any, path: str) -> None:
    taint = _obj(v, raw, path)
    if taint is None:
        return
    v.label_name(taint.get("key", ""), f"{path}.key")
    value = v.string(taint.get("value"), f"{path}.value")
    if value:
        v.label_value(value, f"{path}.value")
    effect = v.string(taint.get("effect"), f"{path}.effect")
    if effect is None or effect == "":
        if taint.get("effect") is None or effect == "":
            v.add(required(f"{path}.effect"))
    elif effect not in TAINT_EFFECTS:
        v.add(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    v.timestamp(taint.get("timeAdded"), f"{path}.timeAdded")


def _taint_rule_spec(v: _Validator, raw: Any) -> None:
    """validateDeviceTaintRuleSpec: the selector's driver, pool and device names, the taint."""
    spec = _obj(v, raw, "spec")
    if spec is None:
        return
    selector = _obj(v, spec.get("deviceSelector"), "spec.deviceSelector")
    if selector:
        if selector.get("driver") is not None:
            v.driver_name(selector["driver"], "spec.deviceSelector.driver")
        if selector.get("pool") is not None:
            v.pool_name(selector["pool"], "spec.deviceSelector.pool")
        if selector.get("device") is not None:
            v.dns_label(selector["device"], "spec.deviceSelector.device")
    _taint(v, spec.get("taint") or {}, "spec.taint")


def _device_node_selection(
    v: _Validator, device: Mapping[str, Any], path: str, per_device: bool
) -> None:
    fields = ("nodeName", "nodeSelector", "allNodes")
    if not per_device:
        if any(device.get(f) is not None for f in fields):
            v.add(
                invalid(
                    path,
                    None,
                    "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
                )
            )
        return
    chosen = []
    name = v.string(device.get("nodeName"), f"{path}.nodeName")
    if name:
        chosen.append("`nodeName`")
        v.node_name(name, f"{path}.nodeName")
    elif name is not None:
        v.add(invalid(f"{path}.nodeName", name, "must not be empty"))
    if device.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        _node_selector(v, device["nodeSelector"], f"{path}.nodeSelector")
    flag = v.boolean(device.get("allNodes"), f"{path}.allNodes")
    if flag:
        chosen.append("`allNodes`")
    elif flag is not None:
        v.add(invalid(f"{path}.allNodes", False, "must be either unset or set to true"))
    if not chosen:
        v.add(required(path, _DEVICE_NODE_SELECTION))
    elif len(chosen) > 1:
        v.add(invalid(path, "{" + ", ".join(chosen) + "}", _DEVICE_NODE_SELECTION))


def _resource_mappings(v: _Validator, raw: Any, capacity: Mapping[str, Any], path: str) -> None:
    """validateNodeAllocatableResourceMappings."""
    mappings = v.mapping(raw, f"{path}.nodeAllocatableResourceMappings")
    for name, item in (mappings or {}).items():
        where = f"{path}.nodeAllocatableResourceMappings[{_truncated(name)}]"
        if "/" in name and "kubernetes.io/" not in name:
            v.add(invalid(where, name, "must be a node allocatable resource name"))
        mapping = _obj(v, item, where)
        if mapping is None:
            continue
        multiplier, key = mapping.get("allocationMultiplier"), mapping.get("capacityKey")
        if multiplier is None and key is None:
            v.add(
                invalid(
                    where, "", "at least one of allocationMultiplier or capacityKey must be set"
                )
            )
            continue
        factor = v.quantity(multiplier, f"{where}.allocationMultiplier")
        if factor is not None and factor.sign() <= 0:
            v.add(invalid(f"{where}.allocationMultiplier", str(factor), "must be positive"))
        name_of_capacity = v.string(key, f"{where}.capacityKey")
        if name_of_capacity == "":
            v.add(invalid(f"{where}.capacityKey", "", "capacityKey must not be an empty string"))
        elif name_of_capacity is not None and name_of_capacity not in capacity:
            v.add(not_found(f"{where}.capacityKey", name_of_capacity))


# ---------------------------------------------------------------------------------------------
# Metadata and the entry points.


def _metadata(v: _Validator, raw: Any, kind: str) -> None:
    """ValidateObjectMeta's name and namespace, and the types of the fields read elsewhere."""
    metadata = _obj(v, raw, "metadata")
    if metadata is None:
        return
    name = v.string(metadata.get("name"), "metadata.name")
    if not name:
        if name is not None or metadata.get("name") is None:
            v.add(required("metadata.name", "name or generateName is required"))
    else:
        unit = "bytes" if kind == CLASS else "characters"
        v.names(dns1123_subdomain(name, unit=unit), "metadata.name", name)
    namespace = v.string(metadata.get("namespace"), "metadata.namespace")
    if namespace and kind not in (CLASS, SLICE, TAINT_RULE):  # cluster-scoped: cleared
        v.names(dns1123_label(namespace), "metadata.namespace", namespace)
    _labels(v, metadata, "metadata")
    _meta_types(v, metadata)


_META_STRINGS: Final = ("uid", "resourceVersion", "generateName")
_META_TIMES: Final = ("creationTimestamp", "deletionTimestamp")


def _meta_types(v: _Validator, metadata: Mapping[str, Any]) -> None:
    """What decoding ObjectMeta refuses: the fields the runtime reads, of the wrong type."""
    for field in _META_STRINGS:
        v.string(metadata.get(field), f"metadata.{field}")
    for field in _META_TIMES:
        v.timestamp(metadata.get(field), f"metadata.{field}")
    v.strings(metadata.get("finalizers"), "metadata.finalizers")
    v.each(
        metadata.get("ownerReferences"),
        -1,
        "metadata.ownerReferences",
        lambda r, at: _typed_strings(v, r, at, ("apiVersion", "kind", "name", "uid")),
    )


def _typed_strings(v: _Validator, raw: Any, path: str, fields: Iterable[str]) -> None:
    item = _obj(v, raw, path)
    if item is not None:
        for field in fields:
            v.string(item.get(field), f"{path}.{field}")


def _labels(v: _Validator, metadata: Mapping[str, Any], path: str) -> None:
    """ValidateLabels, and annotations' keys: the model copies a template's onto its claims."""
    labels = v.mapping(metadata.get("labels"), f"{path}.labels") or {}
    for key, value in labels.items():
        v.label_name(key, f"{path}.labels")
        v.label_value(value, f"{path}.labels")
    annotations = v.mapping(metadata.get("annotations"), f"{path}.annotations") or {}
    for key, value in annotations.items():
        v.names(qualified_name(key.lower()), f"{path}.annotations", key)
        v.string(value, f"{path}.annotations[{_truncated(key)}]")


def validate(
    obj: Mapping[str, Any], features: cel.Features = DEFAULT_FEATURES, kind: str | None = None
) -> list[FieldError]:
    """Every error the API server would report creating `obj` (none for other kinds); `kind`
    for an object that does not say (a list's item)."""
    kind = kind or obj.get("kind")
    if kind == "Pod":
        return validate_pod(obj)
    if kind not in KINDS:
        return []
    v = _Validator(features)
    version = obj.get("apiVersion")
    if version is not None and version != VERSION:
        v.add(not_supported("apiVersion", version, (VERSION,)))
        return v.errors
    _metadata(v, obj.get("metadata"), str(kind))
    if kind == CLAIM:
        names = _claim_spec(v, obj.get("spec"), "spec")
        _claim_status(v, obj.get("status"), names)
    elif kind == TEMPLATE:
        spec = _obj(v, obj.get("spec"), "spec")
        if spec is not None:
            template_meta = _obj(v, spec.get("metadata"), "spec.metadata")
            if template_meta:
                _labels(v, template_meta, "spec.metadata")
            _claim_spec(v, spec.get("spec"), "spec.spec")
    elif kind == CLASS:
        _class_spec(v, obj.get("spec"))
    elif kind == TAINT_RULE:
        _taint_rule_spec(v, obj.get("spec"))
    else:
        _slice_spec(v, obj.get("spec"))
    if not v.errors:
        v.errors += _not_json(obj)
    return v.errors


_JSON_SCALARS: Final = (str, float, bool, type(None), datetime.date)
UINT64_MAX: Final = 2**64 - 1


def _not_json(obj: Mapping[str, Any]) -> list[FieldError]:
    """The first value anywhere in the object (fields the API server would drop, opaque
    parameters) that is not JSON the runtime can carry: a YAML binary or set, or an integer
    past 64 bits. Iterative: the depth of the object is the file's to choose. Paths are only
    spelled out for what is found."""
    stack: list[tuple[Any, Any]] = [(None, obj)]  # (the parent's entry, value)
    while stack:
        entry, value = stack.pop()
        kind = type(value)
        if kind is dict:
            stack += [((entry, k), item) for k, item in value.items()]
        elif kind is list:
            stack += [((entry, i), item) for i, item in enumerate(value)]
        elif kind is int:
            if not INT64_MIN <= value <= UINT64_MAX:
                return [invalid(_spelled(entry), value, "must fit in 64 bits")]
        elif not isinstance(value, _JSON_SCALARS) and not isinstance(value, Mapping | list):
            return [invalid(_spelled(entry), "<value omitted>", "must be a JSON value")]
        elif isinstance(value, Mapping | list) and kind not in (dict, list):
            stack.append((entry, dict(value) if isinstance(value, Mapping) else list(value)))
    return []


def _spelled(entry: Any) -> str:
    """The path of a `_not_json` entry: (parent, key) pairs, innermost last."""
    steps: list[str] = []
    while entry is not None:
        entry, step = entry
        steps.append(f"[{step}]" if isinstance(step, int) else f".{_truncated(str(step))}")
    return "".join(reversed(steps)).removeprefix(".")


def validate_pod(pod: Mapping[str, Any]) -> list[FieldError]:
    """A Pod's DRA fields: `spec.resourceClaims` (validatePodResourceClaims) and the claims
    named in its status (validatePodResourceClaimStatuses)."""
    v = _Validator(DEFAULT_FEATURES)
    spec = v.mapping(pod.get("spec"), "spec") or {}
    status = v.mapping(pod.get("status"), "status") or {}
    claims = v.items(spec.get("resourceClaims"), "spec.resourceClaims") or ()
    names: set[str] = set()
    for index, claim in enumerate(claims):
        _pod_claim(v, claim, f"spec.resourceClaims[{index}]", names)
    statuses = v.items(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")
    seen: set[str] = set()
    for index, raw in enumerate(statuses or ()):
        where = f"status.resourceClaimStatuses[{index}]"
        entry = _obj(v, raw, where)
        if entry is None:
            continue
        name = v.string(entry.get("name"), f"{where}.name")
        if name is None and entry.get("name") is not None:
            continue
        name = name or ""
        if name not in names:
            v.add(
                invalid(
                    f"{where}.name",
                    name,
                    "must match the name of an entry in `spec.resourceClaims`",
                )
            )
        if name in seen:
            v.add(duplicate(f"{where}.name", name))
        seen.add(name)
        if entry.get("resourceClaimName") is not None:
            v.dns_subdomain(entry["resourceClaimName"], f"{where}.resourceClaimName")
    extended = _obj(
        v, status.get("extendedResourceClaimStatus"), "status.extendedResourceClaimStatus"
    )
    if extended:
        where = "status.extendedResourceClaimStatus.resourceClaimName"
        v.dns_subdomain(extended.get("resourceClaimName", ""), where)
    return v.errors


def _pod_claim(v: _Validator, raw: Any, path: str, names: set[str]) -> None:
    claim = _obj(v, raw, path)
    if claim is None:
        return
    name = v.string(claim.get("name"), f"{path}.name")
    if not name:
        if name is not None or claim.get("name") is None:
            v.add(required(f"{path}.name"))
    elif name in names:
        v.add(duplicate(f"{path}.name", name))
    else:
        v.dns_label(name, f"{path}.name")
        names.add(name)
    given = [
        f for f in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(f) is not None
    ]
    if len(given) > 1:
        v.add(
            invalid(
                path,
                _go_pod_claim(claim),
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                "specified",
            )
        )
    elif not given:
        v.add(
            invalid(
                path,
                _go_pod_claim(claim),
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
        )
    for field in given:
        v.dns_subdomain(claim[field], f"{path}.{field}")


def describe(obj: Mapping[str, Any], kind: str | None = None) -> str:
    """`Kind namespace/name` (a cluster-scoped kind's namespace left out, as the API server
    clears it), as the errors name an object."""
    kind = kind or obj.get("kind")
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    scoped = isinstance(namespace, str) and namespace and kind not in (CLASS, SLICE)
    shown = name if isinstance(name, str) and name else "<unnamed>"
    return f"{kind} {f'{namespace}/' if scoped else ''}{shown}"


def check(
    obj: Mapping[str, Any], features: cel.Features = DEFAULT_FEATURES, kind: str | None = None
) -> None:
    """Raises InvalidObjectError naming the object when the API server would refuse it."""
    errors = validate(obj, features, kind)
    if errors:
        raise InvalidObjectError(describe(obj, kind), errors)


__all__ = [
    "KINDS",
    "VERSION",
    "FieldError",
    "InvalidObjectError",
    "check",
    "describe",
    "validate",
    "validate_pod",
]
