"""Run a shell command in a bubblewrap sandbox with resource limits (the ``shell`` tool and the
``command`` grader use it).

The sandbox (``bwrap``):

- the workspace is bound read-write at ``/workspace``, the working folder, by descriptor, never
  by name: the harness holds the folder open (a sub-agent's folder found by the workspace's own
  lookup without following links, a path opened once, ``O_NOFOLLOW``, and checked to be its real
  path) and bwrap binds that descriptor (``--bind-fd``; bwrap checks the mount is that very
  folder). A bwrap without ``--bind-fd`` (before 0.10) binds the name the descriptor has now and
  the command starts only when ``/workspace`` is the held folder (device and inode, checked
  inside the sandbox), so a name swapped for a symlink meanwhile never puts a host folder there;
- the system (``/usr``, the ``/bin``, ``/lib*`` and ``/sbin`` links or folders, a few loader files
  under ``/etc``) and the running Python (its prefixes, so ``python -m pytest`` works) are bound
  read-only; nothing else of the host is visible (``/tmp`` is an empty tmpfs of
  ``Limits.disk_mb``, no ``/home``, no ``/root``); the sandbox's own ``/`` and ``/dev`` are
  read-only, so the workspace and ``/tmp`` are the only places to write;
- no network: new network, PID, IPC and UTS namespaces (``--unshare-all`` when not run as root);
- a clean environment: ``PATH``, ``HOME=/workspace``, ``LANG``, ``TMPDIR``, ``TERM``,
  ``PYTHONDONTWRITEBYTECODE`` and ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` (the harness's own pytest
  plugins stay out of task tests) and nothing else, so no API key reaches the command;
- limits per process (:class:`Limits`, set with ``prlimit`` on the sandbox): CPU seconds,
  address space, processes, size of a written file; the output kept is capped too (head and
  tail, the middle is dropped with a note);
- caps per command, for all its processes and files together: memory (a cgroup of its own,
  :mod:`harness.tools._cgroup`, else the watchdog's count over ``/proc``) and disk (``/tmp`` is a
  tmpfs of ``Limits.disk_mb``, and the workspace's growth plus ``/tmp`` may not pass it either),
  kept by a watchdog thread (:mod:`harness.tools._watchdog`) that kills the whole command past a
  cap; :attr:`CommandRun.stopped` says which;
- the command's whole process group is killed at the timeout (or when the caller is cancelled),
  and with it the sandbox's PID namespace.

When the harness runs as root, the sandbox is set up without a user namespace and the command
runs as an unprivileged uid of its own (:data:`SANDBOX_UID_BASE` and up, one per command, so
concurrent commands never share a process limit), with no capabilities and ``no_new_privs``
(``setpriv``), so the process limit applies (the kernel never applies it to root). The
workspace is lent to that uid (``chown``) for the command and given back afterwards (the old
owners; new files go to the workspace folder's owner), so a caller's folder keeps its
ownership; both walk the held descriptor, never a path (:mod:`harness.tools._lend`). Otherwise
bwrap makes an unprivileged user namespace, and the process limit counts every process of the
user, so it is set to the number running now plus ``Limits.processes``.

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
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from harness.errors import SandboxUnavailable, ToolError
from harness.tools._lend import Lent, give_back, hand_over
from harness.tools._limits import CommandRun, Limits
from harness.tools._supervise import run_process

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
T = TypeVar("T")
#: As root, each command runs as a uid of its own from here up (no passwd entry), so one
#: command's processes never count against another's process limit.
SANDBOX_UID_BASE = 200_000
_UIDS = itertools.count()
_BORROWERS = range(SANDBOX_UID_BASE, SANDBOX_UID_BASE + 10_000 * 1000)  # see _sandbox_uid
_MIB = 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
#: Exit code of a command never started: ``/workspace`` was not the held folder (no --bind-fd).
REPLACED_EXIT = 125
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
        "/etc/localtime")  # fmt: skip


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
    probe = ["--bind", os.environ.get("TMPDIR", "/tmp"), MOUNT_POINT]
    argv = _bwrap_argv(bwrap, probe, ["true"], _sandbox_uid(), Limits().disk_mb)
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} cannot run: {exc}"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {done.returncode}"
        if "--size" in detail:
            detail += " (bubblewrap 0.8.0 or newer is needed: the sandbox's /tmp has a size)"
        return f"{bwrap} is installed but cannot make a sandbox here: {detail}"
    return None


@functools.cache
def _binds_fd(bwrap: str) -> bool:
    """Whether ``bwrap`` has ``--bind-fd`` (0.10.0 and newer, and some distributions' 0.8)."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--bind-fd" in done.stdout + done.stderr


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


def _bwrap_argv(
    bwrap: str, bind: list[str], command: list[str], uid: int = 0, tmp_mb: int = 256
) -> list[str]:
    """The bwrap command line; ``bind`` mounts the workspace at :data:`MOUNT_POINT`."""
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
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(tmp_mb * _MIB)]
    argv += ["--tmpfs", "/tmp"]
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
    argv += [*bind, "--chdir", MOUNT_POINT, "--clearenv"]
    # The sandbox's own root and /dev are tmpfs mounts with no bound; read-only, the workspace
    # and /tmp (bounded) are the only places to write (without a user namespace the command's
    # uid could not write there anyway; with one it owns them).
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
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
        f"--as={limits.memory_mb * _MIB}",
        f"--nproc={processes}",
        f"--fsize={min(limits.file_mb, limits.disk_mb) * _MIB}",
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


