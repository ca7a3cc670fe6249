"""One-line messages for a suite file's validation errors: the file and line, the task, the
field path and a fix (an unknown key gets the allowed keys and the closest match)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic_core import ErrorDetails

from harness.suites._yaml_nodes import line_of

__all__ = ["describe"]


def describe(
    path: Path,
    root: yaml.Node | None,
    data: dict[str, Any],
    err: ErrorDetails,
    models: Mapping[str, type[BaseModel]],
) -> tuple[int, str]:
    """(line, one-line message) for one pydantic error; ``models`` maps a parent key to its
    model (``"tasks[]"`` for a task entry), for the allowed keys of an unknown one."""
    loc: tuple[int | str, ...] = tuple(err["loc"])
    msg = err["msg"]
    ctx = err.get("ctx") or {}
    if err["type"] == "suite_field":
        loc += tuple(ctx["field"])
        msg = str(ctx["message"])
    elif err["type"] == "missing":
        msg = f"missing required field; add `{loc[-1]}:` here"
    elif err["type"] == "extra_forbidden":
        msg = _unknown_key(loc, models)
    elif err["type"] == "string_pattern_mismatch" and loc[-1] == "id":
        msg = "task ids start with a letter or digit and use only letters, digits, . _ -"
    elif err["type"] == "string_pattern_mismatch" and loc == ("suite",):
        msg = "suite names are lower case: letters, digits, _ and -, starting with a letter/digit"
    else:
        msg = f"{msg[:1].lower()}{msg[1:]} (got {_short(err.get('input'))})"
    line = line_of(root, loc)
    where = f"{path}:{line}" if line is not None else str(path)
    task = ""
    if len(loc) >= 2 and loc[0] == "tasks" and isinstance(loc[1], int):
        raw = data.get("tasks")
        entry = raw[loc[1]] if isinstance(raw, list) and loc[1] < len(raw) else None
        tid = entry.get("id") if isinstance(entry, dict) else None
        task = f"task {tid!r}: " if isinstance(tid, str) else f"task #{loc[1] + 1}: "
        loc = loc[2:]
    field = _field_path(loc) or "(top level)"
    return line or 0, f"{where}: {task}{field}: {msg}"


def _field_path(loc: tuple[int | str, ...]) -> str:
    """``("expect", "value", 1)`` -> ``expect.value[1]``; odd keys are quoted."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _unknown_key(loc: tuple[int | str, ...], models: Mapping[str, type[BaseModel]]) -> str:
    key, parent = str(loc[-1]), loc[:-1]
    model: type[BaseModel] | None
    if len(parent) == 2 and parent[0] == "tasks" and isinstance(parent[1], int):
        model = models.get("tasks[]")
    else:
        model = models.get(str(parent[-1]) if parent else "")
    if model is None:
        return f"unknown key {key!r}; remove it"
    allowed = sorted((f.alias or n) for n, f in model.model_fields.items())
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key {key!r}; {hint}allowed here: {', '.join(allowed)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
