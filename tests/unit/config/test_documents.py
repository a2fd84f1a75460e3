"""The one reader of the files the commands are given: the values of `yaml.safe_load`, JSON
as JSON, bounds on nesting and aliases, and errors in one line with the position."""

from __future__ import annotations

import datetime
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_runtime.config import (
    ConfigError,
    DocumentError,
    parse_documents,
    read_document,
    read_documents,
)
from scheduler_runtime.config.documents import MAX_ALIAS_NODES, MAX_DEPTH

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["yes", "no", "on", "~", "null", "0x1f", "1e3", "2001-12-14", "<<", "="]),
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.integers(), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values, st.booleans())
def test_yaml_gives_what_safe_load_gives(value: Any, flow: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow)
    try:
        # Flow style that happens to be JSON is read as JSON, by the standard library's
        # decoder (integers beyond 64 bits stay integers, as in YAML).
        expected = json.loads(text)
    except ValueError:
        expected = yaml.safe_load(text)
    assert parse_documents(text, "f.yaml") == [v for v in [expected] if v is not None]


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, 2]\nb: *x\n",
        "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
        "t: 2001-12-14\nn: ~\nb: yes\nf: 1.5\ni: 0x1f\ns: !!str 5\nbin: !!binary aGVsbG8=\n",
        "s: !!set {a, b}\n",
        "o: !!omap [{a: 1}, {b: 2}]\n",
        "=: 1\n",
        "- - - x\n",
        "a: 1\n---\nb: 2\n---\n",
        "\ufeffa: b\n",
        "{a: b, c: [d, e]}",
    ],
)
def test_yaml_constructs_as_safe_load(text: str) -> None:
    expected = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    assert parse_documents(text, "f.yaml") == expected
    assert parse_documents(text.encode(), "f.yaml") == expected


def test_json_is_read_as_json() -> None:
    assert parse_documents(b'{"a": 1e3, "b": [true, null]}', "f.json") == [
        {"a": 1000.0, "b": [True, None]}
    ]
    assert parse_documents("  [1, 2]", "f.json") == [[1, 2]]
    # Flow-style YAML that is not JSON still reads as YAML.
    assert parse_documents("{a: b}", "f.yaml") == [{"a": "b"}]


def test_timestamps_and_shared_values() -> None:
    [doc] = parse_documents("a: 2001-12-14\nb: 2001-12-14\nc: &l [1]\nd: *l\n", "f.yaml")
    assert doc["a"] == datetime.date(2001, 12, 14)
    assert doc["c"] is doc["d"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kind: Pod\nmetadata: {name: a b: c}\n",
            "f.yaml:2:21: did not find expected ',' or '}' "
            "(while parsing a flow mapping at line 2, column 11)",
        ),
        (
            "a:\n  b: [1, 2\n",
            "f.yaml:3:1: did not find expected ',' or ']' "
            "(while parsing a flow sequence at line 2, column 6)",
        ),
        (
            "\t a: b",
            "f.yaml:1:1: found character that cannot start any token "
            "(while scanning for the next token)",
        ),
        ("a: *b\n", "f.yaml:1:4: found undefined alias 'b'"),
        ("a: &a [*a]\n", "f.yaml:1:8: alias 'a' refers to its own collection"),
        ("a: !foo bar\n", "f.yaml:1:4: could not determine a constructor for the tag '!foo'"),
        (b"a: \xff\n", "f.yaml: byte 3: cannot read the text: invalid leading UTF-8 octet"),
    ],
)
def test_errors_are_one_line_with_file_line_and_column(text: str | bytes, expected: str) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_documents(text, "f.yaml")
    assert str(caught.value) == expected
    assert isinstance(caught.value, ConfigError)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kind: Pod\nmetadata:\n  name: a\n  name: b\n", "f:4:3: duplicate key 'name'"),
        ("{a: 1, b: 2, a: 3}\n", "f:1:14: duplicate key 'a'"),
        ("1: x\n0x1: y\n", "f:2:1: duplicate key 1"),
        ("b: &b {x: 1}\nd:\n  <<: *b\n  y: 1\n  y: 2\n", "f:5:3: duplicate key 'y'"),
        ('{"items": [\n  {"name": "a",\n   "name": "b"}]}', "f:3:4: duplicate key 'name'"),
        (b'{"a": 1, "a": 1}', "f:1:10: duplicate key 'a'"),
    ],
)
def test_a_key_given_twice_is_refused_with_its_line(text: str | bytes, expected: str) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_documents(text, "f")
    assert str(caught.value) == expected


def test_merged_keys_may_still_be_overridden() -> None:
    text = "b: &b {x: 1, y: 1}\nd:\n  <<: *b\n  x: 2\n"
    assert parse_documents(text, "f") == [{"b": {"x": 1, "y": 1}, "d": {"x": 2, "y": 1}}]


def alias_bomb(levels: int) -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for previous, name in itertools.pairwise("abcdefghijklmnop"[:levels]):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_where_it_goes_off() -> None:
    bomb = alias_bomb(9)
    assert len(bomb) < 400
    with pytest.raises(DocumentError, match=f"by more than {MAX_ALIAS_NODES} nodes") as caught:
        parse_documents(bomb, "bomb.yaml")
    assert caught.value.path.startswith("bomb.yaml:6:")
    # A few aliases of the same shape are fine.
    assert parse_documents(alias_bomb(3), "f.yaml")[0]["c"][0][0] == ["lol"] * 9


@pytest.mark.parametrize(
    "text",
    [
        "[" * 500 + "]" * 500,
        "a: " + "{b: " * 500 + "c" + "}" * 500,
        "- " * 500 + "x",
        "".join(" " * i + "a:\n" for i in range(500)),
        '{"a": ' * 500 + "1" + "}" * 500,
        "[" * 200_000 + "]" * 200_000,  # the C composer would overflow the stack
    ],
)
def test_deep_nesting_is_one_line_with_the_position(text: str) -> None:
    with pytest.raises(DocumentError, match=f"nested deeper than {MAX_DEPTH} levels") as caught:
        parse_documents(text, "deep.yaml")
    assert caught.value.path.startswith("deep.yaml:1:") or caught.value.path.startswith(
        "deep.yaml:101:"
    )
    assert "\n" not in str(caught.value)


def test_nesting_up_to_the_bound_is_fine() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_documents(text, "f.yaml") == parse_documents(text.replace("[]", "[ ]"), "f")
    yaml_text = "a: " + "{b: " * (MAX_DEPTH - 1) + "c" + "}" * (MAX_DEPTH - 1)
    assert len(parse_documents(yaml_text, "f.yaml")) == 1


def test_files_stdin_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("a: 1\n---\n---\nb: 2\n")
    assert read_documents(path) == [{"a": 1}, {"b": 2}]
    with pytest.raises(DocumentError, match=r"two.yaml: holds 2 documents, expected one"):
        read_document(path)
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    with pytest.raises(DocumentError, match="holds no document, expected one"):
        read_document(tmp_path / "empty.yaml")
    with pytest.raises(DocumentError, match=r"missing\.yaml: cannot read the file: No such file"):
        read_document(tmp_path / "missing.yaml")

    class Stdin:
        buffer = type("B", (), {"read": staticmethod(lambda: b"a: [1,\n")})()

    monkeypatch.setattr("sys.stdin", Stdin)
    with pytest.raises(DocumentError, match=r"^<stdin>:2:1: did not find expected node"):
        read_document("-")
