"""The builtin file tools: read, write and edit a file, list a directory (glob and grep are in
:mod:`harness.tools._search_tools`), all confined to the run's workspace.

Every path is split by :meth:`Workspace.parts` and opened through :meth:`Workspace.beneath`:
component by component from a descriptor of the workspace, never following a link the kernel
resolves (see :mod:`harness.tools._beneath`), so a symlink swapped in by another process can
neither be read through nor written through. FIFOs, sockets and devices are refused without
blocking. Paths shown to the model are relative to the workspace, undecodable bytes in names
escaped (``\\xff``). Blocking file work runs in a worker thread so a slow disk never stalls the
event loop (or the kernel's timeouts).
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from typing import Any, TypeVar

from harness.core._messages import UIPayload
from harness.errors import ToolError
from harness.tools._base import ToolContext, ToolOutput
from harness.tools._beneath import Beneath, Spot, read_fd
from harness.tools._builtin_base import BuiltinTool, object_schema
from harness.tools._diff import unified_diff
from harness.tools._workspace import Workspace

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LISTED",
    "MAX_MATCHES",
    "MAX_READ_CHARS",
    "MAX_WORKSPACE_FILES",
    "MAX_WRITE_BYTES",
    "EditFileTool",
    "ListDirTool",
    "ReadFileTool",
    "WriteFileTool",
    "read_spot",
    "shown_name",
]

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_READ_CHARS = 16_000
MAX_MATCHES = 200
#: Entries list_dir shows (60,000 entries, six shell commands' worth, were a 3.2 MB result).
MAX_LISTED = 1_000
#: Largest file write_file / edit_file may write (bytes; HARNESS_MAX_WRITE_BYTES overrides).
MAX_WRITE_BYTES = 10 * 1024 * 1024
#: Files a workspace may hold before write_file refuses new ones (HARNESS_MAX_WORKSPACE_FILES).
MAX_WORKSPACE_FILES = 10_000
_MAX_DIFF_CHARS = 200_000
_PATH = {"type": "string", "description": "A path relative to the workspace root."}
T = TypeVar("T")


def shown_name(name: str) -> str:
    """A file name as text for the model: bytes that are not UTF-8 (``surrogateescape``d by
    ``os``) shown as ``\\xNN``, never a lone surrogate that no encoder accepts."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _at(ws: Workspace, path: str, work: Callable[[Beneath, Spot], T], *, create: bool = False) -> T:
    """``work(beneath, spot)`` for the model-given ``path``; OS errors become ToolErrors."""
    parts = ws.parts(path)
    beneath = ws.beneath(path)
    shown = shown_name("/".join(parts) or ".")
    try:
        spot = beneath.spot(parts, create_parents=create)
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}") from None
    except OSError as exc:
        verb = "write" if create else "open"
        raise ToolError(f"cannot {verb} {shown}: {exc.strerror or exc}") from None
    try:
        return work(beneath, spot)
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown_name(spot.rel)}") from None
    except IsADirectoryError:
        raise ToolError(f"{shown_name(spot.rel)} is a directory") from None
    except OSError as exc:
        raise ToolError(f"cannot use {shown_name(spot.rel)}: {exc.strerror or exc}") from None
    finally:
        spot.close()