def open_workspace(workspace: Path) -> int:
    """The folder ``workspace`` held by descriptor (the caller closes it): its real path opened
    once with ``O_NOFOLLOW`` and checked to be that path still. ToolError when it cannot be
    opened or was replaced meanwhile."""
    real = os.path.realpath(workspace)
    try:
        fd = os.open(real, _DIR_FLAGS)
    except OSError as exc:
        raise ToolError(f"the workspace {str(workspace)!r}: {exc.strerror or exc}") from None
    if _fd_path(fd) != real:
        os.close(fd)
        raise ToolError(f"the workspace {str(workspace)!r} was replaced while it was opened")
    return fd


def _fd_path(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def _bind(bwrap: str, fd: int, command: list[str]) -> tuple[list[str], list[str], tuple[int, ...]]:
    """How the held folder ``fd`` is bound: bwrap's arguments, the command (behind a check of
    ``/workspace`` when bound by name) and the descriptors to pass to bwrap."""
    if _binds_fd(bwrap):
        return ["--bind-fd", str(fd), MOUNT_POINT], command, (fd,)
    st = os.fstat(fd)
    check = (
        f'[ "$(stat -c %d:%i .)" = "$0" ] || {{ echo "the workspace folder was replaced while the '
        f'sandbox started; nothing was run" >&2; exit {REPLACED_EXIT}; }}; exec "$@"'
    )
    checked = ["sh", "-c", check, f"{st.st_dev}:{st.st_ino}", *command]
    return ["--bind", _fd_path(fd), MOUNT_POINT], checked, ()


async def run_command(
    command: str,
    workspace: Path,
    *,
    timeout_s: float,
    limits: Limits | None = None,
    sandbox: SandboxKind = "bwrap",
    bwrap: str = "bwrap",
    workspace_fd: int | None = None,
) -> CommandRun:
    """Run ``sh -c command`` in ``workspace`` (sandboxed unless ``sandbox="none"``) and return
    its exit code and capped output. Raises :class:`SandboxUnavailable` when the sandbox cannot
    run; the process group is killed at ``timeout_s`` or when the caller is cancelled.

    ``workspace_fd``: the folder already held by the caller (:meth:`Workspace.open_folder`;
    the caller keeps and closes it); else ``workspace`` is opened here
    (:func:`open_workspace`). The sandbox binds that descriptor, never the name."""
    limits = limits or Limits()
    shell = ["sh", "-c", command]
    if sandbox == "none":  # unsandboxed, for trusted use only: by name
        return await run_process(
            [*_limit_argv(limits, sandbox), *shell], cwd=str(workspace),
            env=_env(str(workspace)), limits=limits, timeout_s=timeout_s, workspace=workspace,
            private_tmp=False,
        )  # fmt: skip
    problem = await asyncio.to_thread(sandbox_problem, bwrap)
    if problem is not None:
        raise SandboxUnavailable(f"the shell sandbox is unavailable: {problem}")
    fd = open_workspace(workspace) if workspace_fd is None else os.dup(workspace_fd)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise ToolError(f"the workspace {str(workspace)!r} is not a folder")
        uid = _sandbox_uid()
        bind, shell, passed = _bind(bwrap, fd, shell)
        argv = _bwrap_argv(bwrap, bind, shell, uid, limits.disk_mb)
        lent = await _lend(fd, uid) if _as_root() else None
        try:
            return await run_process(
                [*_limit_argv(limits, sandbox), *argv], cwd=None, env={"PATH": os.defpath},
                limits=limits, timeout_s=timeout_s, workspace=Path(f"/proc/self/fd/{fd}"),
                private_tmp=True, pass_fds=passed,
            )  # fmt: skip
        finally:
            if lent is not None:
                await asyncio.to_thread(_on_dup, fd, lambda own: give_back(own, lent))
    finally:
        os.close(fd)


def _on_dup(fd: int, work: Callable[[int], T]) -> T:
    """``work`` on a descriptor of its own (a worker thread goes on after the call that started
    it is cancelled, and the caller closes ``fd`` then: a reused number must never be walked)."""
    own = os.dup(fd)
    try:
        return work(own)
    finally:
        os.close(own)


async def _lend(fd: int, uid: int) -> Lent | None:
    """:func:`hand_over` in a worker thread; cancelled meanwhile (a cell's timeout), the thread
    gives everything back itself once its walk is done, so nothing stays lent."""
    cancelled = threading.Event()

    def work(own: int) -> Lent | None:
        lent = hand_over(own, uid, _BORROWERS)
        if cancelled.is_set():
            give_back(own, lent)
            return None
        return lent

    try:
        return await asyncio.to_thread(_on_dup, fd, work)
    except asyncio.CancelledError:
        cancelled.set()
        raise
