# ruff: noqa: E501 (a table of expressions, one case a line)
"""Writes testdata/cel_cases.json: upstream's cel/compile_test.go table (the cases that apply
to the scheduler's stored-expressions environment) plus runtime and compile errors the plugin
surfaces. The oracle (oracle/main.go) answers them with the pinned upstream code."""

import json
from pathlib import Path

D = "dra.example.com"


def case(name, expression, driver="", attributes=None, capacity=None, multi=None, lists=False):
    c = {"name": name, "expression": expression, "driver": driver}
    if attributes:
        c["attributes"] = attributes
    if capacity:
        c["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if multi is not None:
        c["allowMultipleAllocations"] = multi
    if lists:
        c["listTypeAttributes"] = True
    return c


DEPTHS = (249, 250, 251)


def _macros(depth):
    """`[1].all(x0, [1].exists(x1, ...))`, each level using the one above."""
    macros = ("all", "exists", "all", "exists_one")
    head = "".join(
        f"[x{i - 1}].{macros[i % 4]}(x{i}, " if i else "[1].all(x0, " for i in range(depth)
    )
    return head + f"x{depth - 1} == 1" + ")" * depth


def _binds(depth):
    head = "".join(f"cel.bind(v{i}, {f'v{i - 1} + 1' if i else '1'}, " for i in range(depth))
    return head + f"v{depth - 1} == {depth}" + ")" * depth


ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
EXPENSIVE = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, " * 1
L = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
EXPENSIVE = (
    f"{L}.all(x, {L}.all(y, {L}.all(z, {L}.all(z2, {L}.all(z3, {L}.all(z4, {L}.all(z5, "
    "int('1'.find('[0-9]*')) < 100)))))))"
)
LONG = [f"value-{i}" for i in range(49)]
HOSTILE = "a" * 26 + "!"
L300 = "[" + ", ".join(str(i) for i in range(1, 301)) + "]"
DEEP_L = "[" + ", ".join(str(i) for i in range(1, 1001)) + "]"


def pattern(name, pattern_text, subject="ab"):
    """A pattern given at run time (an attribute), so the program compiles and matches() meets
    it only when evaluated: cel-go's runtime error for a pattern Go's regexp refuses."""
    return case(
        f"regex-dynamic-{name}",
        f'"{subject}".matches(device.attributes["dra.example.com"].p)',
        D,
        {"p": {"string": pattern_text}},
    )


REFUSED = {
    "missing-paren": "(a",
    "unexpected-paren": "a)",
    "missing-bracket": "[a",
    "trailing-backslash": "a\\",
    "nested-repetition": "a**",
    "missing-argument": "*",
    "repeat-count": "a{1001}",
    "nested-repeat-count": "(a{1000}){1000}",
    "stacked-repeat": "x{2}{3}",
    "lookahead": "a(?=b)",
    "lookbehind": "(?<=a)b",
    "backreference": "(a)\\1",
    "named-capture": "(?P<n",
    "duplicate-name": "(?P<n>a)(?P<n>b)",
    "class-range": "[z-a]",
    "escape-digit": "\\8",
    "escape-any-byte": "\\C",
    "escape-end-of-text": "a\\Z",
    "posix-class": "[[:foo:]]",
    "unicode-class": "\\pX",
    "perl-flag": "(?z)a",
    "possessive": "a++",
}

cases = [
    case("true", "true"),
    case("false", "false"),
    case("syntax-error", "?!"),
    case("type-error", "1"),
    case(
        "runtime-error-lookup-identifier",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
    ),
    case(
        "runtime-error-lookup-map",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
    ),
    case("domain-check-negative", '"no-such-domain" in device.attributes'),
    case(
        "domain-check-positive",
        '"dra.example.com" in device.attributes',
        attributes={"dra.example.com/something": {"bool": True}},
    ),
    case("empty-driver-name", 'device.driver == ""'),
    case("real-driver-name", 'device.driver == "dra.example.com"', D),
    case(
        "driver-name-qualifier",
        'device.attributes["dra.example.com"].name',
        D,
        {"name": {"bool": True}},
    ),
    case(
        "driver-name-qualifier-map-lookup",
        'device.attributes["dra.example.com"]["name"]',
        D,
        {"name": {"bool": True}},
    ),
    case(
        "bind",
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        D,
        {"name": {"bool": True}},
    ),
    case(
        "qualified-attribute-name",
        'device.attributes["other.example.com"].name',
        D,
        {"other.example.com/name": {"bool": True}},
    ),
    case("int", 'device.attributes["dra.example.com"].name > 0', D, {"name": {"int": 1}}),
    case(
        "string",
        'device.attributes["dra.example.com"].name == "fish"',
        D,
        {"name": {"string": "fish"}},
    ),
    case(
        "attribute-access-causes-match-error",
        'device.attributes["dra.example.com"].names',
        D,
        {"names": {"strings": ["fish", "bird"]}},
    ),
    case(
        "list-of-int",
        'device.attributes["dra.example.com"].names.size() == 2',
        D,
        {"names": {"ints": [1, 2]}},
        lists=True,
    ),
    case(
        "macro-on-list-of-int",
        'device.attributes["dra.example.com"].names.exists(x, x > 0)',
        D,
        {"names": {"ints": [1, 2]}},
        lists=True,
    ),
    case(
        "macro-on-list-of-semver",
        'device.attributes["dra.example.com"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
        D,
        {"names": {"versions": ["1.0.0", "2.0.0"]}},
        lists=True,
    ),
    case(
        "macro-exists-on-int",
        'device.attributes["dra.example.com"].name.exists(x, x > 0)',
        D,
        {"name": {"int": 1}},
    ),
    case(
        "macro-exists-on-bool",
        'device.attributes["dra.example.com"].name.exists(x, x == true)',
        D,
        {"name": {"bool": True}},
    ),
    case(
        "macro-exists-on-string",
        'device.attributes["dra.example.com"].name.exists(x, x == "fish")',
        D,
        {"name": {"string": "fish"}},
    ),
    case(
        "macro-exists-on-version",
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        D,
        {"name": {"version": "1.0.0"}},
    ),
    case(
        "includes-on-scalar",
        'device.attributes["dra.example.com"].name.includes("fish")',
        D,
        {"name": {"string": "fish"}},
    ),
    case(
        "includes-on-list",
        'device.attributes["dra.example.com"].name.includes(2)',
        D,
        {"name": {"ints": [1, 2]}},
        lists=True,
    ),
    case(
        "includes-on-semver-list",
        'device.attributes["dra.example.com"].name.includes(semver("2.0.0"))',
        D,
        {"name": {"versions": ["1.0.0", "2.0.0"]}},
        lists=True,
    ),
    case(
        "includes-function-on-very-long-list-runtime-error",
        'device.attributes["dra.example.com"].name.includes("value-49")',
        D,
        {"name": {"strings": LONG}},
        lists=True,
    ),
    case(
        "in-operator-on-list",
        '1 in device.attributes["dra.example.com"].names',
        D,
        {"names": {"ints": [1, 2, 3]}},
        lists=True,
    ),
    case(
        "version",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        D,
        {"name": {"version": "1.0.0"}},
    ),
    case(
        "version_v",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        D,
        {"name": {"version": "1.0.0"}},
    ),
    case(
        "quantity",
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        D,
        capacity={"name": "1Mi"},
    ),
    case(
        "check-positive",
        '"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        D,
        capacity={"name": "1Mi"},
    ),
    case(
        "check-negative",
        '!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
    ),
    case(
        "all",
        ALL,
        D,
        {
            "bool": {"bool": True},
            "int": {"int": 1},
            "string": {"string": "fish"},
            "version": {"version": "1.0.0"},
        },
        {"quantity": "1Mi"},
    ),
    case(
        "many",
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c',
        D,
        {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
    ),
    case(
        "check_attribute_domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        D,
        {"services": {"string": "some_example_value"}},
    ),
    case(
        "check_attribute_ids",
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        D,
        {"services": {"string": "some_example_value"}},
    ),
    case(
        "split_attribute",
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        D,
        {"services": {"string": "some_example_value"}},
    ),
    case(
        "regexp_attribute",
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        D,
        {"services": {"string": "asymetric"}},
    ),
    case(
        "check_capacity_domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        D,
        capacity={"memory": "1Mi"},
    ),
    case(
        "check_capacity_ids",
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        D,
        capacity={"memory": "1Mi"},
    ),
    case("expensive", EXPENSIVE, D),
    case("allow_multiple_allocations", "device.allowMultipleAllocations == true", D, multi=True),
    case("allow_multiple_allocations_default", "device.allowMultipleAllocations == false", D),
    case(
        "allow_multiple_allocations_false",
        "device.allowMultipleAllocations == false",
        D,
        multi=False,
    ),
    # Beyond upstream's table: messages the plugin surfaces.
    case("undefined-field", "device.nope"),
    case("undeclared-reference", "foo > 1"),
    case("no-matching-overload", '1 == "a"'),
    case("driver-not-bool", "device.driver"),
    case("incomplete-expression", "device.driver == "),
    case(
        "result-not-bool",
        'device.attributes["dra.example.com"].name',
        D,
        {"name": {"string": "fish"}},
    ),
    case(
        "bad-version-attribute",
        'device.attributes["dra.example.com"].v.major() == 1',
        D,
        {"v": {"version": "1.0"}},
    ),
    case("bad-quantity", 'sign(quantity("1.2.3")) == 1'),
    case("quantity-sign", 'sign(quantity("-1")) == -1 && quantity("1k").isInteger()'),
    case("bad-semver", 'semver("01.2.3").major() == 1'),
    case(
        "quantity-compare",
        'device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) == 0',
        D,
        capacity={"memory": "1024Mi"},
    ),
    case(
        "quantity-arith",
        'device.capacity["dra.example.com"].memory.add(quantity("512Mi")).sub(1).isGreaterThan(quantity("1Gi"))',
        D,
        capacity={"memory": "1Gi"},
    ),
    case("quantity-as-integer-error", 'quantity("1.5").asInteger() == 1'),
    case(
        "semver-parts",
        'device.attributes["dra.example.com"].v.major() == 1 && device.attributes["dra.example.com"].v.minor() == 2 && device.attributes["dra.example.com"].v.patch() == 3',
        D,
        {"v": {"version": "1.2.3-rc.1+build"}},
    ),
    case(
        "semver-prerelease-order",
        'semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1")) && semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))',
    ),
    case(
        "division-by-zero", 'device.attributes["dra.example.com"].n / 0 == 1', D, {"n": {"int": 1}}
    ),
    case("index-out-of-range", "[1, 2][5] == 1"),
    case("error-absorbed-by-or", 'device.attributes["dra.example.com"].missing || true', D),
    case("error-absorbed-by-and", 'device.attributes["dra.example.com"].missing && false', D),
    case("has-on-default-domain", 'has(device.attributes["x.example.com"].foo)', D),
    case("has-on-attribute", "has(device.attributes.other)", D),
    case(
        "ternary", 'device.attributes["dra.example.com"].n > 1 ? true : false', D, {"n": {"int": 2}}
    ),
    case(
        "string-functions",
        '"Hello".lowerAscii().startsWith("he") && "a,b,c".split(",").join("-") == "a-b-c" && "abc".substring(1) == "bc" && "  x ".trim() == "x"',
    ),
    case(
        "list-functions",
        "[3, 1, 2].sort() == [1, 2, 3] && [1, 2, 3].sum() == 6 && [1, 2, 3].max() == 3 && [1, 1, 2].distinct().size() == 2 && [1, 2, 3].slice(1, 2) == [2]",
    ),
    case(
        "sets",
        "sets.contains([1, 2, 3], [2]) && sets.intersects([1], [1, 5]) && sets.equivalent([1, 2], [2, 1])",
    ),
    case("regex-find", '"abc123".find("[0-9]+") == "123" && "a1b2".findAll("[0-9]").size() == 2'),
    case(
        "optional",
        'device.attributes["dra.example.com"][?"n"].orValue(5) == 5 && optional.of(1).hasValue()',
        D,
    ),
    case("int-overflow", "9223372036854775807 + 1 > 0"),
    case("numeric-cross", "2u > 1 && 1.5 < 2 && 1 <= 1u"),
    case("numeric-equality-heterogeneous", "1 == 1.0"),
    case("string-conversion", 'string(12) == "12" && int("42") == 42 && double("1.5") == 1.5'),
    case("map-literal", '{"a": 1, "b": 2}["b"] == 2 && "a" in {"a": 1}'),
    case("no-such-key-literal-map", '{"a": 1}["c"] == 2'),
    case(
        "transform-list", "[1, 2].map(x, x * 2) == [2, 4] && [1, 2, 3].filter(x, x > 1).size() == 2"
    ),
    case(
        "cross-type-equality-false",
        'device.attributes["dra.example.com"].n == "1"',
        D,
        {"n": {"int": 1}},
    ),
    # Regular expressions: RE2 syntax and semantics (linear time), Go's error texts.
    case("regex-hostile-literal", f'"{HOSTILE}".matches("^(a+)+$")'),
    case(
        "regex-hostile-attribute",
        'device.attributes["dra.example.com"].s.matches("^(a+)+$")',
        D,
        {"s": {"string": HOSTILE}},
    ),
    case(
        "regex-hostile-dynamic-pattern",
        f'"{HOSTILE}".matches(device.attributes["dra.example.com"].p)',
        D,
        {"p": {"string": "^(a|a)*$"}},
    ),
    case(
        "regex-hostile-find",
        f'"{HOSTILE}".find("(a*)*b") == "" && "{HOSTILE}".findAll("(a|aa)+$").size() == 0',
    ),
    case("regex-dollar-before-newline", '"abc\\n".matches("abc$")'),
    case("regex-multiline-dollar", '"abc\\nd".matches("(?m)abc$")'),
    case("regex-unicode-digit", '"\\u0663".matches("^\\\\d$")'),
    case("regex-unicode-word", '"\\u00e9".matches("^\\\\w$")'),
    case("regex-unicode-class", '"\\u00e9".matches("^\\\\pL$")'),
    case("regex-word-boundary-unicode", '"\\u00e9a".matches("\\\\ba")'),
    case("regex-any-char-rune", '"\\u00e9".matches("^.$")'),
    case("regex-literal-lookahead", '"ab".matches("a(?=b)")'),
    case("regex-literal-missing-paren", '"ab".matches("(a") || true'),
    case("regex-literal-two-refused", '"ab".matches("(a") || "ab".matches("[")'),
    case("regex-global-matches-literal-text", 'matches("(", "a")'),
    case("regex-global-matches-literal-pattern", 'matches("a", "(")'),
    case("regex-find-literal-refused", '"ab".find("(") == ""'),
    case("regex-findall-literal-refused", '"ab".findAll("(").size() == 0'),
    case(
        "regex-find-dynamic-refused",
        '"ab".find(device.attributes["dra.example.com"].p) == ""',
        D,
        {"p": {"string": "(?=a)"}},
    ),
    case(
        "regex-findall-dynamic-refused",
        '"ab".findAll(device.attributes["dra.example.com"].p, 1).size() == 0',
        D,
        {"p": {"string": "a{2,1}"}},
    ),
    case("regex-findall-empty-after-match", '"abc".findAll("a*") == ["a", "", ""]'),
    case("regex-findall-empty-runes", '"\\u00e9\\u00e9".findAll("") == ["", "", ""]'),
    case("regex-findall-limit", '"a1b2c3".findAll("[0-9]", 2) == ["1", "2"]'),
    case("regex-findall-limit-zero", '"a1b2c3".findAll("[0-9]", 0) == []'),
    case("regex-find-leftmost-first", '"abcd".find("a|ab|abc") == "a"'),
    case("regex-find-unicode", '"x\\u00e9\\u00e9y".find("\\u00e9+") == "\\u00e9\\u00e9"'),
    case("regex-nongreedy-flag", '"aaa".find("(?U)a+") == "a"'),
    case("regex-quote", '"a.b".matches("^\\\\Qa.b\\\\E$") && !"axb".matches("^\\\\Qa.b\\\\E$")'),
    *(pattern(name, text) for name, text in REFUSED.items()),
    # Integer edge cases and string(double), as cel-go computes and prints them.
    case(
        "int-min-modulo-minus-one",
        'device.attributes["dra.example.com"].n % -1 == 0',
        D,
        {"n": {"int": -9223372036854775808}},
    ),
    case(
        "int-min-divide-minus-one",
        'device.attributes["dra.example.com"].n / -1 == 0',
        D,
        {"n": {"int": -9223372036854775808}},
    ),
    case("int-min-literal-modulo", "-9223372036854775808 % -1 == 0"),
    case(
        "string-of-double",
        'string(1.0) == "1" && string(1.5) == "1.5" && string(123456.0) == "123456" && '
        'string(1234567.0) == "1.234567e+06" && string(1e6) == "1e+06" && '
        'string(0.0001) == "0.0001" && string(0.00001) == "1e-05" && '
        'string(1.5e-7) == "1.5e-07" && string(1e21) == "1e+21" && string(-2.5) == "-2.5" && '
        'string(123.456) == "123.456" && string(-0.0) == "-0" && string(1e100) == "1e+100" && '
        'string(0.1 + 0.2) == "0.30000000000000004" && string(5e-324) == "5e-324"',
    ),
    case("string-of-double-shown", 'string(1234567.0) == "x"'),
    # Evaluation cost: a nested comprehension upstream admits and evaluates to the end.
    case("cost-nested-exists-300", f"{L300}.exists(x, {L300}.exists(y, x * y == -1))"),
    case("cost-nested-exists-1000", f"{DEEP_L}.exists(x, {DEEP_L}.exists(y, x * y == -1))"),
    # Nesting: cel-go's parser allows a recursion depth of 250 and 100,000 code points.
    *(
        case(f"nested-parens-{d}", "(" * d + "true" + ")" * d)
        for d in (32, 33, 100, 249, 250, 251, 300)
    ),
    *(case(f"nested-lists-{d}", "[" * d + "1" + "]" * d + " != []") for d in (32, 33, 250, 251)),
    *(case(f"nested-adds-{d}", "+".join(["1"] * d) + f" == {d}") for d in (32, 33, 250, 251)),
    *(
        case(f"nested-members-{d}", "device.driver" + ".lowerAscii()" * d + ' == ""')
        for d in (32, 33, 249, 250)
    ),
    *(case(f"nested-not-{d}", "!" * d + "true") for d in (250, 251, 5000)),
    *(case(f"nested-ands-{d}", " && ".join(["true"] * d)) for d in (250, 251, 2000)),
    case(
        "nested-comprehensions-40",
        "[1].all(x0, " + "".join(f"[1].all(x{i}, " for i in range(1, 40)) + "true" + ")" * 40,
    ),
    *(case(f"nested-lists-{d}", "[" * d + "1" + "]" * d + " != []") for d in (249,)),
    *(case(f"nested-adds-{d}", "+".join(["1"] * d) + f" == {d}") for d in (249,)),
    case("nested-members-248", "device.driver" + ".lowerAscii()" * 248 + ' == ""'),
    # Mixed shapes at cel-go's limits: its parse listener counts nested contexts of each
    # grammar rule, its visitor nested operators, selections, calls and indexes.
    *(case(f"nested-calls-{d}", "int(" * d + "1" + ")" * d + " == 1") for d in DEPTHS),
    *(case(f"nested-ternaries-{d}", "false ? 0 : " * d + "1 == 1") for d in DEPTHS),
    *(case(f"nested-indexes-{d}", "[0][" * d + "0" + "]" * d + " == 0") for d in DEPTHS),
    *(case(f"nested-macros-{d}", _macros(d)) for d in DEPTHS),
    *(case(f"nested-nots-{d}", "!(" * d + "false" + ")" * d) for d in DEPTHS),
    *(
        case(f"nested-right-adds-{d}", "1 + (" * d + "1" + ")" * d + f" == {d + 1}")
        for d in (123, 124, 125)
    ),
    *(case(f"chained-relations-{d}", "1 < 2" + " == true" * d) for d in (248, 249, 250)),
    case("nested-macros-248", _macros(248)),
    case(
        "nested-lists-of-members",
        "[" * 200 + "device.driver" + ".lowerAscii()" * 200 + "]" * 200 + " != []",
    ),
    case(
        "nested-members-in-macros",
        "[1].all(x, " + "[" * 200 + "device.driver" + ".lowerAscii()" * 200 + "]" * 200 + " != [])",
    ),
    case(
        "nested-two-errors",
        "(" * 40 + '1 + "a"' + ")" * 40 + " + " + "(" * 40 + '2 - "b"' + ")" * 40,
    ),
    case("nested-bind-not-bool", "cel.bind(v, 1, " + "(" * 60 + "v" + ")" * 60 + ")"),
    case(
        "nested-bind-init-sees-outer",
        'cel.bind(v, "ab", cel.bind(v, '
        + "(" * 40
        + "v.size()"
        + ")" * 40
        + ", "
        + "(" * 40
        + "v == 2"
        + ")" * 40
        + "))",
    ),
    case("nested-syntax-error", "(" * 40 + "1 +" + ")" * 40),
    case("nested-maps-100", '{"a": ' * 100 + "1" + "}" * 100 + ".a" * 100 + " == 1"),
    case("nested-binds-100", _binds(100)),
    case("nested-iteration-variable", "[1, 2].all(x, " + "(" * 100 + "x > 0" + ")" * 100 + ")"),
    case("nested-map-keys", '{"a": 1}.all(k, ' + "(" * 60 + 'k == "a"' + ")" * 60 + ")"),
    case("nested-list-elements", "[[1]].all(x, " + "(" * 60 + "x[0] == 1" + ")" * 60 + ")"),
    case("nested-type-error", "(" * 60 + '1 + "a"' + ")" * 60 + " == 1"),
    case("nested-not-bool", "(" * 60 + "1" + ")" * 60),
    case("nested-lists-not-bool", "[" * 40 + "1" + "]" * 40),
    case("nested-runtime-error", "(" * 60 + "1 / 0 == 1" + ")" * 60),
    case("nested-multiline-error", "(\n" * 60 + "1 + 'a'" + "\n)" * 60 + " == 1"),
    case(
        "nested-attribute",
        "(" * 100 + 'device.attributes["dra.example.com"].n > 1' + ")" * 100,
        D,
        {"n": {"int": 2}},
    ),
    case(
        "nested-has",
        "(" * 100 + 'has(device.attributes["dra.example.com"].n)' + ")" * 100,
        D,
        {"n": {"int": 2}},
    ),
    case("nested-invalid-regex", "(" * 60 + '"a".matches("[")' + ")" * 60),
    case("expression-too-long", "true || " * 12500 + "true"),
    case(
        "comparison-type-error",
        'device.attributes["dra.example.com"].n > "a"',
        D,
        {"n": {"int": 1}},
    ),
]

Path(__file__).with_name("testdata").joinpath("cel_cases.json").write_text(
    json.dumps(cases, indent=1) + "\n"
)