def read_spot(beneath: Beneath, spot: Spot, *, strict: bool) -> str:
    """A regular file's text, or ToolError: missing, not a file, too big, binary, (strict) not
    UTF-8."""
    rel = shown_name(spot.rel)
    with beneath.opened(spot) as (fd, st):
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel} is a directory; use list_dir")
        if st.st_size > MAX_FILE_BYTES:
            raise ToolError(f"{rel} is too large ({st.st_size} bytes; limit {MAX_FILE_BYTES})")
        data = read_fd(fd, MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ToolError(f"{rel} is too large (over {MAX_FILE_BYTES} bytes; it grew)")
    if b"\x00" in data[:8192]:
        raise ToolError(f"{rel} looks like a binary file ({len(data)} bytes)")
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not valid UTF-8 text") from None


def _limit(name: str, default: int) -> int:
    """A resource limit: ``default``, or the environment variable ``name`` when set."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ToolError(f"{name}={raw!r} is not an integer") from None
    return max(value, 1)


def _write_spot(beneath: Beneath, spot: Spot, content: str) -> None:
    rel = shown_name(spot.rel)
    if spot.name is None or (spot.lstat is not None and stat.S_ISDIR(spot.lstat.st_mode)):
        raise ToolError(f"{rel} is a directory")
    data = content.encode("utf-8", "replace")
    limit = _limit("HARNESS_MAX_WRITE_BYTES", MAX_WRITE_BYTES)
    if len(data) > limit:
        raise ToolError(
            f"refused: {len(data):,} bytes for {rel} exceed the {limit:,}-byte write limit "
            "(HARNESS_MAX_WRITE_BYTES)"
        )
    try:
        beneath.replace(spot, data)
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory") from None
    except OSError as exc:
        raise ToolError(f"cannot write {rel}: {exc.strerror or exc}") from None


def _check_room(ws: Workspace) -> None:
    """Refuse a new file when the workspace already holds the maximum number of files."""
    limit = _limit("HARNESS_MAX_WORKSPACE_FILES", MAX_WORKSPACE_FILES)
    n = 0
    fd, _ = ws.beneath().directory([])
    try:
        for _, _, filenames, _ in os.fwalk(".", dir_fd=fd):  # never follows a link
            n += len(filenames)
            if n >= limit:
                raise ToolError(
                    f"refused: the workspace already holds {limit:,} files "
                    "(HARNESS_MAX_WORKSPACE_FILES)"
                )
    finally:
        os.close(fd)


def _diff(rel: str, before: str | None, after: str, *, created: bool) -> UIPayload:
    """A ``diff`` payload; its ``diff`` is None when the old text is unknown or too big."""
    text: str | None = None
    if before is not None and len(before) + len(after) <= _MAX_DIFF_CHARS:
        old_name = "/dev/null" if created else f"a/{rel}"
        text = unified_diff(  # its work bounded: None when too dear (see harness.tools._diff)
            before.splitlines(keepends=True), after.splitlines(keepends=True), old_name, f"b/{rel}"
        )
    return UIPayload("diff", {"path": rel, "created": created, "diff": text})


class ReadFileTool(BuiltinTool):
    name = "read_file"
    description = (
        f"Read a UTF-8 text file in the workspace. Output is capped at {MAX_READ_CHARS} "
        f"characters; files over {MAX_FILE_BYTES // (1024 * 1024)} MB are refused."
    )
    parameters = object_schema({"path": _PATH}, "path")
    parallel_safe = True
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        path = self._str(self._check(args), "path")

        def work(beneath: Beneath, spot: Spot) -> tuple[str, str]:
            return shown_name(spot.rel), read_spot(beneath, spot, strict=False)

        rel, text = await asyncio.to_thread(_at, ctx.workspace, path, work)
        if len(text) > MAX_READ_CHARS:
            cut = len(text) - MAX_READ_CHARS
            text = f"{text[:MAX_READ_CHARS]}\n[... truncated: {cut} of {len(text)} chars cut]"
        return ToolOutput(text, ui=UIPayload("file", {"path": rel}))


class WriteFileTool(BuiltinTool):
    name = "write_file"
    description = "Create or overwrite a UTF-8 text file in the workspace (parent dirs are made)."
    parameters = object_schema(
        {"path": _PATH, "content": {"type": "string", "description": "The full new content."}},
        *("path", "content"),
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        path = self._str(args, "path")
        content = self._str(args, "content")
        ws = ctx.workspace
        ws.parts(path)  # refuse a bad path before any directory is made

        def work(beneath: Beneath, spot: Spot) -> tuple[str, bool, str | None]:
            created = spot.lstat is None
            if created:
                _check_room(ws)
            before: str | None = ""
            if not created:
                try:
                    before = read_spot(beneath, spot, strict=True)
                except ToolError:
                    before = None  # exists but is not diffable text (a directory: refused below)
            _write_spot(beneath, spot, content)
            return shown_name(spot.rel), created, before

        rel, created, before = await asyncio.to_thread(_at, ws, path, work, create=True)
        ui = _diff(rel, before, content, created=created)
        size = len(content.encode("utf-8", "replace"))
        return ToolOutput(f"wrote {size} bytes to {rel}", ui=ui)


class EditFileTool(BuiltinTool):
    name = "edit_file"
    description = (
        "Replace an exact string in a text file. `old` must occur exactly once unless "
        "replace_all is true; include surrounding lines to make it unique."
    )
    parameters = object_schema(
        {
            "path": _PATH,
            "old": {"type": "string", "description": "The exact text to replace."},
            "new": {"type": "string", "description": "The replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
        },
        *("path", "old", "new"),
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        path = self._str(args, "path")
        old, new = self._str(args, "old"), self._str(args, "new")
        replace_all = args.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise ToolError(f"argument 'replace_all' must be a boolean, got {replace_all!r}")
        if old == "":
            raise ToolError("argument 'old' must not be empty")
        if old == new:
            raise ToolError("'old' and 'new' are identical; nothing to change")
        ctx.workspace.parts(path)

        def work(beneath: Beneath, spot: Spot) -> tuple[str, int, str, str]:
            rel = shown_name(spot.rel)
            text = read_spot(beneath, spot, strict=True)
            count = text.count(old)
            if count == 0:
                raise ToolError(f"'old' string not found in {rel}")
            if count > 1 and not replace_all:
                raise ToolError(
                    f"'old' string occurs {count} times in {rel}; "
                    "pass replace_all=true or give more context"
                )
            # Refused before it is made: 10 MB of "a" with a 1 KB replacement was a 10 GB string.
            size = len(text) + count * (len(new) - len(old))
            limit = _limit("HARNESS_MAX_WRITE_BYTES", MAX_WRITE_BYTES)
            if size > limit:  # characters: at least as many bytes
                raise ToolError(
                    f"refused: replacing {count:,} occurrences would make {rel} {size:,} "
                    f"characters, over the {limit:,}-byte write limit (HARNESS_MAX_WRITE_BYTES)"
                )
            after = text.replace(old, new)
            _write_spot(beneath, spot, after)
            return rel, count, text, after

        rel, count, before, after = await asyncio.to_thread(_at, ctx.workspace, path, work)
        noun = "occurrence" if count == 1 else "occurrences"
        ui = _diff(rel, before, after, created=False)
        return ToolOutput(f"replaced {count} {noun} in {rel}", ui=ui)


class ListDirTool(BuiltinTool):
    name = "list_dir"
    description = "List a workspace directory (default: the root); directories end with '/'."
    parameters = object_schema({"path": {**_PATH, "default": "."}})
    parallel_safe = True
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        ws = ctx.workspace
        path = self._str(self._check(args), "path", ".")
        parts = ws.parts(path)

        def work() -> tuple[str, list[str]]:
            beneath = ws.beneath(path)
            shown = shown_name("/".join(parts) or ".")
            try:
                fd, real = beneath.directory(parts)
            except FileNotFoundError:
                raise ToolError(f"not found: {shown}") from None
            except NotADirectoryError:
                raise ToolError(f"{shown} is not a directory") from None
            except OSError as exc:
                raise ToolError(f"cannot list {shown}: {exc.strerror or exc}") from None
            base = [p for p in real.split("/") if p != "."]
            entries = []
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        if entry.is_symlink():  # a dir only if it stays inside
                            is_dir = _link_is_dir(ws, [*base, entry.name])
                        else:
                            is_dir = entry.is_dir(follow_symlinks=False)
                        entries.append(shown_name(entry.name) + ("/" if is_dir else ""))
            except OSError as exc:
                raise ToolError(f"cannot list {shown}: {exc.strerror or exc}") from None
            finally:
                os.close(fd)
            return shown_name(real), sorted(entries)

        rel, entries = await asyncio.to_thread(work)
        if len(entries) > MAX_LISTED:  # a shell can make 10,000 entries per command
            extra = len(entries) - MAX_LISTED
            entries[MAX_LISTED:] = [
                f"[capped at {MAX_LISTED:,} entries; {extra:,} more not shown; narrow with glob]"
            ]
        return "\n".join(entries) if entries else f"(empty directory: {rel})"


def _link_is_dir(ws: Workspace, parts: list[str]) -> bool:
    """Whether the link ``parts`` leads to a directory inside the workspace."""
    try:
        fd, _ = ws.beneath().directory(parts)
    except (OSError, ToolError):
        return False
    os.close(fd)
    return True
