"""Whether a task's ``workspace.files`` can all be made, checked where the suite is read:
``suites validate`` said OK to names that then made every cell of the task an error cell; and
how long a suite name or task id may be (:data:`MAX_NAME`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from harness.grading._fields import name_problem

__all__ = ["MAX_NAME", "file_name_problem", "workspace_clash"]

#: The longest suite name or task id: they name cassette folders and files (a task id of 300
#: characters passed ``suites validate``, then every recording of it was lost, "File name too
#: long", after the provider had been paid; adversary round 21, part B).
MAX_NAME = 100


def file_name_problem(rel: str) -> str | None:
    """Why a workspace file's path cannot be made, beyond leaving the workspace: ``.`` names
    the workspace itself (an ``AssertionError`` error cell), a name past the file system's
    255 bytes (``File name too long``), a lone surrogate (``"a\\ud800"``: a
    ``UnicodeEncodeError`` error cell)."""
    if problem := name_problem(rel):
        return problem
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if not [part for part in parts if part != "."]:
        return "names the workspace itself, not a file in it"
    if len(parts) > MAX_FOLDERS:  # the workspace opens each folder of the path at once: 20,000
        return (  # deep made every cell an error cell, "Too many open files" (round 22 B)
            f"is {len(parts) - 1} folders deep; a workspace file is at most {MAX_FOLDERS} deep"
        )
    return None


#: How deep a workspace file may be (folders, its own name aside).
MAX_FOLDERS = 200


def _parts(rel: str) -> tuple[str, ...]:
    """The names of ``rel`` as the workspace makes them (a backslash is a character there)."""
    return tuple(p for p in PurePosixPath(rel).parts if p != ".")


def workspace_clash(names: Iterable[str]) -> tuple[str, str] | None:
    """``(name, problem)`` for the first two names that cannot both be made: ``a`` and ``a/b``
    (an error cell, ``Not a directory``), or ``a/./b`` and ``a/b`` (one file: the last content
    was kept silently); None when they all can."""
    files: dict[tuple[str, ...], str] = {}
    for rel in names:
        if (same := files.setdefault(_parts(rel), rel)) != rel:
            return rel, f"{rel!r} names the same file as {same!r}"
    # Each folder a path walks through is numbered once, (its parent's number, its name): a
    # path's folders found in one walk (each prefix sliced and hashed anew took 90 s for 100
    # paths 20,000 folders deep, a 4 MB suite; adversary round 22, part B).
    number: dict[tuple[int, str], int] = {}
    walked: list[tuple[str, list[int]]] = []
    at_file: dict[int, str] = {}
    for parts, rel in files.items():
        node, folders = 0, []
        for part in parts:
            folders.append(node)
            node = number.setdefault((node, part), len(number) + 1)
        at_file[node] = rel
        walked.append((rel, folders[1:]))
    for rel, folders in walked:
        for node in folders:
            if (folder := at_file.get(node)) is not None:
                return rel, f"{rel!r} needs {folder!r} to be a folder, but it is a file here too"
    return None
