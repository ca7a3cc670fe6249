"""Small helpers shared by the suite and grader models: located field errors and the checks of
YAML values they share."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from pydantic_core import PydanticCustomError

__all__ = ["MAX_TIMEOUT_S", "field_error", "name_problem", "relative_path_ok", "yaml_text"]

#: The longest ``timeout_s`` a grader takes (a day): ``.inf`` or ``1.0e+300`` passed
#: ``suites validate``, then made every cell an error (``OverflowError``) or, for a ``command``
#: grader, failed every cell (``prlimit: failed to parse CPU limit``: adversary round 21, B).
MAX_TIMEOUT_S = 86_400.0


def field_error(field: str | tuple[str | int, ...], message: str) -> PydanticCustomError:
    """An error located at ``field`` (a dotted path, or the parts, below the raising model)."""
    parts = (
        tuple(int(p) if p.isdigit() else p for p in field.split("."))
        if isinstance(field, str)
        else field
    )
    return PydanticCustomError("suite_field", "{message}", {"field": parts, "message": message})


def yaml_text(value: Any) -> Any:
    """A YAML number given where text is expected, as its text (``395`` -> ``"395"``)."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def relative_path_ok(rel: str) -> bool:
    """True for a non-empty relative path that stays inside its root (no ``..``)."""
    return (
        bool(rel)
        and "\x00" not in rel
        and not rel.startswith(("/", "\\"))
        and (".." not in PurePosixPath(rel.replace("\\", "/")).parts)
        and not re.match(r"^[A-Za-z]:", rel)
    )


def name_problem(rel: str) -> str | None:
    """Why no file can have the path ``rel``, or None: a lone surrogate (``"a\\ud800"``), or a
    name past the file system's 255 bytes (``File name too long``)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate at character {exc.start}, not text"
    if any(len(part.encode("utf-8")) > 255 for part in PurePosixPath(rel.replace("\\", "/")).parts):
        return "holds a name longer than 255 bytes (the file system's limit)"
    return None
