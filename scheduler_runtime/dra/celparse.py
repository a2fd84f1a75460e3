"""The shape of a CEL expression as cel-go's parser sees it: a tokenizer and a parser of
cel-go's grammar (`CEL.g4`) that build a tree of spans, with cel-go's two nesting limits.

The C++ parser that `cel.py` compiles with stops at a nesting depth of 32; cel-go allows 250.
For a selector nested deeper than 32 this module decides what cel-go would: refused by its
parse listener (`expression recursion limit exceeded: 250`, more than 250 nested contexts of
one grammar rule) or by its visitor (`max recursion depth exceeded`, more than 250 nested
ternaries, relations, arithmetic operators, selections, member calls and indexes), or accepted,
in which case `cel.py` compiles the tree in slices the C++ parser accepts. The rules are
generators driven by an explicit stack, so no Python recursion follows the input's nesting."""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

# cel-go's parser.MaxRecursionDepth default.
MAX_RECURSION_DEPTH = 250
LISTENER_LIMIT = f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"
VISITOR_LIMIT = "max recursion depth exceeded"

# Node kinds the visitor counts (cel-go's Visit increments its depth for these contexts).
COUNTED = frozenset(("ternary", "relation", "calc", "select", "call", "index"))
# Member functions that bind their first argument(s) as variables in the others (macros).
BINDERS = frozenset(("all", "exists", "exists_one", "map", "filter", "optMap", "optFlatMap"))

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f]+|//[^\n]*)
  | (?P<str>(?:[bB][rR]?|[rR][bB]?)?(?:\"\"\"(?:\\.|(?!\"\"\").)*\"\"\"|'''(?:\\.|(?!''').)*'''
            |"(?:\\.|[^"\\\n\r])*"|'(?:\\.|[^'\\\n\r])*'))
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]+|\.[0-9]+)(?:[eE][+-]?[0-9]+)?
            |[0-9]+[eE][+-]?[0-9]+|[0-9]+[uU]?)
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<esc>`[^`]*`)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)
_RELATIONS = frozenset(("<", "<=", ">=", ">", "==", "!=", "in"))
_LITERAL_WORDS = frozenset(("true", "false", "null"))
_CHAIN = ("expr", "conditionalOr", "conditionalAnd", "relation", "calc", "unary", "member")
# Tokens that continue an expression after a primary.
_CONTINUE = ("?", "||", "&&", *_RELATIONS, "*", "/", "%", "+", "-", ".", "[")
# What ANTLR says it expected where an operand is missing.
_OPERAND = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, "
_OPERAND += "NUM_UINT, STRING, BYTES, IDENTIFIER}"


class ParseError(Exception):
    """The expression is not in cel-go's grammar; `offset` is where reading stopped."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class LimitError(Exception):
    """One of cel-go's nesting limits; str() is its message."""


@dataclass(slots=True)
class Node:
    """A syntax node: its kind, its source span [start, end) and its children in order."""

    kind: str
    start: int
    end: int
    children: list[Node] = field(default_factory=list)
    name: str = ""  # call and select names, identifiers
    parent: Node | None = None


@dataclass(slots=True)
class _Tok:
    kind: str  # "str", "num", "id", "esc", "op", "eof"
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ParseError(f"token recognition error at: '{text[pos]}'", pos)
        kind = m.lastgroup or "ws"
        if kind != "ws":
            word = m.group()
            out.append(_Tok("op" if word == "in" else kind, word, pos, m.end()))
        pos = m.end()
    out.append(_Tok("eof", "<EOF>", len(text), len(text)))
    return out


_Rule = Generator["_Rule", Node, Node]


class _Parser:
    """CEL.g4's rules, with ANTLR's rule-entry events counted per rule as cel-go's
    recursionListener does (left-recursive rules exit and re-enter around each operator)."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.pos = 0
        self.depth: dict[str, int] = {}

    # -- the driver: each rule yields the generator of the rule it calls.
    def run(self) -> Node:
        stack: list[_Rule] = [self.start()]
        value: Node | None = None
        while True:
            try:
                call = stack[-1].send(value)  # type: ignore[arg-type]
            except StopIteration as done:
                stack.pop()
                if not stack:
                    node: Node = done.value
                    return node
                value = done.value
                continue
            stack.append(call)
            value = None

    # -- tokens and rule events.
    @property
    def tok(self) -> _Tok:
        return self.toks[self.pos]

    def at(self, *texts: str) -> bool:
        return self.tok.kind in ("op", "id") and self.tok.text in texts

    def take(self, text: str) -> _Tok:
        tok = self.tok
        if not self.at(text):
            raise ParseError(f"mismatched input '{tok.text}' expecting '{text}'", tok.start)
        self.pos += 1
        return tok

    def enter(self, rule: str) -> None:
        n = self.depth.get(rule, 0) + 1
        self.depth[rule] = n
        if n > MAX_RECURSION_DEPTH:
            raise LimitError(LISTENER_LIMIT)

    def exit(self, rule: str) -> None:
        self.depth[rule] -= 1

    def node(self, kind: str, start: int, children: list[Node], name: str = "") -> Node:
        end = self.toks[self.pos - 1].end
        return Node(kind, start, end, children, name)

    # -- the grammar.
    def start(self) -> _Rule:
        e = yield self.expr()
        if self.tok.kind != "eof":
            raise ParseError(f"extraneous input '{self.tok.text}' expecting <EOF>", self.tok.start)
        return e

    def expr(self) -> _Rule:
        pre: Node | None = None
        if not self.at("!", "-"):
            # Most expressions are one primary: its rules are entered and left at once, and
            # only an operator after it takes the rules one by one (`pre`: parsed already).
            for rule in _CHAIN:
                self.enter(rule)
            pre = yield self.primary()
            if not self.at(*_CONTINUE):
                for rule in reversed(_CHAIN):
                    self.exit(rule)
                return pre
        else:
            self.enter("expr")
        start = self.tok.start if pre is None else pre.start
        e = yield self.conditional("conditionalOr", pre)
        if self.at("?"):
            self.pos += 1
            yes = yield self.conditional("conditionalOr")
            self.take(":")
            no = yield self.expr()
            e = self.node("ternary", start, [e, yes, no])
        self.exit("expr")
        return e

    def conditional(self, rule: str, pre: Node | None = None) -> _Rule:
        op, inner = ("||", "conditionalAnd") if rule == "conditionalOr" else ("&&", "")
        if pre is None:
            self.enter(rule)
        start = self.tok.start if pre is None else pre.start
        terms = [(yield (self.conditional(inner, pre) if inner else self.relation(0, pre)))]
        while self.at(op):
            self.pos += 1
            terms.append((yield (self.conditional(inner) if inner else self.relation(0))))
        self.exit(rule)
        return terms[0] if len(terms) == 1 else self.node(rule, start, terms)

    def relation(self, precedence: int, pre: Node | None = None) -> _Rule:
        if pre is None:
            self.enter("relation")
        start = self.tok.start if pre is None else pre.start
        e = yield self.calc(0, pre)
        while self.at(*_RELATIONS) and precedence <= 1:
            self.exit("relation")
            self.enter("relation")
            op = self.tok.text
            self.pos += 1
            right = yield self.relation(2)
            e = self.node("relation", start, [e, right], op)
        self.exit("relation")
        return e

    def calc(self, precedence: int, pre: Node | None = None) -> _Rule:
        if pre is None:
            self.enter("calc")
        start = self.tok.start if pre is None else pre.start
        e = yield self.unary(pre)
        while True:
            if self.at("*", "/", "%") and precedence <= 2:
                right_precedence = 3
            elif self.at("+", "-") and precedence <= 1:
                right_precedence = 2
            else:
                break
            self.exit("calc")
            self.enter("calc")
            op = self.tok.text
            self.pos += 1
            right = yield self.calc(right_precedence)
            e = self.node("calc", start, [e, right], op)
        self.exit("calc")
        return e

    def unary(self, pre: Node | None = None) -> _Rule:
        if pre is None:
            self.enter("unary")
        start = self.tok.start
        ops = ""
        while pre is None and (
            self.at("!") or (self.at("-") and self.toks[self.pos + 1].kind != "num")
        ):
            ops += self.tok.text
            self.pos += 1
        if ops.startswith("!") and "-" in ops:
            raise ParseError("mismatched input '-' expecting <member>", start)
        e = yield self.member(pre)
        if ops:
            e = self.node("not" if ops[0] == "!" else "negate", start, [e])
        self.exit("unary")
        return e

    def member(self, pre: Node | None = None) -> _Rule:
        if pre is None:
            self.enter("member")
            start = self.tok.start
            e = yield self.primary()
        else:
            start, e = pre.start, pre
        while self.at(".", "["):
            self.exit("member")
            self.enter("member")
            if self.tok.text == "[":
                self.pos += 1
                if self.at("?"):
                    self.pos += 1
                index = yield self.expr()
                self.take("]")
                e = self.node("index", start, [e, index])
                continue
            self.pos += 1
            optional = self.at("?")
            if optional:
                self.pos += 1
            name = self._escape_ident()
            if self.at("(") and not optional and not name.startswith("`"):
                self.pos += 1
                args = yield self.expr_list(")")
                self.take(")")
                e = self.node("call", start, [e, *args.children], name)
            else:
                e = self.node("select", start, [e], name)
        self.exit("member")
        return e

    def _escape_ident(self) -> str:
        tok = self.tok
        if tok.kind not in ("id", "esc"):
            raise ParseError(f"no viable alternative at input '.{tok.text}'", tok.start)
        self.enter("escapeIdent")
        self.pos += 1
        self.exit("escapeIdent")
        return tok.text

    def expr_list(self, close: str) -> _Rule:
        args = Node("args", self.tok.start, self.tok.start)
        if self.at(close):
            return args
        self.enter("exprList")
        args.children.append((yield self.expr()))
        while self.at(","):
            self.pos += 1
            args.children.append((yield self.expr()))
        self.exit("exprList")
        return args

    def primary(self) -> _Rule:
        self.enter("primary")
        tok, start = self.tok, self.tok.start
        if tok.kind == "id" and tok.text in _LITERAL_WORDS:
            e = self._literal()
        elif tok.kind == "id" or self.at("."):
            e = yield self._named()
        elif self.at("("):
            self.pos += 1
            inner = yield self.expr()
            self.take(")")
            e = self.node("paren", start, [inner])
        elif self.at("["):
            self.pos += 1
            items = yield self.init_list("]", "listInit", maps=False)
            self.take("]")
            e = self.node("list", start, items.children)
        elif self.at("{"):
            self.pos += 1
            items = yield self.init_list("}", "mapInitializerList", maps=True)
            self.take("}")
            e = self.node("map", start, items.children)
        else:
            e = self._literal()
        self.exit("primary")
        return e

    def _named(self) -> _Rule:
        start = self.tok.start
        if self.at("."):
            self.pos += 1
        if self.tok.kind != "id" or self.tok.text in _LITERAL_WORDS:
            raise ParseError(f"no viable alternative at input '{self.tok.text}'", self.tok.start)
        name = self.tok.text
        self.pos += 1
        if self.at("("):
            self.pos += 1
            args = yield self.expr_list(")")
            self.take(")")
            return self.node("global", start, args.children, name)
        ahead = self.pos
        while self.toks[ahead].text == "." and self.toks[ahead + 1].kind == "id":
            ahead += 2
        if self.toks[ahead].text == "{" and self.toks[ahead].kind == "op":
            self.pos = ahead + 1
            fields = yield self.init_list("}", "fieldInitializerList", maps=False, fields=True)
            self.take("}")
            return self.node("message", start, fields.children, name)
        return self.node("ident", start, [], name)

    def init_list(self, close: str, rule: str, *, maps: bool, fields: bool = False) -> _Rule:
        items = Node("items", self.tok.start, self.tok.start)
        if self.at(close):
            return items
        self.enter(rule)
        while True:
            if fields:
                self.enter("optField")
                if self.at("?"):
                    self.pos += 1
                self._escape_ident()
                self.exit("optField")
                self.take(":")
            else:
                self.enter("optExpr")
                if self.at("?"):
                    self.pos += 1
                items.children.append((yield self.expr()))
                self.exit("optExpr")
                if maps:
                    self.take(":")
            if maps or fields:
                items.children.append((yield self.expr()))
            if not self.at(","):
                break
            self.pos += 1
            if self.at(close):
                break
        self.exit(rule)
        return items

    def _literal(self) -> Node:
        self.enter("literal")
        tok, start = self.tok, self.tok.start
        if self.at("-") and self.toks[self.pos + 1].kind == "num":
            self.pos += 1
            tok = self.tok
        if tok.kind not in ("num", "str") and tok.text not in _LITERAL_WORDS:
            raise ParseError(f"mismatched input '{tok.text}' expecting {_OPERAND}", tok.start)
        self.pos += 1
        self.exit("literal")
        return self.node("literal", start, [])


