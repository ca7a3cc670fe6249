"""Run a shell command in a bubblewrap sandbox with resource limits (the ``shell`` tool and the
``command`` grader use it).

The sandbox (``bwrap``):

- the workspace is bound read-write at ``/workspace``, the working folder;
- the system (``/usr``, the ``/bin``, ``/lib*`` and ``/sbin`` links or folders, a few loader files
  under ``/etc``) and the running Python (its prefixes, so ``python -m pytest`` works) are bound
  read-only; nothing else of the host is visible (``/tmp`` is an empty tmpfs, no ``/home``, no
  ``/root``);
- no network: new network, PID, IPC and UTS namespaces (``--unshare-all`` when not run as root);
- a clean environment: ``PATH``, ``HOME=/workspace``, ``LANG``, ``TMPDIR``, ``TERM``,
  ``PYTHONDONTWRITEBYTECODE`` and ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` (the harness's own pytest
  plugins stay out of task tests) and nothing else, so no API key reaches the command;
- limits (:class:`Limits`, set with ``prlimit`` on the sandbox): CPU seconds, address space,
  processes, size of a written file; the output kept is capped too (head and tail, the middle is
  dropped with a note);
- the command's whole process group is killed at the timeout (or when the caller is cancelled),
  and with it the sandbox's PID namespace.

When the harness runs as root, the sandbox is set up without a user namespace and the command
runs as an unprivileged uid of its own (:data:`SANDBOX_UID_BASE` and up, one per command, so
concurrent commands never share a process limit), with no capabilities and ``no_new_privs``
(``setpriv``), so the process limit applies (the kernel never applies it to root). The
workspace is lent to that uid (``chown``) for the command and given back afterwards (the old
owners; new files go to the workspace folder's owner), so a caller's folder keeps its
ownership. Otherwise bwrap makes an unprivileged user namespace, and the process limit counts
every process of the user, so it is set to the number running now plus ``Limits.processes``.

When ``bwrap`` (or ``prlimit``, or ``setpriv`` as root) is missing or cannot make a sandbox here,
:func:`sandbox_problem` says why and :func:`run_command` raises :class:`SandboxUnavailable`; it
never falls back to running unsandboxed. ``sandbox="none"`` runs the command directly (same
clean environment and limits, no isolation): for trusted use only; it is unsafe.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import SandboxUnavailable

__all__ = [
    "MOUNT_POINT",
    "SANDBOX_UID_BASE",
    "CommandRun",
    "Limits",
    "SandboxKind",
    "SandboxUnavailable",
    "run_command",
    "sandbox_problem",
]

#: Where the workspace appears inside the sandbox (a fixed path, so outputs do not depend on
#: the host's temporary folder names and recorded cassettes replay).
MOUNT_POINT = "/workspace"
SandboxKind = Literal["bwrap", "none"]
#: As root, each command runs as a uid of its own from here up (no passwd entry), so one
#: command's processes never count against another's process limit.
SANDBOX_UID_BASE = 200_000
_UIDS = itertools.count()
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
        "/etc/localtime")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one sandboxed command."""

    #: CPU seconds (the command is killed with SIGXCPU/SIGKILL beyond them).
    cpu_s: int = 60
    #: Address space in MiB (allocations beyond it fail).
    memory_mb: int = 1024
    #: Processes (and threads) at once.
    processes: int = 128
    #: Output kept, in bytes (stdout and stderr together; the middle of a longer output is cut).
    output_bytes: int = 32 * 1024
    #: Largest file the command may write, in MiB.
    file_mb: int = 64


@dataclass(frozen=True, slots=True)
class CommandRun:
    """What a command did."""

    exit_code: int | None
    output: str
    timed_out: bool
    #: Output bytes dropped (beyond ``Limits.output_bytes``).
    dropped: int
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def describe(self) -> str:
        """``exit code 0``, ``killed by SIGXCPU`` or ``timed out after 5s``."""
        if self.timed_out:
            return f"timed out after {self.duration_s:.0f}s; the command was killed"
        code = self.exit_code
        if code is not None and code < 0:
            return f"killed by {_signal_name(-code)}"
        if code is not None and code > 128 and code - 128 in _SIGNALS:  # as the shell reports it
            return f"killed by {_signal_name(code - 128)} (exit code {code})"
        return f"exit code {code}"


