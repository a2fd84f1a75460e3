"""Reading the YAML and JSON files the commands are given (configurations, SchedulerProfiles,
state files), within bounds, fast, and with errors that say where.

One reader for all of them, because any of them may come from someone else:

- **Bounded.** Collections may nest `MAX_DEPTH` levels, and aliases may add at most
  `MAX_ALIAS_NODES` nodes to a document in all, so a few hundred bytes of nested aliases (a
  "billion laughs") or of brackets are refused at once instead of expanding without end in
  whatever reads the document next. A recursive alias is refused too.
- **No duplicate keys.** A key given twice in one mapping is refused with its line, in YAML
  and JSON alike (both would otherwise keep the last value silently); YAML's merge keys
  (`<<`) still override as they should.
- **Fast.** JSON (what `kubectl get -o json` prints) goes through the standard library's C
  decoder, each object checked for repeated keys as it is built. YAML goes through
  libyaml's event parser where PyYAML has it (the pure-Python one otherwise); the documents
  are built from its events in one pass, with the implicit type of each distinct plain
  scalar resolved once. Anything rarer (explicit collection tags, merge keys, complex keys)
  is built by PyYAML's own safe constructor, after the same checks. The garbage collector
  is paused meanwhile: the objects built hold no cycles, and a full collection every few
  thousand new containers tripled the time a large state took to load.
- **Errors in one line**: `FILE:LINE:COLUMN: problem (context at line L, column C)`.

The values are what `yaml.safe_load` gives (YAML 1.1 types: `yes` is true, dates become
datetimes), except that a JSON document is read as JSON.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.error import MarkedYAMLError
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, ScalarNode

from scheduler_runtime.config.errors import ConfigError

# Far deeper than any Kubernetes object or configuration (a pod with affinity is about 10),
# far below what recursion in a decoder, validator or printer survives.
MAX_DEPTH: Final = 100
# The nodes aliases may add to one document, in all: a configuration that shares a plugin
# list between profiles adds a few dozen.
MAX_ALIAS_NODES: Final = 100_000
STDIN: Final = "-"

_LOADER: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR: Final = "tag:yaml.org,2002:str"
_MERGE: Final = "tag:yaml.org,2002:merge"
_MAP: Final = frozenset({None, "!", "tag:yaml.org,2002:map"})
_SEQ: Final = frozenset({None, "!", "tag:yaml.org,2002:seq"})
# Plain keys PyYAML's constructor gives a meaning of their own (merge, value).
_SPECIAL_KEYS: Final = frozenset({"<<", "="})


class DocumentError(ConfigError):
    """A file that cannot be read as YAML or JSON, or that is out of bounds: `path` is where
    (`FILE:LINE:COLUMN`, or the file alone), the message one line."""

    @classmethod
    def at(cls, message: str) -> DocumentError:
        where, _, reason = message.partition(": ")
        return cls(where, reason)


def read_documents(path: str | Path) -> list[Any]:
    """Every document of a YAML stream or JSON file (`-`: standard input), empty ones left
    out."""
    return parse_documents(_read(path), _name(path))


def read_document(path: str | Path) -> Any:
    """The one document of a file; an empty file or a stream of several is an error."""
    name = _name(path)
    documents = parse_documents(_read(path), name)
    if len(documents) != 1:
        count = "no document" if not documents else f"{len(documents)} documents"
        raise DocumentError.at(f"{name}: holds {count}, expected one")
    return documents[0]


def parse_documents(data: bytes | str, name: str) -> list[Any]:
    """The documents of `data` (YAML or JSON), read as `read_documents` reads a file."""
    with _collector_paused():
        if _looks_like_json(data):
            try:
                document = json.loads(data, object_pairs_hook=_unique, parse_constant=_no_constant)
            except (ValueError, RecursionError):
                pass  # flow style, not valid, too deep or a key given twice: YAML says where
            else:
                if _depth_within_bounds(document):
                    return [] if document is None else [document]
                # Too deep: the YAML reader below says where.
        return _parse_yaml(data, name)


class _RepeatedKeyError(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a key repeats."""
    built = dict(pairs)
    if len(built) != len(pairs):
        raise _RepeatedKeyError
    return built


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def one_line(error: BaseException, name: str) -> str:
    """A YAML error as one line: `name:line:column: problem (context at line, column)`."""
    if isinstance(error, MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "not valid YAML"
        message = f"{_where(name, mark)}: {problem}"
        context_mark = error.context_mark
        if error.context and error.problem:
            context = error.context
            if context_mark is not None and (
                mark is None or (context_mark.line, context_mark.column) != (mark.line, mark.column)
            ):
                context += f" at line {context_mark.line + 1}, column {context_mark.column + 1}"
            message += f" ({context})"
        return message
    if isinstance(error, yaml.reader.ReaderError):
        return f"{name}: byte {error.position}: cannot read the text: {error.reason}"
    return f"{name}: " + " ".join(str(error).split())


def _name(path: str | Path) -> str:
    return "<stdin>" if str(path) == STDIN else str(path)


def _read(path: str | Path) -> bytes:
    try:
        if str(path) == STDIN:
            import sys  # noqa: PLC0415 - only standard input needs it

            return sys.stdin.buffer.read()
        return Path(path).read_bytes()
    except OSError as error:
        raise DocumentError.at(
            f"{_name(path)}: cannot read the file: {error.strerror or error}"
        ) from None


@contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _looks_like_json(data: bytes | str) -> bool:
    start = data[:64].lstrip()
    return start[:1] in (b"{", b"[", "{", "[")


def _depth_within_bounds(document: Any) -> bool:
    pending = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if type(value) is dict:
            children: Any = value.values()
        elif type(value) is list:
            children = value
        else:
            continue
        if depth > MAX_DEPTH:
            return False
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                pending.append((child, depth + 1))
    return True


def _where(name: str, mark: Any) -> str:
    return f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name


def _parse_yaml(data: bytes | str, name: str) -> list[Any]:
    loader = _LOADER(data)
    try:
        builder = _Builder(loader, name)
        documents = builder.run()
    except MarkedYAMLError as error:
        raise DocumentError.at(one_line(error, name)) from None
    except yaml.YAMLError as error:
        raise DocumentError.at(one_line(error, name)) from None
    finally:
        loader.dispose()
    if builder.complete:
        return documents
    # Within bounds, but with a construct the one pass does not build: PyYAML builds it.
    try:
        return [doc for doc in yaml.load_all(data, Loader=_UniqueKeyLoader) if doc is not None]
    except yaml.YAMLError as error:
        raise DocumentError.at(one_line(error, name)) from None
    except (ValueError, TypeError, OverflowError) as error:
        raise DocumentError.at(f"{name}: {error}") from None


class _UniqueKeyLoader(_LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader, refusing a scalar key given twice in one mapping (merged keys
    may still be overridden, as YAML's merge means)."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> Any:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                continue
            key = (key_node.tag, key_node.value)
            if key in seen:
                raise ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


class _Frame:
    """An open collection: what is being filled, the key awaiting its value, and (for an
    anchored one) the anchor and the node count when it started."""

    __slots__ = ("anchor", "container", "key", "started")

    def __init__(self, container: Any, anchor: str | None, started: int) -> None:
        self.container = container
        self.key: Any = _NO_KEY
        self.anchor = anchor
        self.started = started


_NO_KEY: Final = object()


class _Builder:
    """Builds the documents from the parser's events in one pass, checking the bounds."""

    def __init__(self, loader: yaml.SafeLoader, name: str) -> None:
        self.loader = loader
        self.name = name
        self.complete = True  # False once something is met that PyYAML must build
        self.constructor = SafeConstructor()
        self.plain: dict[str, Any] = {}
        # The loader's implicit-type resolver (PyYAML leaves it untyped).
        self.resolve: Callable[..., str] = loader.resolve

    def fail(self, mark: Any, reason: str) -> DocumentError:
        return DocumentError(_where(self.name, mark), reason)

    def run(self) -> list[Any]:  # noqa: PLR0912, PLR0915 - one loop over every event, kept flat for speed
        get_event: Callable[[], Any] = self.loader.get_event
        documents: list[Any] = []
        stack: list[_Frame] = []
        anchors: dict[str, tuple[Any, int | None]] = {}  # name -> (value, size; None: open)
        nodes = added = 0
        root: Any = None
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent:
                nodes += 1
                tag = event.tag
                if tag is None:
                    if event.implicit[0]:
                        if event.value in _SPECIAL_KEYS:
                            self.complete = False
                            value = event.value
                        else:
                            value = self._plain(event)
                    else:
                        value = event.value
                elif tag == _STR:
                    value = event.value
                else:
                    value = self._tagged(event)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                nodes += 1
                if len(stack) >= MAX_DEPTH:
                    raise self.fail(event.start_mark, f"nested deeper than {MAX_DEPTH} levels")
                if kind is MappingStartEvent:
                    container: Any = {}
                    if event.tag not in _MAP:
                        self.complete = False
                else:
                    container = []
                    if event.tag not in _SEQ:
                        self.complete = False
                if stack and stack[-1].key is _NO_KEY and type(stack[-1].container) is dict:
                    self.complete = False  # a collection as a mapping key
                frame = _Frame(container, event.anchor, nodes)
                if event.anchor is not None:
                    anchors[event.anchor] = (container, None)
                stack.append(frame)
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                value = frame.container
                if frame.anchor is not None:
                    anchors[frame.anchor] = (value, nodes - frame.started + 1)
            elif kind is AliasEvent:
                found = anchors.get(event.anchor)
                if found is None:
                    raise self.fail(event.start_mark, f"found undefined alias {event.anchor!r}")
                value, size = found
                if size is None:
                    raise self.fail(
                        event.start_mark, f"alias {event.anchor!r} refers to its own collection"
                    )
                nodes += size
                added += size
                if added > MAX_ALIAS_NODES:
                    raise self.fail(
                        event.start_mark,
                        f"aliases expand the document by more than {MAX_ALIAS_NODES} nodes",
                    )
            elif kind is DocumentStartEvent:
                anchors = {}
                nodes = added = 0
                root = None
                continue
            elif kind is DocumentEndEvent:
                if root is not None:
                    documents.append(root)
                continue
            elif kind is StreamEndEvent:
                return documents
            else:  # StreamStartEvent
                continue
            # A value is complete: it goes into the open collection, or is the document.
            if not stack:
                root = value
                continue
            top = stack[-1]
            container = top.container
            if type(container) is list:
                container.append(value)
            elif top.key is _NO_KEY:
                try:
                    repeated = value in container
                except TypeError:
                    self.complete = False
                    value = id(value)  # stands in; PyYAML builds (and refuses) it later
                else:
                    if repeated:
                        raise self.fail(event.start_mark, f"duplicate key {value!r}")
                top.key = value
            else:
                container[top.key] = value
                top.key = _NO_KEY

    def _plain(self, event: Any) -> Any:
        """A plain scalar's value by its implicit type, resolved once per distinct text."""
        text = event.value
        try:
            return self.plain[text]
        except KeyError:
            pass
        tag = self.resolve(ScalarNode, text, (True, False))
        value = text if tag == _STR else self._construct(tag, event)
        self.plain[text] = value
        return value

    def _tagged(self, event: Any) -> Any:
        tag = event.tag
        if tag == "!":
            tag = self.resolve(ScalarNode, event.value, event.implicit)
        return self._construct(tag, event)

    def _construct(self, tag: Any, event: Any) -> Any:
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return self.constructor.construct_object(node)
        except (ValueError, TypeError, OverflowError) as error:
            raise self.fail(event.start_mark, f"{error}") from None


__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "STDIN",
    "DocumentError",
    "one_line",
    "parse_documents",
    "read_document",
    "read_documents",
]
