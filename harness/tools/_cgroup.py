"""A memory cgroup per sandboxed command: the memory cap of ``Limits.memory_mb`` for the whole
process tree of one ``shell`` command or ``command`` grader (:mod:`harness.tools._sandbox`).

Where: a child folder of the harness process's own cgroup, ``harness-sandbox-<pid>-<n>``, in the
cgroup v2 hierarchy when its memory controller is delegated there (``memory`` listed in the
cgroup's ``cgroup.subtree_control``), else in the cgroup v1 memory
hierarchy when it is mounted and writable (as root). The command's first process is moved in
before it runs anything (the sandbox holds it at a gate), so every process it starts is counted,
whatever it does (a new session, a double fork, a daemon).

The cap: v2 ``memory.max`` (with ``memory.swap.max`` 0 and ``memory.oom.group`` 1: an OOM kills
the whole cgroup); v1 ``memory.limit_in_bytes`` (with ``memory.memsw.limit_in_bytes`` when swap
is accounted). The kernel counts the processes' memory and the files they write in the sandbox's
``/tmp`` (a tmpfs: memory), and its OOM killer kills inside the cgroup past the cap; the
watchdog (:mod:`harness.tools._watchdog`) sees the kill (``oom_kill`` in ``memory.events`` or
``memory.oom_control``) and kills the rest of the command.

After the command every process left in the cgroup is killed and its folder removed (retrying
while the kernel tears the sandbox down). Folders left by a harness process that died (its pid
is gone) are removed when another one first looks for its hierarchy.

``HARNESS_SANDBOX_CGROUP=0`` turns cgroups off: the watchdog's own count over ``/proc`` is the
memory cap then, as where no cgroup is writable (:func:`cgroup_problem` says why).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["PREFIX", "CommandCgroup", "cgroup_problem", "open_cgroup"]

#: Name of each command's cgroup folder: ``harness-sandbox-<harness pid>-<n>``.
PREFIX = "harness-sandbox-"
_NAMES = itertools.count()
_STALE = re.compile(re.escape(PREFIX) + r"(\d+)-\d+")
_OFF = ("0", "off", "no", "false")


@dataclass(frozen=True, slots=True)
class _Hierarchy:
    base: Path
    version: Literal[1, 2]


def cgroups_wanted() -> bool:
    """False when ``HARNESS_SANDBOX_CGROUP`` turns cgroups off (read at each command)."""
    return os.environ.get("HARNESS_SANDBOX_CGROUP", "1").strip().lower() not in _OFF


def cgroup_problem() -> str | None:
    """Why a command's memory cannot be capped with a cgroup here, or None when it can."""
    if not cgroups_wanted():
        return "HARNESS_SANDBOX_CGROUP turns cgroups off"
    found = _hierarchy()
    return found if isinstance(found, str) else None


def open_cgroup(cap_bytes: int) -> CommandCgroup | None:
    """A new cgroup capped at ``cap_bytes`` for one command, or None (no usable hierarchy, or
    cgroups turned off): the watchdog counts the memory itself then."""
    if not cgroups_wanted():
        return None
    found = _hierarchy()
    if isinstance(found, str):
        return None
    return _make(found, cap_bytes)


def _make(hierarchy: _Hierarchy, cap_bytes: int) -> CommandCgroup | None:
    path = hierarchy.base / f"{PREFIX}{os.getpid()}-{next(_NAMES)}"
    try:
        path.mkdir()
    except OSError:
        return None
    group = CommandCgroup(path, hierarchy.version)
    try:
        group.cap(cap_bytes)
    except OSError:
        group.remove(wait_s=1.0)
        return None
    return group


