"""YAML loading with bounds: what a suite, a cassette or a baseline file may cost to load.

A YAML file is small on disk and can still be huge in memory: nine nested aliases (765 bytes)
expand to a billion nodes when something walks the data (validation, JSON), and 500 levels of
nesting overflow the composer's recursion. :func:`safe_load_bounded` first reads the file's
event stream (the parser is a state machine, nothing recursive), counting the nesting depth and
the nodes and the bytes of text each alias stands for once expanded; past :data:`MAX_DEPTH`
levels, :data:`MAX_ALIAS_NODES` nodes or :data:`MAX_ALIAS_BYTES` bytes reached through aliases
(one 1 MB scalar aliased 300 times is 300 nodes but 300 MB), or at an alias inside the very
anchor it names (``&a {more: *a}``, a structure containing itself, which JSON, validation and
every walk of the data would recurse into forever), it raises a
:class:`~harness.errors.YAMLSyntaxError` naming the file and the line, before anything is built.
Only then is the document constructed, with the safe loader. A file without aliases may be as
large as it likes (a 10,000-task suite is fine); only its depth is bounded.

This module is a leaf: it imports nothing from harness but :mod:`harness.errors`.
"""

from __future__ import annotations

from typing import IO, Any

import yaml

from harness.errors import YAMLSyntaxError

__all__ = [
    "MAX_ALIAS_BYTES",
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_NODES",
    "check_yaml_bounds",
    "duplicate_keys",
    "safe_load_bounded",
    "unmakeable",
]

#: Nodes a document may reach through aliases, counted expanded (an alias of a 3-item list
#: counts 4); a billion-laughs document passes it within a few levels.
MAX_ALIAS_NODES = 10_000
#: Bytes of scalar text a document may reach through aliases, counted expanded (UTF-8): one
#: anchored 1 MB scalar aliased 300 times is 300 MB once loaded, though only 300 nodes.
MAX_ALIAS_BYTES = 10 * 1024 * 1024
#: Collections nested inside one another.
MAX_DEPTH = 100
#: Values (scalars and collections) a document may hold, aliases aside: a 6 MB flow list of 3
#: million one-letter items took 2.1 GB and 190 s to validate; the 64 MiB a file may have,
#: ten times that (adversary round 21, part B). A 10,000-task suite holds about 150,000.
MAX_NODES = 1_000_000

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _error(source: str, problem: str, mark: Any) -> YAMLSyntaxError:
    line = None if mark is None else int(mark.line) + 1
    column = None if mark is None else int(mark.column) + 1
    where = source if line is None else f"{source}:{line}"
    exc = YAMLSyntaxError(f"{where}: {problem}", line, column)
    exc.source = source  # type: ignore[attr-defined]
    return exc


