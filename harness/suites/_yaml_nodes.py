"""YAML with positions: parse a document keeping its node tree, so a validation error's location
(``("tasks", 3, "expect", "kind")``) can be mapped back to a line of the file."""

from __future__ import annotations

from typing import Any, NamedTuple

import yaml

from harness._yaml import check_yaml_bounds, duplicate_keys, unmakeable
from harness.errors import YAMLSyntaxError

__all__ = ["Parsed", "YAMLSyntaxError", "duplicate_keys", "line_of", "parse_document", "parse_yaml"]


class Parsed(NamedTuple):
    """A parsed suite document (see :func:`parse_document`)."""

    data: Any
    node: yaml.Node | None
    #: ``(line, key, first line)`` of each key given twice in one mapping.
    repeats: list[tuple[int, str, int]]


def parse_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """The document's data and node tree (:func:`parse_document`)."""
    parsed = parse_document(text)
    return parsed.data, parsed.node


def parse_document(text: str) -> Parsed:
    """The document's data (safe types only), its node tree (None for an empty document) and
    the keys it repeats (:func:`duplicate_keys`, found before merge keys are applied).
    Alias expansion and nesting are bounded first (:mod:`harness._yaml`): a YAML bomb is a
    syntax error at its line, never gigabytes of memory."""
    try:
        check_yaml_bounds(text, source="<suite>")
    except YAMLSyntaxError as exc:
        problem = exc.problem.split(": ", 1)[-1]
        if problem.endswith("refused"):  # over a bound; plain syntax errors come from below
            raise YAMLSyntaxError(problem, exc.line, exc.column) from None
    try:  # the reader refuses NUL and other control characters as it is made
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        problem = f"character #x{exc.character:04x} is not allowed in YAML ({exc.reason})"
        raise YAMLSyntaxError(problem, line, column) from None
    try:
        node = loader.get_single_node()
        # Keys repeated in a mapping, found before construction: merging (``<<: *base``)
        # writes the merged keys into the node tree, so an override looked like a repeat.
        repeats = duplicate_keys(node)
        data = loader.construct_document(node) if node is not None else None
    except ValueError as exc:  # 5,000 digits, or the date 2001-13-45: a traceback before
        raise YAMLSyntaxError(unmakeable(exc), None, None) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if mark is None:
            raise YAMLSyntaxError(problem, None, None) from None
        raise YAMLSyntaxError(problem, mark.line + 1, mark.column + 1) from None
    finally:
        loader.dispose()
    return Parsed(data, node, repeats)


def line_of(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the deepest node found along ``loc`` (a mapping key's own line)."""
    if root is None:
        return None
    node: yaml.Node = root
    line = node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    line, node = key.start_mark.line + 1, value
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line