_SIGNALS = {s.value for s in signal.Signals}


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    hint = {"SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)"}.get(name, "")
    return name + hint


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@functools.cache
def sandbox_problem(bwrap: str = "bwrap") -> str | None:
    """Why the bwrap sandbox cannot run here (missing tools, or bwrap fails), or None when it
    can. Checked once per process and ``bwrap`` path."""
    needed = [(bwrap, "bubblewrap"), ("prlimit", "util-linux")]
    if _as_root():
        needed.append(("setpriv", "util-linux"))
    for exe, package in needed:
        if shutil.which(exe) is None:
            return (
                f"{exe} was not found on PATH; install it (e.g. apt-get install -y {package}). "
                "The shell never runs commands unsandboxed unless told to (sandbox='none', unsafe)"
            )
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    argv = _bwrap_argv(bwrap, probe, ["true"], _sandbox_uid())
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} cannot run: {exc}"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {done.returncode}"
        return f"{bwrap} is installed but cannot make a sandbox here: {detail}"
    return None


def _python_roots() -> list[str]:
    """Folders of the running Python (prefixes, resolved too), outside those bound already."""
    roots: list[str] = []
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        for q in (p, os.path.realpath(p)):
            if q and q not in roots:
                roots.append(q)
    return sorted(roots)


def _sandbox_uid() -> int:
    """A uid for one command: per process and call, so concurrent commands (other cells, other
    harness processes) do not share one process limit."""
    return SANDBOX_UID_BASE + (os.getpid() % 10_000) * 1000 + next(_UIDS) % 1000


def _bwrap_argv(bwrap: str, workspace: Path, command: list[str], uid: int = 0) -> list[str]:
    root = _as_root()
    # As root, no user namespace (the command must become a real unprivileged uid).
    unshare = (
        ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        if root
        else ["--unshare-all"]
    )
    argv = [bwrap, *unshare, "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for path in _SYSTEM_LINKS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    argv += ["--perms", "0755", "--dir", "/etc"]
    for path in _ETC:
        argv += ["--ro-bind-try", path, path]
    # /tmp before the Python's folders: a venv under /tmp (a checkout there, a nox session) is
    # bound on top of the empty tmpfs instead of being hidden by it.
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    made: set[str] = {"/", "/usr", "/etc", "/tmp", "/proc", "/dev"}
    bound: list[Path] = [Path("/usr")]
    for prefix in _python_roots():
        if any(Path(prefix).is_relative_to(b) for b in bound):
            continue  # inside a folder bound already (a venv inside its base Python)
        for parent in reversed(Path(prefix).parents):
            if str(parent) not in made:  # readable parents: bwrap's own are 0700 for others
                argv += ["--dir", str(parent)]
                made.add(str(parent))
        argv += ["--ro-bind", prefix, prefix]
        bound.append(Path(prefix))
    argv += ["--bind", str(workspace), MOUNT_POINT, "--chdir", MOUNT_POINT, "--clearenv"]
    for key, value in _env(MOUNT_POINT).items():
        argv += ["--setenv", key, value]
    if root:
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]  # fmt: skip
        command = drop + command
    return [*argv, "--", *command]


