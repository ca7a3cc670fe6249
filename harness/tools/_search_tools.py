"""The builtin search tools, glob and grep, confined to the run's workspace.

Directories are listed through descriptors opened beneath the workspace (see
:mod:`harness.tools._beneath`): a directory swapped for a symlink to the host while a search
runs is never listed, and a file swapped for one is never read. ``**`` and grep's walk do not
descend into symlinked directories; an explicit component may go through a link that stays
inside.

glob visits each (directory, place in the pattern) once, so ``**/**/**/**/**/**/**/**/x`` over 24
nested folders costs what ``**/x`` does instead of millions of listings, and it stops with an
error result past 100,000 directories listed or :data:`GLOB_MAX_NAMES` names looked at.

Every limit whose result the model sees counts work (directories, names, bytes, matches), never
time, so a replay gives the same results on an idle machine and on one at full load. grep's
bound, :data:`GREP_TIME_LIMIT_S` seconds of the search's CPU time (a ``SIGPROF`` timer in the
worker), is only a safety net against a pattern that backtracks catastrophically: its expiry
raises :class:`~harness.errors.ToolSafetyNet`, which ends the run as ``error_during_execution``
(an infrastructure error of the cell), never a tool result. CPU time, not wall-clock time: a
plain search queued behind other cells' searches on a machine at load 20 spends milliseconds
of CPU however long it waits, so it never meets the net (with a wall-clock net of 30 s it did,
on Ray at load 21). A wall-clock bound, ten minutes, remains for a worker that hangs without
computing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import regex

from harness.core._messages import UIPayload
from harness.errors import CpuLimitReached, ToolError, ToolSafetyNet
from harness.tools._base import ToolContext, ToolOutput
from harness.tools._beneath import Beneath
from harness.tools._builtin_base import BuiltinTool, object_schema
from harness.tools._file_tools import (
    _PATH,
    MAX_FILE_BYTES,
    MAX_MATCHES,
    read_spot,
    shown_name,
)
from harness.tools._grep_worker import run_killable
from harness.tools._pattern_size import grep_pattern_problem
from harness.tools._workspace import Workspace

__all__ = [
    "GLOB_MAX_NAMES",
    "GLOB_PATTERN_CHARS",
    "GREP_MAX_CHARS",
    "GREP_TIME_LIMIT_S",
    "GlobTool",
    "GrepTool",
]

#: grep's safety net, in seconds of the search's CPU time: past it the search stops and the run
#: ends as ``error_during_execution`` (:class:`~harness.errors.ToolSafetyNet`). Generous: a
#: search the work caps allow spends far less, and load does not make it spend more.
GREP_TIME_LIMIT_S = 30.0
#: Wall-clock last resort (queueing included): a worker that neither finishes nor computes.
_WALL_LIMIT_S = 600.0
#: Seconds grep's worker process may take to start (beyond the kernel's tool timeout, 60 s by
#: default, which then ends the call first: in the bench, as an infrastructure error).
_START_LIMIT_S = 120.0
#: Characters of file text one grep call reads; past them it opens no further file (and says so).
GREP_MAX_CHARS = 64_000_000
#: Directory entries one glob looks at; past it the walk stops with an error result.
GLOB_MAX_NAMES = 1_000_000

_MAX_LINE = 300
_MAX_DIRS = 100_000  # directories one search may list (a loop of links swapped in meanwhile)


#: The longest glob pattern (a path's limit, PATH_MAX): fnmatch reads each ``[`` to the next
#: ``]``, so 100,000 of them held a thread 200 s (adversary round 22, part A); 4,096, 0.9 s.
GLOB_PATTERN_CHARS = 4096


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
        if len(pattern) > GLOB_PATTERN_CHARS:  # fnmatch reads each '[' to the next ']': quadratic
            raise ToolError(f"pattern of {len(pattern):,} characters refused (a path has at "
                            f"most {GLOB_PATTERN_CHARS:,})")  # fmt: skip
        if pattern.startswith(("/", "\\")) or Path(pattern).is_absolute():
            raise ToolError("pattern refused: it must be relative to the workspace root")
        if ".." in re.split(r"[/\\]", pattern):
            raise ToolError("pattern refused: '..' components would leave the workspace")
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if any("**" in p and p != "**" for p in parts):
            raise ToolError(f"invalid glob pattern {pattern!r}: '**' must be a whole component")
        ws = ctx.workspace

        def work() -> list[str]:
            beneath = ws.beneath(pattern)
            found: dict[str, None] = {}
            for lex, is_dir in _glob(beneath, (), parts, _Walk(pattern)):
                if lex:
                    found["/".join(shown_name(p) for p in lex) + "/" * is_dir] = None
            return sorted(found)

        found = await asyncio.to_thread(work)
        if not found:
            return f"no paths match {pattern!r}"
        if len(found) > MAX_MATCHES:
            extra = len(found) - MAX_MATCHES
            found[MAX_MATCHES:] = [f"[capped at {MAX_MATCHES} results; {extra} more not shown]"]
        return "\n".join(found)


class _Walk:
    """One glob's work: the (directory, pattern rest) pairs already visited, the directories
    listed and the names looked at; ToolError naming the cap past either bound (work, not time:
    the same tree gives the same result under any load)."""

    __slots__ = ("listed", "names", "pattern", "seen")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.seen: set[tuple[tuple[str, ...], int]] = set()
        self.listed = 0
        self.names = 0

    def first(self, lex: tuple[str, ...], rest: list[str]) -> bool:
        key = (lex, len(rest))
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def tick(self) -> None:
        self.listed += 1
        if self.listed > _MAX_DIRS:
            raise ToolError(
                f"glob {self.pattern!r} stopped: it looked into more than {_MAX_DIRS:,} "
                "directories; use a narrower pattern (fewer '**')"
            )

    def count(self, names: int) -> None:
        self.names += names
        if self.names > GLOB_MAX_NAMES:
            raise ToolError(
                f"glob {self.pattern!r} stopped: it looked at more than {GLOB_MAX_NAMES:,} "
                "names; use a narrower pattern (fewer '**')"
            )


def _glob(
    b: Beneath, lex: tuple[str, ...], parts: list[str], walk: _Walk
) -> Iterator[tuple[tuple[str, ...], bool]]:
    """(path, is_dir) under the directory ``lex`` matching ``parts``. A directory is listed only
    through a descriptor opened beneath the workspace; ``**`` never enters a symlinked one. Each
    (directory, rest of the pattern) is visited once: a second visit would find the same."""
    if not walk.first(lex, parts):
        return
    if not parts:
        yield lex, True
        return
    part, rest = parts[0], parts[1:]
    walk.tick()
    try:
        fd, _ = b.directory(lex)
    except (OSError, ToolError):
        return  # gone, not a directory, or a link out of the workspace: nothing to list
    try:
        if part == "**" or any(c in part for c in "*?["):
            with os.scandir(fd) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in it]
        else:
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError:
                return
            entries = [(part, stat.S_ISDIR(st.st_mode), stat.S_ISLNK(st.st_mode))]
    except OSError:
        return
    finally:
        os.close(fd)
    walk.count(len(entries))
    if part == "**":
        yield from _glob(b, lex, rest, walk)
        for name, is_dir, _ in entries:
            if is_dir:
                yield from _glob(b, (*lex, name), parts, walk)
        return
    for name, is_dir, is_link in entries:
        if part != name and not fnmatch.fnmatchcase(name, part):
            continue
        child = (*lex, name)
        if is_link:
            kind = _link_kind(b, child)
            if kind is None:
                continue  # leads out of the workspace: not shown at all
            is_dir = kind
        if not rest:
            yield child, is_dir
        elif is_dir:
            yield from _glob(b, child, rest, walk)


def _link_kind(b: Beneath, parts: tuple[str, ...]) -> bool | None:
    """For a symlink: True (a directory inside), False (anything else inside) or None (out)."""
    try:
        spot = b.spot(parts)
    except (OSError, ToolError):
        return None
    try:
        return spot.name is None or (spot.lstat is not None and stat.S_ISDIR(spot.lstat.st_mode))
    finally:
        spot.close()


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
        problem = grep_pattern_problem(pattern)  # before regex builds it: gigabytes, else
        if problem is not None:
            raise ToolError(problem)
        try:
            regex.compile(pattern)  # checked here; the worker process compiles its own
        except regex.error as exc:
            raise ToolError(f"invalid regex {pattern!r}: {exc}") from None
        ws = ctx.workspace
        path = self._str(args, "path", ".")
        ws.parts(path)
        try:  # the worker is started (a fresh interpreter: seconds on a loaded machine) first,
            # so that the safety net times the search alone
            await run_killable(os.getpid, timeout_s=_START_LIMIT_S)
        except TimeoutError:
            raise ToolSafetyNet(
                f"grep: its worker process did not start within {_START_LIMIT_S:g} s; a "
                "wall-clock safety net, so the cell is an infrastructure error"
            ) from None
        try:
            where, searched, out, capped = await run_killable(
                _grep_in_worker, ws, path, pattern, GREP_MAX_CHARS, GREP_TIME_LIMIT_S,
                timeout_s=_WALL_LIMIT_S,
            )  # fmt: skip
        except CpuLimitReached:
            raise ToolSafetyNet(
                f"grep: pattern {pattern!r} still searching after {GREP_TIME_LIMIT_S:g} s of "
                "CPU time (catastrophic backtracking); a safety net, so the cell is an "
                "infrastructure error, not a result for the model"
            ) from None
        except TimeoutError:
            raise ToolSafetyNet(
                f"grep: no answer from its worker process within {_WALL_LIMIT_S:g} s (wall "
                "clock); a safety net, so the cell is an infrastructure error, not a result "
                "for the model"
            ) from None
        truncated = len(out) > MAX_MATCHES
        del out[MAX_MATCHES:]
        rows = [{"path": m[1], "line": int(m[2]), "text": m[3]}
                for m in map(_MATCH_LINE.match, out) if m]  # fmt: skip
        ui = UIPayload("matches", {"pattern": pattern, "path": where, "searched": searched,
                                   "truncated": truncated, "matches": rows})  # fmt: skip
        cap = f"stopped after reading {GREP_MAX_CHARS:,} characters of {searched} files"
        cap += "; narrow the path"
        if not out:
            tail = f"; {cap}" if capped else ""
            return ToolOutput(
                f"no matches for {pattern!r} in {where} (searched {searched} files{tail})", ui
            )
        if truncated:
            out.append(f"[stopped after {MAX_MATCHES} matches; narrow the pattern or path]")
        elif capped:
            out.append(f"[{cap}]")
        return ToolOutput("\n".join(out), ui)


_MATCH_LINE = re.compile(r"^(.*?):(\d+):(.*)$", re.DOTALL)  # grep's path:line:text


def _cpu_spent(signum: int, frame: object) -> None:
    raise CpuLimitReached


@contextlib.contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`CpuLimitReached` in this process once the block has used ``seconds`` of
    CPU time (``ITIMER_PROF``: user and system time; the regex engines check for signals while
    they backtrack). Only in a main thread where the timer exists (the worker process's)."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    previous = signal.signal(signal.SIGPROF, _cpu_spent)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _grep_in_worker(
    ws: Workspace, path: str, pattern: str, max_chars: int, cpu_limit_s: float
) -> tuple[str, int, list[str], bool]:
    """Runs in grep's worker process (see :mod:`harness.tools._grep_worker`), stopped by
    :class:`CpuLimitReached` after ``cpu_limit_s`` of CPU time: the shown top path, the files
    searched, the matching lines (one past the cap means "more") and whether the search
    stopped at ``max_chars`` of text read (the file that crossed it is searched)."""
    with _cpu_limit(cpu_limit_s):
        return _grep(ws, path, pattern, max_chars)


def _grep(
    ws: Workspace, path: str, pattern: str, max_chars: int
) -> tuple[str, int, list[str], bool]:
    b = ws.beneath(path)
    parts = ws.parts(path)
    try:
        spot = b.spot(parts)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"not found: {shown_name('/'.join(parts) or '.')}") from None
    try:
        if spot.name is not None and spot.lstat is None:
            raise ToolError(f"not found: {shown_name(spot.rel)}")
        top = spot.parts
        is_dir = spot.name is None or stat.S_ISDIR(spot.lstat.st_mode)  # type: ignore[union-attr]
    finally:
        spot.close()
    files = sorted(_files(b, top), key="/".join) if is_dir else [top]
    out: list[str] = []
    compiled = regex.compile(pattern)
    searched = read = 0
    for file in files:
        if read >= max_chars:
            return shown_name("/".join(top) or "."), searched, out, True
        text = _text(b, file)
        if text is None:
            continue
        searched += 1
        read += len(text)
        rel = "/".join(shown_name(p) for p in file)
        for lineno, line in enumerate(text.split("\n"), 1):
            line = line.removesuffix("\r")
            if compiled.search(line):
                shown = line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + "…"
                out.append(f"{rel}:{lineno}:{shown}")
                if len(out) > MAX_MATCHES:
                    return shown_name("/".join(top) or "."), searched, out, False
    return shown_name("/".join(top) or "."), searched, out, False


def _files(b: Beneath, top: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Every non-directory name under ``top`` (symlinked directories and .git are not
    entered); each directory is listed through a descriptor opened beneath the workspace."""
    todo = [top]
    listed = 0
    while todo and listed < _MAX_DIRS:
        lex = todo.pop()
        listed += 1
        try:
            fd, _ = b.directory(lex)
        except (OSError, ToolError):
            continue
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git":
                            todo.append((*lex, entry.name))
                    else:
                        yield (*lex, entry.name)
        except OSError:
            continue
        finally:
            os.close(fd)


def _text(b: Beneath, parts: tuple[str, ...]) -> str | None:
    """A searchable file's text (a regular file inside, under the size cap, not binary)."""
    try:
        spot = b.spot(parts)
    except (OSError, ToolError):
        return None
    try:
        lst = spot.lstat
        if lst is None or not stat.S_ISREG(lst.st_mode) or lst.st_size > MAX_FILE_BYTES:
            return None
        return read_spot(b, spot, strict=False)
    except (OSError, ToolError):
        return None
    finally:
        spot.close()
