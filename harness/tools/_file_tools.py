"""The builtin file tools: read, write and edit a file, list a directory, glob and grep, all
confined to the run's workspace.

Every path goes through :meth:`Workspace.resolve`, so nothing outside the workspace is read,
listed or written; paths shown to the model are relative to the workspace. Blocking file work
runs in a worker thread so a slow disk never stalls the event loop (or the kernel's timeouts).
"""

from __future__ import annotations

import asyncio
import difflib
import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import regex

from harness.core._messages import UIPayload
from harness.errors import ToolError
from harness.tools._base import ToolContext, ToolOutput
from harness.tools._builtin_base import BuiltinTool, object_schema
from harness.tools._grep_worker import run_killable
from harness.tools._workspace import Workspace

__all__ = [
    "GREP_TIME_LIMIT_S",
    "MAX_FILE_BYTES",
    "MAX_MATCHES",
    "MAX_READ_CHARS",
    "MAX_WORKSPACE_FILES",
    "MAX_WRITE_BYTES",
    "EditFileTool",
    "GlobTool",
    "GrepTool",
    "ListDirTool",
    "ReadFileTool",
    "WriteFileTool",
]

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_READ_CHARS = 16_000
MAX_MATCHES = 200
#: Largest file write_file / edit_file may write (bytes; HARNESS_MAX_WRITE_BYTES overrides).
MAX_WRITE_BYTES = 10 * 1024 * 1024
#: Files a workspace may hold before write_file refuses new ones (HARNESS_MAX_WORKSPACE_FILES).
MAX_WORKSPACE_FILES = 10_000
#: Wall-clock budget of one grep call; past it the worker process searching is killed.
GREP_TIME_LIMIT_S = 5.0
_MAX_LINE = 300
_MAX_DIFF_CHARS = 200_000
_PATH = {"type": "string", "description": "A path relative to the workspace root."}


def _read_text(path: Path, rel: str, *, strict: bool) -> str:
    """A regular file's text, or ToolError: missing, not a file, too big, binary, (strict) not
    UTF-8."""
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel} is a directory; use list_dir")
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"{rel} is not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise ToolError(f"{rel} is too large ({st.st_size} bytes; limit {MAX_FILE_BYTES})")
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"file not found: {rel}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None
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


def _write_text(path: Path, rel: str, content: str) -> None:
    if path.is_dir():
        raise ToolError(f"{rel} is a directory")
    size = len(content.encode("utf-8"))
    limit = _limit("HARNESS_MAX_WRITE_BYTES", MAX_WRITE_BYTES)
    if size > limit:
        raise ToolError(
            f"refused: {size:,} bytes for {rel} exceed the {limit:,}-byte write limit "
            "(HARNESS_MAX_WRITE_BYTES)"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", newline="")
    except OSError as exc:
        raise ToolError(f"cannot write {rel}: {exc.strerror or exc}") from None


def _check_room(root: Path) -> None:
    """Refuse a new file when the workspace already holds the maximum number of files."""
    limit = _limit("HARNESS_MAX_WORKSPACE_FILES", MAX_WORKSPACE_FILES)
    n = 0
    for _, _, filenames in os.walk(root):
        n += len(filenames)
        if n >= limit:
            raise ToolError(
                f"refused: the workspace already holds {limit:,} files "
                "(HARNESS_MAX_WORKSPACE_FILES)"
            )


def _diff(rel: str, before: str | None, after: str, *, created: bool) -> UIPayload:
    """A ``diff`` payload; its ``diff`` is None when the old text is unknown or too big."""
    text: str | None = None
    if before is not None and len(before) + len(after) <= _MAX_DIFF_CHARS:
        old_name = "/dev/null" if created else f"a/{rel}"
        lines = difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), old_name, f"b/{rel}"
        )
        text = "".join(lines)
    return UIPayload("diff", {"path": rel, "created": created, "diff": text})


