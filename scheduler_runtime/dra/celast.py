"""The checked CEL syntax tree, read from the protobuf (`cel.expr.CheckedExpr`, wrapped in a
`google.protobuf.Any`) that the CEL compiler serializes: a small wire-format reader, so the
evaluator in `cel.py` gets the parsed, macro-expanded and type-checked expression without a
protobuf runtime."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

# Node kinds (the oneof of cel.expr.Expr).
CONST, IDENT, SELECT, CALL, LIST, STRUCT, COMPREHENSION = range(7)
_KIND_BY_FIELD = {3: CONST, 4: IDENT, 5: SELECT, 6: CALL, 7: LIST, 8: STRUCT, 9: COMPREHENSION}


class NullValue:
    """CEL's null literal, distinct from "no value" in the tree."""


NULL = NullValue()


@dataclass(slots=True)
class Expr:
    """One node; only the fields of its kind are set."""

    id: int
    kind: int
    value: Any = None  # CONST
    name: str = ""  # IDENT name, SELECT field, CALL function
    operand: Expr | None = None  # SELECT operand, CALL target
    test_only: bool = False  # SELECT inside has()
    args: list[Expr] = field(default_factory=list)  # CALL args, LIST elements
    optional_indices: list[int] = field(default_factory=list)
    entries: list[tuple[Expr, Expr, bool]] = field(default_factory=list)  # STRUCT (map) entries
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Expr | None = None
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None


@dataclass(slots=True)
class Checked:
    expr: Expr
    references: dict[int, str]  # node id -> resolved identifier name
    types: dict[int, str]  # node id -> type name as cel-go prints it
    positions: dict[int, int] = field(default_factory=dict)  # node id -> offset in the source


def _fields(buf: bytes) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _int64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _str(f: dict[int, list[Any]], number: int) -> str:
    return bytes(f[number][0]).decode() if number in f else ""


def _constant(buf: bytes) -> Any:  # noqa: PLR0911 (one case per constant kind)
    f = _fields(buf)
    if 1 in f:
        return NULL
    if 2 in f:
        return bool(f[2][0])
    if 3 in f:
        return _int64(f[3][0])
    if 4 in f:
        return Uint(f[4][0])
    if 5 in f:
        return float(struct.unpack("<d", f[5][0])[0])
    if 6 in f:
        return bytes(f[6][0]).decode()
    if 7 in f:
        return bytes(f[7][0])
    return NULL


class Uint(int):
    """CEL's uint: kept apart from int, which CEL never mixes in arithmetic."""

    __slots__ = ()


def _expr(buf: bytes) -> Expr:
    f = _fields(buf)
    node_id = _int64(f.get(2, [0])[0])
    for number, kind in _KIND_BY_FIELD.items():
        if number in f:
            return _build(node_id, kind, _fields(f[number][0]), f[number][0])
    return Expr(node_id, CONST, NULL)


def _build(node_id: int, kind: int, f: dict[int, list[Any]], raw: bytes) -> Expr:
    node = Expr(node_id, kind)
    if kind == CONST:
        node.value = _constant(raw)
    elif kind == IDENT:
        node.name = _str(f, 1)
    elif kind == SELECT:
        node.operand = _expr(f[1][0])
        node.name = _str(f, 2)
        node.test_only = bool(f.get(3, [0])[0])
    elif kind == CALL:
        node.operand = _expr(f[1][0]) if 1 in f else None
        node.name = _str(f, 2)
        node.args = [_expr(a) for a in f.get(3, [])]
    elif kind == LIST:
        node.args = [_expr(a) for a in f.get(1, [])]
        node.optional_indices = _packed(f.get(2, []))
    elif kind == STRUCT:
        node.name = _str(f, 1)
        for entry in f.get(2, []):
            e = _fields(entry)
            key = _expr(e[3][0]) if 3 in e else Expr(0, CONST, _str(e, 2))
            node.entries.append((key, _expr(e[4][0]), bool(e.get(5, [0])[0])))
    else:
        node.iter_var, node.accu_var, node.iter_var2 = _str(f, 1), _str(f, 3), _str(f, 8)
        node.iter_range, node.accu_init = _expr(f[2][0]), _expr(f[4][0])
        node.loop_condition, node.loop_step = _expr(f[5][0]), _expr(f[6][0])
        node.result = _expr(f[7][0])
    return node


def _packed(values: list[Any]) -> list[int]:
    out: list[int] = []
    for value in values:
        if isinstance(value, int):
            out.append(value)
            continue
        pos = 0
        while pos < len(value):
            item, pos = _varint(value, pos)
            out.append(item)
    return out


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def type_name(buf: bytes) -> str:  # noqa: PLR0911 (one case per type kind)
    """A cel.expr.Type as cel-go's `Type.String()` prints it."""
    f = _fields(buf)
    if 1 in f:
        return "dyn"
    if 2 in f:
        return "null_type"
    if 3 in f:
        return _PRIMITIVES.get(f[3][0], "dyn")
    if 4 in f:
        return f"wrapper({_PRIMITIVES.get(f[4][0], 'dyn')})"
    if 5 in f:
        return _WELL_KNOWN.get(f[5][0], "dyn")
    if 6 in f:
        return f"list({type_name(_fields(f[6][0]).get(1, [b''])[0])})"
    if 7 in f:
        m = _fields(f[7][0])
        return f"map({type_name(m.get(1, [b''])[0])}, {type_name(m.get(2, [b''])[0])})"
    if 9 in f:
        return bytes(f[9][0]).decode()
    if 10 in f:
        return bytes(f[10][0]).decode()
    if 11 in f:
        return "type"
    if 14 in f:
        a = _fields(f[14][0])
        name = _str(a, 1)
        params = [type_name(p) for p in a.get(2, [])]
        return f"{name}({', '.join(params)})" if params else name
    return "dyn"


def decode(serialized: bytes) -> Checked:
    """Read the `Any`-wrapped CheckedExpr that `Expression.serialize()` returns."""
    outer = _fields(serialized)
    f = _fields(outer[2][0]) if 2 in outer else outer
    if _str(outer, 1).endswith("cel.expr.ParsedExpr"):
        parsed = _fields(outer[2][0])
        f = {4: parsed[2], 5: parsed.get(3, [])} if 2 in parsed else f
    references: dict[int, str] = {}
    for entry in f.get(2, []):
        e = _fields(entry)
        ref = _fields(e[2][0]) if 2 in e else {}
        if 1 in ref:
            references[_int64(e.get(1, [0])[0])] = _str(ref, 1)
    types: dict[int, str] = {}
    for entry in f.get(3, []):
        e = _fields(entry)
        types[_int64(e.get(1, [0])[0])] = type_name(e[2][0]) if 2 in e else "dyn"
    positions: dict[int, int] = {}
    if 5 in f:
        for entry in _fields(f[5][0]).get(4, []):
            e = _fields(entry)
            positions[_int64(e.get(1, [0])[0])] = e.get(2, [0])[0]
    return Checked(_expr(f[4][0]), references, types, positions)


__all__ = ["CALL", "COMPREHENSION", "CONST", "IDENT", "LIST", "NULL", "SELECT", "STRUCT"]
__all__ += ["Checked", "Expr", "NullValue", "Uint", "decode", "type_name"]
