"""What a sandboxed command may use (:class:`Limits`) and what it did (:class:`CommandRun`); the
defaults are documented in docs/suites.md and docs/faults.md."""

from __future__ import annotations

import signal
from dataclasses import dataclass

__all__ = ["CommandRun", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one sandboxed command."""

    #: CPU seconds (the command is killed with SIGXCPU/SIGKILL beyond them).
    cpu_s: int = 60
    #: Memory in MiB: for the command's processes together (and its /tmp files), kept by a
    #: cgroup or the watchdog, which kill the command past it; also each process's address
    #: space (allocations beyond it fail with ENOMEM, ``MemoryError`` in Python).
    memory_mb: int = 1024
    #: Processes (and threads) at once.
    processes: int = 128
    #: Output kept, in bytes (stdout and stderr together; the middle of a longer output is cut).
    output_bytes: int = 32 * 1024
    #: Largest file the command may write, in MiB.
    file_mb: int = 64
    #: Disk in MiB the command may fill: the workspace's growth and /tmp together (/tmp is a
    #: tmpfs of this size); the command is killed past it.
    disk_mb: int = 256
    #: Files, folders and links the command may create: the workspace's new entries and what
    #: /tmp holds, together; the command is killed past it (the disk cap counts blocks, and
    #: empty files take none).
    files: int = 10_000


@dataclass(frozen=True, slots=True)
class CommandRun:
    """What a command did."""

    exit_code: int | None
    output: str
    timed_out: bool
    #: Output bytes dropped (beyond ``Limits.output_bytes``).
    dropped: int
    duration_s: float
    #: The cap that stopped the command (``killed: memory cap of 1024 MiB for the command's
    #: processes (cgroup v1 memory controller)``), or None.
    stopped: str | None = None
    #: The most memory the command held at once, in bytes (its cgroup's peak, or the watchdog's
    #: count), and the most disk it filled at once (workspace growth and /tmp).
    peak_memory_bytes: int | None = None
    peak_disk_bytes: int = 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.stopped is None

    def describe(self) -> str:
        """``exit code 0``, ``killed by SIGXCPU``, ``timed out after 5s`` or the cap that
        stopped the command (``killed: disk cap of 256 MiB for ...``)."""
        if self.stopped is not None:
            return self.stopped
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