def _inside(ws: Workspace, path: Path) -> Path | None:
    """The real path of ``path`` if it (and any symlink in it) stays in the workspace."""
    try:
        return ws.resolve(str(path))
    except ToolError:
        return None


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
        path = ctx.workspace.resolve(self._str(self._check(args), "path"))
        rel = ctx.workspace.relative(path)
        text = await asyncio.to_thread(_read_text, path, rel, strict=False)
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
        path = ctx.workspace.resolve(self._str(args, "path"))
        content = self._str(args, "content")
        rel = ctx.workspace.relative(path)

        def work() -> tuple[bool, str | None]:
            created = not path.exists()
            if created:
                _check_room(ctx.workspace.root)
            before: str | None = ""
            if not created:
                try:
                    before = _read_text(path, rel, strict=True)
                except ToolError:
                    before = None  # exists but is not diffable text (a directory: refused below)
            _write_text(path, rel, content)
            return created, before

        created, before = await asyncio.to_thread(work)
        ui = _diff(rel, before, content, created=created)
        return ToolOutput(f"wrote {len(content.encode('utf-8'))} bytes to {rel}", ui=ui)


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
        path = ctx.workspace.resolve(self._str(args, "path"))
        old, new = self._str(args, "old"), self._str(args, "new")
        replace_all = args.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise ToolError(f"argument 'replace_all' must be a boolean, got {replace_all!r}")
        if old == "":
            raise ToolError("argument 'old' must not be empty")
        if old == new:
            raise ToolError("'old' and 'new' are identical; nothing to change")
        rel = ctx.workspace.relative(path)

        def work() -> tuple[int, str, str]:
            text = _read_text(path, rel, strict=True)
            count = text.count(old)
            if count == 0:
                raise ToolError(f"'old' string not found in {rel}")
            if count > 1 and not replace_all:
                raise ToolError(
                    f"'old' string occurs {count} times in {rel}; "
                    "pass replace_all=true or give more context"
                )
            after = text.replace(old, new)
            _write_text(path, rel, after)
            return count, text, after

        count, before, after = await asyncio.to_thread(work)
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
        path = ws.resolve(self._str(self._check(args), "path", "."))
        rel = ws.relative(path)
        if not path.is_dir():
            raise ToolError(f"{rel} is not a directory" if path.exists() else f"not found: {rel}")

        def work() -> list[str]:
            entries = []
            try:
                with os.scandir(path) as it:
                    for entry in it:
                        if entry.is_symlink():  # a link counts as a dir only if it stays inside
                            target = _inside(ws, Path(entry.path))
                            is_dir = target is not None and target.is_dir()
                        else:
                            is_dir = entry.is_dir(follow_symlinks=False)
                        entries.append(entry.name + ("/" if is_dir else ""))
            except OSError as exc:
                raise ToolError(f"cannot list {rel}: {exc.strerror or exc}") from None
            return sorted(entries)

        entries = await asyncio.to_thread(work)
        return "\n".join(entries) if entries else f"(empty directory: {rel})"


class GlobTool(BuiltinTool):
    name = "glob"
    description = (
        "Find workspace paths matching a glob pattern relative to the root (e.g. '**/*.py'); "
        f"directories end with '/'. At most {MAX_MATCHES} results."
    )
    parameters = object_schema(
        {"pattern": {"type": "string", "description": "e.g. src/**/*.py"}}, "pattern"
    )
    parallel_safe = True
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        pattern = self._str(self._check(args), "pattern")
        if not pattern or "\x00" in pattern:
            raise ToolError("pattern must be a non-empty string without NUL bytes")
        if pattern.startswith(("/", "\\")) or Path(pattern).is_absolute():
            raise ToolError("pattern refused: it must be relative to the workspace root")
        if ".." in re.split(r"[/\\]", pattern):
            raise ToolError("pattern refused: '..' components would leave the workspace")
        ws = ctx.workspace
        root = ws.resolve(".")

        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if any("**" in p and p != "**" for p in parts):
            raise ToolError(f"invalid glob pattern {pattern!r}: '**' must be a whole component")

        def work() -> list[str]:
            found = set()
            for match in _glob(ws, root, parts):
                real = _inside(ws, match)
                if real is not None and match != root:
                    found.add(match.relative_to(root).as_posix() + "/" * real.is_dir())
            return sorted(found)

        found = await asyncio.to_thread(work)
        if not found:
            return f"no paths match {pattern!r}"
        if len(found) > MAX_MATCHES:
            extra = len(found) - MAX_MATCHES
            found[MAX_MATCHES:] = [f"[capped at {MAX_MATCHES} results; {extra} more not shown]"]
        return "\n".join(found)