def _env(home: str) -> dict[str, str]:
    path = [os.path.join(sys.prefix, "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
    return {
        "PATH": ":".join(dict.fromkeys(path)),
        "HOME": home,
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "TERM": "dumb",
        "PYTHONDONTWRITEBYTECODE": "1",
        # pytest sees no plugins of the harness's own environment (pytest-asyncio, ...): task
        # tests run the same everywhere, and start in 0.3 s instead of 3 s here.
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def _limit_argv(limits: Limits, sandbox: SandboxKind) -> list[str]:
    processes = limits.processes
    if sandbox == "none" or not _as_root():  # the limit counts all of this user's processes
        processes += _user_processes()
    return [
        "prlimit",
        f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",  # SIGXCPU first, SIGKILL a second later
        f"--as={limits.memory_mb * 1024 * 1024}",
        f"--nproc={processes}",
        f"--fsize={limits.file_mb * 1024 * 1024}",
        "--core=0",
        "--",
    ]


def _user_processes() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(entry.path).st_uid == uid:
                    count += 1
    return count


Owners = dict[str, tuple[int, int]]


def _hand_over(workspace: Path, uid: int) -> Owners:
    """As root, give the workspace to the sandbox's user, so the command can write in it; returns
    the owners to put back afterwards (:func:`_give_back`). Links are never followed."""
    owners: Owners = {}
    for path in _tree(workspace):
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            owners[path] = (st.st_uid, st.st_gid)
            os.chown(path, uid, uid, follow_symlinks=False)
    return owners


def _give_back(workspace: Path, owners: Owners) -> None:
    """Put the owners back; files the command made go to the workspace folder's owner."""
    default = owners.get(str(workspace), (0, 0))
    for path in _tree(workspace):
        with contextlib.suppress(OSError):
            os.chown(path, *owners.get(path, default), follow_symlinks=False)


def _tree(root: Path) -> list[str]:
    paths = [str(root)]
    for folder, dirs, files in os.walk(root):
        paths.extend(os.path.join(folder, name) for name in dirs + files)
    return paths


async def run_command(
    command: str,
    workspace: Path,
    *,
    timeout_s: float,
    limits: Limits | None = None,
    sandbox: SandboxKind = "bwrap",
    bwrap: str = "bwrap",
) -> CommandRun:
    """Run ``sh -c command`` in ``workspace`` (sandboxed unless ``sandbox="none"``) and return
    its exit code and capped output. Raises :class:`SandboxUnavailable` when the sandbox cannot
    run; the process group is killed at ``timeout_s`` or when the caller is cancelled."""
    limits = limits or Limits()
    shell = ["sh", "-c", command]
    if sandbox == "none":
        argv, cwd, env = shell, str(workspace), _env(str(workspace))
    else:
        problem = await asyncio.to_thread(sandbox_problem, bwrap)
        if problem is not None:
            raise SandboxUnavailable(f"the shell sandbox is unavailable: {problem}")
        uid = _sandbox_uid()
        argv, cwd, env = _bwrap_argv(bwrap, workspace, shell, uid), None, {"PATH": os.defpath}
    owners = await asyncio.to_thread(_hand_over, workspace, uid) if _handed(sandbox) else None
    try:
        return await _run(argv, cwd, env, limits, sandbox, timeout_s)
    finally:
        if owners is not None:
            await asyncio.to_thread(_give_back, workspace, owners)


def _handed(sandbox: SandboxKind) -> bool:
    return sandbox == "bwrap" and _as_root()


async def _run(
    argv: list[str],
    cwd: str | None,
    env: dict[str, str],
    limits: Limits,
    sandbox: SandboxKind,
    timeout_s: float,
) -> CommandRun:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *_limit_argv(limits, sandbox), *argv,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, cwd=cwd, env=env, start_new_session=True,
    )  # fmt: skip
    output = _Capped(limits.output_bytes)
    timed_out = False
    try:
        assert proc.stdout is not None
        await asyncio.wait_for(_drain(proc, output), timeout=timeout_s)
    except TimeoutError:
        timed_out = True
    finally:
        _kill_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=5)
    return CommandRun(
        None if timed_out else proc.returncode,
        output.text(),
        timed_out,
        output.dropped,
        time.monotonic() - started,
    )


async def _drain(proc: asyncio.subprocess.Process, output: _Capped) -> None:
    assert proc.stdout is not None
    while chunk := await proc.stdout.read(65536):
        output.add(chunk)
    await proc.wait()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class _Capped:
    """The first quarter and the last three quarters of ``limit`` bytes of output."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 4
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        extra = len(self.tail) - self.tail_limit
        if extra > 0:
            del self.tail[:extra]
            self.dropped += extra

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes of output dropped ...]\n{tail}"
        return head + tail