def parse(text: str) -> Node:
    """The tree of `text`, with parents set; LimitError past cel-go's nesting limits,
    ParseError for text outside the grammar."""
    root = _Parser(text).run()
    deepest = 0
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        depth += node.kind in COUNTED
        deepest = max(deepest, depth)
        for child in node.children:
            child.parent = node
            stack.append((child, depth))
    if deepest > MAX_RECURSION_DEPTH:
        raise LimitError(VISITOR_LIMIT)
    return root


def post_order(root: Node) -> Iterator[Node]:
    """Children before parents, left to right, without recursion."""
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, seen = stack.pop()
        if seen:
            yield node
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(node.children))


def binder_scope(node: Node) -> tuple[list[str], Node | None, int]:
    """For a macro call (`r.all(x, p)`, `cel.bind(v, init, body)`, ...): the variables it binds,
    the node whose type they take (the range, the init, the optional) and the index of its
    first child they are bound in; ([], None, 0) for other nodes."""
    args = node.children[1:] if node.kind == "call" else []
    if node.kind != "call" or not args or args[0].kind != "ident":
        return [], None, 0
    receiver = node.children[0]
    if node.name == "bind" and receiver.kind == "ident" and receiver.name == "cel":
        return ([args[0].name], args[1], 3) if len(args) == 3 else ([], None, 0)
    # The environment has no two-variable comprehensions: `all(k, v, p)` binds nothing.
    if node.name not in BINDERS or len(args) not in ((2, 3) if node.name == "map" else (2,)):
        return [], None, 0
    return [args[0].name], receiver, 2


__all__ = ["LISTENER_LIMIT", "MAX_RECURSION_DEPTH", "VISITOR_LIMIT", "LimitError", "Node"]
__all__ += ["ParseError", "binder_scope", "parse", "post_order"]