def _glob(ws: Workspace, base: Path, parts: list[str]) -> Iterator[Path]:
    """Paths under ``base`` matching ``parts``. Unlike ``Path.glob`` it never lists a directory
    outside the workspace, and ``**`` does not descend into symlinked directories."""
    if not parts:
        yield base
        return
    part, rest = parts[0], parts[1:]
    if _inside(ws, base) is None:  # never look into a directory outside the workspace
        return
    if part == "**":
        yield from _glob(ws, base, rest)
        children = [Path(e.path) for e in _scan(base) if e.is_dir(follow_symlinks=False)]
    elif not any(c in part for c in "*?["):
        children = [base / part] if os.path.lexists(base / part) else []
    else:
        children = [Path(e.path) for e in _scan(base) if fnmatch.fnmatchcase(e.name, part)]
    for child in children:
        if not rest or child.is_dir():
            yield from _glob(ws, child, parts if part == "**" else rest)


def _scan(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


class GrepTool(BuiltinTool):
    name = "grep"
    description = (
        "Search text files under a workspace path (default: the root) for a Python regular "
        f"expression; prints 'path:line:text', at most {MAX_MATCHES} matches."
    )
    parameters = object_schema(
        {
            "pattern": {"type": "string", "description": "A Python `re` regular expression."},
            "path": {**_PATH, "default": "."},
        },
        "pattern",
    )
    parallel_safe = True
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        pattern = self._str(args, "pattern")
        try:
            compiled = regex.compile(pattern)
        except regex.error as exc:
            raise ToolError(f"invalid regex {pattern!r}: {exc}") from None
        ws = ctx.workspace
        top = ws.resolve(self._str(args, "path", "."))
        if not top.exists():
            raise ToolError(f"not found: {ws.relative(top)}")
        del compiled  # checked here; the worker process compiles its own
        try:
            searched, out = await run_killable(
                _grep_in_worker, ws, top, pattern, timeout_s=GREP_TIME_LIMIT_S
            )
        except TimeoutError:
            raise ToolError(
                f"pattern {pattern!r} took over {GREP_TIME_LIMIT_S:g} s (catastrophic "
                "backtracking?); use a simpler pattern"
            ) from None
        where = ws.relative(top)
        truncated = len(out) > MAX_MATCHES
        del out[MAX_MATCHES:]
        rows = [{"path": m[1], "line": int(m[2]), "text": m[3]}
                for m in map(_MATCH_LINE.match, out) if m]  # fmt: skip
        ui = UIPayload("matches", {"pattern": pattern, "path": where, "searched": searched,
                                   "truncated": truncated, "matches": rows})  # fmt: skip
        if not out:
            return ToolOutput(
                f"no matches for {pattern!r} in {where} (searched {searched} files)", ui
            )
        if truncated:
            out.append(f"[stopped after {MAX_MATCHES} matches; narrow the pattern or path]")
        return ToolOutput("\n".join(out), ui)


_MATCH_LINE = re.compile(r"^(.*?):(\d+):(.*)$", re.DOTALL)  # grep's path:line:text


def _grep_in_worker(ws: Workspace, top: Path, pattern: str) -> tuple[int, list[str]]:
    """Runs in grep's worker process (see :mod:`harness.tools._grep_worker`)."""
    out: list[str] = []
    return _grep(ws, top, regex.compile(pattern), out), out


def _grep(ws: Workspace, top: Path, compiled: regex.Pattern[str], out: list[str]) -> int:
    """Append matches to ``out`` (one past the cap means "more"); return the files searched."""
    root = ws.resolve(".")
    files = [top]
    if top.is_dir():
        files = []
        for dirpath, dirnames, filenames in os.walk(top):  # never descends into symlinked dirs
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            files.extend(Path(dirpath, f) for f in filenames)
        files.sort(key=lambda p: p.as_posix())
    searched = 0
    for file in files:
        real = _inside(ws, file)  # a symlinked file must stay inside the workspace
        try:
            if real is None or not stat.S_ISREG((st := real.stat()).st_mode):
                continue
            data = real.read_bytes() if st.st_size <= MAX_FILE_BYTES else b"\x00"
        except OSError:
            continue
        if b"\x00" in data[:8192]:  # binary (or too big)
            continue
        searched += 1
        rel = file.relative_to(root).as_posix()
        for lineno, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
            line = line.removesuffix("\r")
            if compiled.search(line):
                shown = line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + "…"
                out.append(f"{rel}:{lineno}:{shown}")
                if len(out) > MAX_MATCHES:
                    return searched
    return searched