class CommandCgroup:
    """One command's cgroup: its folder and the hierarchy's version."""

    def __init__(self, path: Path, version: Literal[1, 2]) -> None:
        self.path = path
        self.version = version

    @property
    def mechanism(self) -> str:
        return "cgroup v2" if self.version == 2 else "cgroup v1 memory controller"

    def cap(self, cap_bytes: int) -> None:
        if self.version == 2:
            self._write("memory.max", cap_bytes)
            self._write("memory.swap.max", 0, optional=True)
            self._write("memory.oom.group", 1, optional=True)
        else:
            self._write("memory.limit_in_bytes", cap_bytes)
            self._write("memory.memsw.limit_in_bytes", cap_bytes, optional=True)

    def _write(self, name: str, value: int, *, optional: bool = False) -> None:
        target = self.path / name
        if optional and not target.exists():
            return
        try:
            target.write_text(f"{value}\n")
        except OSError:
            if not optional:
                raise

    def add(self, pid: int) -> bool:
        """Move ``pid`` in; False when the kernel refuses."""
        try:
            (self.path / "cgroup.procs").write_text(f"{pid}\n")
        except OSError:
            return False
        return True

    def pids(self) -> list[int]:
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def oom_kills(self) -> int:
        """Processes the kernel's OOM killer killed in the cgroup so far."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = (self.path / name).read_text().splitlines()
        except OSError:
            return 0
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def peak(self) -> int | None:
        """The most memory the cgroup held at once, in bytes (None where not kept)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill(self) -> None:
        """SIGKILL every process in the cgroup."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.path / "cgroup.kill").write_text("1\n")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, wait_s: float = 10.0) -> bool:
        """Kill what is left and remove the folder, retrying for ``wait_s`` while the processes
        die. True once it is gone."""
        deadline = time.monotonic() + wait_s
        pause = 0.001
        while True:
            self.kill()
            try:
                self.path.rmdir()
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(pause)
                pause = min(2 * pause, 0.02)
            else:
                return True


@functools.cache
def _hierarchy() -> _Hierarchy | str:
    """Where this process can make memory cgroups (v2 first), or why it cannot."""
    try:
        mounts = _mounts()
        own = _own_cgroups()
    except OSError as exc:
        return f"cannot read this process's cgroups: {exc}"
    problems: list[str] = []
    for version, key in ((2, ""), (1, "memory")):
        if key not in own:
            continue
        for point, root, fstype, options in mounts:
            if version == 2 and fstype != "cgroup2":
                continue
            if version == 1 and (fstype != "cgroup" or "memory" not in options.split(",")):
                continue
            base = _inside(point, root, own[key])
            if base is None:
                continue
            problem = _usable(base, version)  # type: ignore[arg-type]
            if problem is None:
                found = _Hierarchy(base, version)  # type: ignore[arg-type]
                _sweep(found)
                return found
            problems.append(problem)
    return "; ".join(problems) or "no cgroup memory controller is mounted"


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, root inside the file system, type, super options) of each mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 3:
            found.append((_unescape(fields[4]), _unescape(fields[3]), rest[0], rest[2]))
    return found


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), text)


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            own[""] = path
        for name in controllers.split(","):
            if name:
                own[name] = path
    return own


def _inside(point: str, root: str, path: str) -> Path | None:
    """The folder of cgroup ``path`` under a mount of the hierarchy at ``point`` (whose own root
    is ``root``), or None when that mount does not show it."""
    relative = os.path.relpath(path, root)
    if relative.startswith(".."):
        return None
    base = Path(point) / relative if relative != "." else Path(point)
    return base if base.is_dir() else None


def _usable(base: Path, version: Literal[1, 2]) -> str | None:
    if version == 2:
        try:
            enabled = (base / "cgroup.subtree_control").read_text().split()
        except OSError as exc:
            return f"cgroup v2 at {base}: {exc}"
        if "memory" not in enabled:
            return f"cgroup v2 at {base}: the memory controller is not delegated here"
    probe = _make(_Hierarchy(base, version), 64 * 1024 * 1024)
    if probe is None:
        return f"cgroup v{version} at {base}: cannot make a capped child cgroup"
    probe.remove(wait_s=1.0)
    return None


def _sweep(hierarchy: _Hierarchy) -> None:
    """Remove the cgroups of harness processes that died without removing theirs."""
    with contextlib.suppress(OSError):
        for child in hierarchy.base.iterdir():
            match = _STALE.fullmatch(child.name)
            if match is not None and not _alive(int(match[1])):
                CommandCgroup(child, hierarchy.version).remove(wait_s=1.0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
