"""Regenerate harness/kernel/_run_options.py, the ``RunOptions`` TypedDict that types
``**options`` of ``harness.run`` / ``arun``, from the option groups of harness/kernel/_options.py
(tests/kernel/test_options.py fails when the file is out of date).

    python scripts/run_options.py

Each option is typed as what a caller may pass, which is wider than what the group stores: a
``Sequence`` for a ``list``, a ``Mapping`` for a ``dict``, ``str`` too for a ``Path``, and one
string too for a :data:`~harness.kernel._options.OneOrMany` option (pydantic converts them).
"""

from __future__ import annotations

import collections.abc
import inspect
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.kernel._options import OPTION_GROUPS, OneOrMany, RunConfig

TARGET = Path(__file__).resolve().parents[1] / "harness" / "kernel" / "_run_options.py"

HEADER = '''\
"""``RunOptions``: the keyword options of :func:`harness.run` / :func:`harness.arun`, for
type checkers (``**options: Unpack[RunOptions]``), each typed as what a caller may pass.

Generated from the option groups of :mod:`harness.kernel._options` by
``python scripts/run_options.py``; do not edit (tests/kernel/test_options.py fails when it is
out of date). An option's default, bounds and meaning are in its group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict

__all__ = ["RunOptions"]


class RunOptions(TypedDict, total=False):
    """Keyword options of :func:`harness.run` / :func:`harness.arun`, for type checkers (generated
    from the option groups such as :class:`LimitOptions`, which define and validate them)."""'''


def accepted(annotation: Any) -> str:
    """The type a caller may pass for a field typed ``annotation``, as source text."""
    if annotation is Any:
        return "Any"
    if annotation is None or annotation is types.NoneType:
        return "None"
    if annotation is Path:
        return "str | Path"
    if annotation in (str, int, float, bool):
        return str(annotation.__name__)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        parts: list[str] = []
        for arg in args:
            for part in accepted(arg).split(" | "):
                if part not in parts:
                    parts.append(part)
        return " | ".join(parts)
    if origin is list:
        return f"Sequence[{accepted(args[0])}]"
    if origin is dict:
        return f"Mapping[{accepted(args[0])}, {accepted(args[1])}]"
    if origin is typing.Literal:
        return "Literal[" + ", ".join(f'"{a}"' for a in args) + "]"
    if origin is collections.abc.Callable:
        params, result = args[0], args[1]
        given = "..." if params is Ellipsis else "[" + ", ".join(map(accepted, params)) + "]"
        return f"Callable[{given}, {accepted(result)}]"
    raise TypeError(f"no caller's type for {annotation!r}: teach scripts/run_options.py")


def option_type(group: type[BaseModel], name: str) -> str:
    info = group.model_fields[name]
    if tuple(info.metadata) == typing.get_args(OneOrMany)[1:]:
        return "str | " + accepted(info.annotation)
    return accepted(info.annotation)


def render() -> str:
    lines = [HEADER]
    seen: set[str] = set()
    for group in OPTION_GROUPS:
        summary = " ".join(inspect.cleandoc(group.__doc__ or "").split("\n\n")[0].split())
        comment = f"{group.__name__} -- {summary[0].lower()}{summary[1:]}"
        lines.append("")
        lines += textwrap.wrap(comment, 100, initial_indent="    # ", subsequent_indent="    # ")
        own = [n for n in group.model_fields if n not in seen]
        lines += [f"    {name}: {option_type(group, name)}" for name in own]
        seen.update(own)
    missing = set(RunConfig.model_fields) - seen
    if missing:
        raise ValueError(f"options of RunConfig in no group of OPTION_GROUPS: {sorted(missing)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = render()
    old = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if text != old:
        TARGET.write_text(text, encoding="utf-8")
    print(f"{TARGET}: {'updated' if text != old else 'up to date'}")
