"""Running one command's process under its caps (:mod:`harness.tools._sandbox` builds the
command line): the cgroup it is put in before it runs anything, the watchdog, the timeout, the
capped output, and the clean-up (the whole process group, the cgroup's folder).

The gate: with a cgroup, the command starts as ``sh`` reading one line from its standard input
(a pipe); the harness moves that process into the cgroup, then writes the line, and only then
does ``sh`` exec the real command (``prlimit``, ``bwrap``, ...) with ``/dev/null`` as its input,
so nothing the command starts runs outside the cgroup. When the move fails the command runs
under the watchdog's own count instead; when the harness closes the pipe without the line, the
command exits (code 125) and runs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import time
from pathlib import Path

from harness.tools._cgroup import CommandCgroup, open_cgroup
from harness.tools._limits import CommandRun, Limits
from harness.tools._watchdog import Watchdog

__all__ = ["run_process"]

_MIB = 1024 * 1024
#: Holds the command until it is in its cgroup (see the module's docstring).
_GATE = ("sh", "-c", 'read -r go || exit 125; exec "$@" </dev/null', "gate")


async def run_process(
    argv: list[str],
    *,
    cwd: str | None,
    env: dict[str, str],
    limits: Limits,
    timeout_s: float,
    workspace: Path,
    private_tmp: bool,
    pass_fds: tuple[int, ...] = (),
) -> CommandRun:
    """Run ``argv`` (its own session and process group) under ``limits``' caps for the whole
    command; ``private_tmp`` says the sandbox's /tmp is a tmpfs of ``limits.disk_mb``;
    ``pass_fds`` are kept open in the command (the workspace folder bwrap binds)."""
    started = time.monotonic()
    watch = Watchdog(
        memory_bytes=limits.memory_mb * _MIB,
        disk_bytes=limits.disk_mb * _MIB,
        workspace=workspace,
        tmp_bytes=limits.disk_mb * _MIB if private_tmp else None,
        files=limits.files,
    )
    prepared = asyncio.get_running_loop().run_in_executor(
        None, _prepare, watch, limits.memory_mb * _MIB
    )
    try:
        cgroup = await asyncio.shield(prepared)
    except BaseException:  # cancelled: undo what the thread does once it is done
        prepared.add_done_callback(functools.partial(_undo, watch))
        raise
    try:
        code, output, timed_out = await _supervise(
            argv, cwd, env, limits, timeout_s, watch, cgroup, pass_fds
        )
        peak = cgroup.peak() if cgroup is not None and watch.cgroup is cgroup else None
    finally:
        watch.finish()
        if cgroup is not None:  # in a thread that finishes even if this task is cancelled again
            await asyncio.get_running_loop().run_in_executor(None, cgroup.remove)
    return CommandRun(
        None if timed_out else code,
        output.text(),
        timed_out,
        output.dropped,
        time.monotonic() - started,
        stopped=watch.stopped,
        peak_memory_bytes=peak if peak is not None else watch.peak_memory or None,
        peak_disk_bytes=watch.peak_disk,
    )


def _prepare(watch: Watchdog, memory_bytes: int) -> CommandCgroup | None:
    watch.measure()
    return open_cgroup(memory_bytes)


def _undo(watch: Watchdog, prepared: asyncio.Future[CommandCgroup | None]) -> None:
    watch.finish()
    if not prepared.cancelled() and prepared.exception() is None:
        cgroup = prepared.result()
        if cgroup is not None:
            cgroup.remove(wait_s=1.0)


async def _supervise(
    argv: list[str],
    cwd: str | None,
    env: dict[str, str],
    limits: Limits,
    timeout_s: float,
    watch: Watchdog,
    cgroup: CommandCgroup | None,
    pass_fds: tuple[int, ...],
) -> tuple[int | None, _Capped, bool]:
    proc = await asyncio.create_subprocess_exec(
        *(_GATE if cgroup is not None else ()), *argv,
        stdin=asyncio.subprocess.PIPE if cgroup is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=cwd, env=env,
        start_new_session=True, pass_fds=pass_fds,
    )  # fmt: skip
    output = _Capped(limits.output_bytes)
    timed_out = False
    try:
        if cgroup is not None and proc.stdin is not None:
            placed = cgroup.add(proc.pid)
            watch.start(proc.pid, cgroup if placed else None)
            proc.stdin.write(b"go\n")
            proc.stdin.close()
        else:
            watch.start(proc.pid, None)
        await asyncio.wait_for(_drain(proc, output), timeout=timeout_s)
    except TimeoutError:
        timed_out = True
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        _kill_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        if cgroup is not None:
            cgroup.kill()
        watch.finish()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=5)
    return proc.returncode, output, timed_out


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