def check_yaml_bounds(
    text: str,
    *,
    source: str,
    max_alias_nodes: int = MAX_ALIAS_NODES,
    max_depth: int = MAX_DEPTH,
    max_alias_bytes: int = MAX_ALIAS_BYTES,
    max_nodes: int = MAX_NODES,
) -> None:
    """Raise :class:`~harness.errors.YAMLSyntaxError` (``source:line: ...``) when ``text`` nests
    deeper than ``max_depth``, holds more than ``max_nodes`` values, reaches more than
    ``max_alias_nodes`` nodes or ``max_alias_bytes`` bytes of scalar text through aliases, or
    holds a recursive alias (one inside the anchor it names); also for malformed YAML."""
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> expanded (nodes, bytes) of what it names
    frames: list[list[Any]] = []  # [anchor, nodes so far, bytes so far] of each open collection
    expanded = expanded_bytes = nodes = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent):
                nodes += 1
                if nodes > max_nodes:
                    raise _error(source, f"more than {max_nodes:,} values (split the file); "
                                 "refused", event.start_mark)  # fmt: skip
            if isinstance(event, yaml.AliasEvent):
                if any(frame[0] == event.anchor for frame in frames):
                    raise _error(
                        source,
                        f"recursive alias *{event.anchor}: it is inside the anchor "
                        f"&{event.anchor} it names (a structure containing itself); refused",
                        event.start_mark,
                    )
                size, nbytes = sizes.get(str(event.anchor), (1, 0))
                expanded += size
                expanded_bytes += nbytes
                if expanded > max_alias_nodes:
                    raise _error(
                        source,
                        f"aliases expand to more than {max_alias_nodes:,} nodes "
                        f"(alias *{event.anchor}); refused",
                        event.start_mark,
                    )
                if expanded_bytes > max_alias_bytes:
                    raise _error(
                        source,
                        f"aliases expand to more than {max_alias_bytes:,} bytes of text "
                        f"(alias *{event.anchor}); refused",
                        event.start_mark,
                    )
                if frames:
                    frames[-1][1] += size
                    frames[-1][2] += nbytes
            elif isinstance(event, yaml.ScalarEvent):
                nbytes = _utf8_len(event.value) if (frames or event.anchor is not None) else 0
                if event.anchor is not None:
                    sizes[str(event.anchor)] = (1, nbytes)
                if frames:
                    frames[-1][1] += 1
                    frames[-1][2] += nbytes
            elif isinstance(event, yaml.CollectionStartEvent):
                if len(frames) >= max_depth:
                    raise _error(
                        source,
                        f"nested more than {max_depth} levels deep; refused",
                        event.start_mark,
                    )
                frames.append([event.anchor, 1, 0])
            elif isinstance(event, yaml.CollectionEndEvent) and frames:
                anchor, size, nbytes = frames.pop()
                if anchor is not None:
                    sizes[str(anchor)] = (size, nbytes)
                if frames:
                    frames[-1][1] += size
                    frames[-1][2] += nbytes
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if "maximum nesting depth" in str(problem):  # libyaml's own bound (flow collections)
            problem = f"nested more than {max_depth} levels deep; refused"
        raise _error(source, str(problem), mark) from None


def unmakeable(exc: ValueError) -> str:
    """What is wrong with a scalar the safe loader could not make into a value: a number of
    more than 4,300 digits (Python's limit for text to int), or a date like ``2001-13-45``; the
    constructor raised a bare ``ValueError`` (a traceback) instead of a YAML error."""
    text = str(exc)
    if "digits" in text:
        return "a number of more than 4,300 digits (Python's limit); quote it to keep it as text"
    return f"a value that cannot be made ({text}); quote it to keep it as text"


def _utf8_len(value: str) -> int:
    """Bytes of ``value`` in UTF-8 (ASCII text costs no copy)."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def safe_load_bounded(
    text_or_stream: str | bytes | IO[str] | IO[bytes],
    *,
    source: str,
    max_alias_nodes: int = MAX_ALIAS_NODES,
    max_depth: int = MAX_DEPTH,
    max_alias_bytes: int = MAX_ALIAS_BYTES,
) -> Any:
    """The document in ``text_or_stream`` (safe types only), after :func:`check_yaml_bounds`;
    a key given twice in one mapping is refused. ``source`` (a file name) is named in every
    error."""
    raw = text_or_stream if isinstance(text_or_stream, str | bytes) else text_or_stream.read()
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _error(source, f"not UTF-8 text (byte {exc.start})", None) from None
    else:
        text = raw
    check_yaml_bounds(
        text,
        source=source,
        max_alias_nodes=max_alias_nodes,
        max_depth=max_depth,
        max_alias_bytes=max_alias_bytes,
    )
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        repeats = duplicate_keys(node)  # found before merge keys copy keys into the tree
        data = None if repeats or node is None else loader.construct_document(node)
    except ValueError as exc:  # 5,000 digits, or the date 2001-13-45: a traceback before
        raise _error(source, unmakeable(exc), None) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise _error(source, str(problem), mark) from None
    finally:
        loader.dispose()
    if repeats:  # YAML keeps the last one silently (a profile's examples_file did)
        line, key, first = repeats[0]
        mark = yaml.Mark(source, 0, line - 1, 0, None, 0)
        raise _error(source, f"key {key!r} given twice (first on line {first}); keep only one",
                     mark)  # fmt: skip
    return data


def duplicate_keys(root: yaml.Node | None) -> list[tuple[int, str, int]]:
    """``(line, key, first line)`` for every key repeated in a mapping (YAML keeps the last one
    silently), sorted by line."""
    found: list[tuple[int, str, int]] = []
    stack = [root] if root is not None else []
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in visited:  # aliases share nodes
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    line = key.start_mark.line + 1
                    if key.value in first:
                        found.append((line, key.value, first[key.value]))
                    first.setdefault(key.value, line)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(found)
