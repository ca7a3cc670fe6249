"""The watchdog of one sandboxed command (:mod:`harness.tools._sandbox`): the caps that hold for
the command as a whole, its processes and files together, where a per-process limit cannot.

A thread looks every 20 ms (:data:`TICK_S`; longer when a look costs more, so that at most a
tenth of the time goes to it, but at the memory at least every 100 ms), and at the disk also as
soon as something in the workspace or the sandbox's /tmp changes (inotify; at most every
millisecond, or four times what a look costs):

- memory (``Limits.memory_mb``): with a cgroup (:mod:`harness.tools._cgroup`) the kernel keeps
  the cap, and the watchdog only sees whether its OOM killer killed in the cgroup, then kills the
  rest of the command. Without one, the watchdog counts: the anonymous memory of every process
  descended from the command's first process (the sandbox's PID namespace), confirmed with their
  proportional share (``Pss_Anon``, so pages shared by forks count once) once past the cap, plus
  what the sandbox's ``/tmp`` holds (a tmpfs: memory); past the cap it kills them all. Memory
  that no process maps and that is not in /tmp (a ``memfd`` written to, not mapped) escapes this
  count; a cgroup counts it.
- disk (``Limits.disk_mb``): the workspace's growth (the blocks of everything in it, against the
  start) plus what the sandbox's ``/tmp`` holds (a tmpfs of ``disk_mb`` itself); past the cap
  every process of the command is killed.
- files (``Limits.files``): the entries the workspace gained (files, folders, links) plus the
  inodes the sandbox's ``/tmp`` holds, looked at with the disk; past the cap every process of
  the command is killed (empty files take no blocks: 300,000 of them passed the disk cap).

A cap is seen within a tick (a write within a millisecond or so), so a command that allocates
or writes very fast goes past it by what it manages in that time (measured in docs/faults.md).
After the command a last look catches what happened since the last one.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import stat
import threading
import time
from collections import defaultdict
from pathlib import Path

from harness.tools._cgroup import CommandCgroup
from harness.tools._inotify import Changes

__all__ = ["MAX_TICK_S", "TICK_S", "Watchdog", "descendants", "disk_and_files", "disk_use"]

#: Seconds between two looks, at least; at most between two looks at the memory.
TICK_S = 0.02
MAX_TICK_S = 0.1
#: Seconds between two looks at the workspace when it changes, at least.
CHANGE_S = 0.001
_PAGE = os.sysconf("SC_PAGE_SIZE")
_MIB = 1024 * 1024
Folders = set[tuple[int, int]]


class Watchdog:
    """The caps of one command: :meth:`measure` before it starts, :meth:`start` once it runs,
    :meth:`finish` after it ended; ``stopped`` says which cap stopped it, if one did."""

    def __init__(
        self,
        *,
        memory_bytes: int,
        disk_bytes: int,
        workspace: Path,
        tmp_bytes: int | None,
        files: int | None = None,
    ) -> None:
        self.memory_bytes = memory_bytes
        self.disk_bytes = disk_bytes
        #: Entries the command may create (workspace and /tmp together); None: no cap.
        self.files = files
        self.workspace = workspace
        #: Size of the sandbox's /tmp tmpfs (None: no private /tmp, ``sandbox="none"``).
        self.tmp_bytes = tmp_bytes
        #: ``killed: memory cap of ...`` when a cap stopped the command.
        self.stopped: str | None = None
        #: The most memory counted at once (without a cgroup) and disk used at once, in bytes.
        self.peak_memory = 0
        self.peak_disk = 0
        #: The most entries the command had created at once (workspace and /tmp).
        self.peak_files = 0
        self._baseline = 0
        self._baseline_files = 0
        self._tmp_used = 0
        self._tmp_files = 0
        self._files = 0
        self._created = 0  # entries inotify says were made since the last look
        self._tmp_pid: int | None = None
        self._root = 0
        self.cgroup: CommandCgroup | None = None
        self._halt = threading.Event()
        self._looked = threading.Event()  # the thread's last look is over
        self._wake_r, self._wake_w = os.pipe()
        self._changes = Changes()
        self._thread: threading.Thread | None = None

    def measure(self) -> None:
        """The workspace's size before the command runs (its growth is counted against it)."""
        folders: dict[tuple[int, int], str] = {}
        self._baseline, self._baseline_files = disk_and_files(self.workspace, folders)
        self._changes.watch(folders)

    def start(self, pid: int, cgroup: CommandCgroup | None) -> None:
        """Watch the command whose first process is ``pid`` (in ``cgroup`` when there is one)."""
        self._root, self.cgroup = pid, cgroup
        self._thread = threading.Thread(target=self._run, name=f"watchdog-{pid}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._loop()
        finally:
            self._looked.set()
            self._changes.close()  # slow (the kernel waits for its readers): after the answer

    def finish(self) -> str | None:
        """Stop watching, take a last look, and return ``stopped``."""
        if self._halt.is_set():
            return self.stopped
        self._halt.set()
        os.write(self._wake_w, b"x")
        if self._thread is None:
            self._changes.close()
        else:
            self._looked.wait()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        # Space taken past files' ends (fallocate -n) outlives the command: give it back.
        disk_use(self.workspace, trim=True)
        if self.stopped is None and self._thread is not None:
            if self.cgroup is not None and self.cgroup.oom_kills() > 0:
                self.stopped = f"killed: {self._memory_cap()}"
            elif (disk := self._disk(watch=False)) > self.disk_bytes:
                self.stopped = f"over the {self._disk_cap()} ({disk // _MIB} MiB written)"
            elif self.files is not None and self._files > self.files:
                self.stopped = f"over the {self._files_cap()} ({self._files:,} made)"
        return self.stopped

    @property
    def mechanism(self) -> str:
        return self.cgroup.mechanism if self.cgroup is not None else "watchdog over /proc"

    def _memory_cap(self) -> str:
        mib = self.memory_bytes // _MIB
        return f"memory cap of {mib} MiB for the command's processes ({self.mechanism})"

    def _disk_cap(self) -> str:
        where = "the workspace's growth and /tmp" if self.tmp_bytes else "the workspace's growth"
        return f"disk cap of {self.disk_bytes // _MIB} MiB for {where}"

    def _files_cap(self) -> str:
        where = "the workspace and /tmp" if self.tmp_bytes else "the workspace"
        return f"file cap of {self.files:,} new files, folders and links in {where}"

    def _loop(self) -> None:
        now = time.monotonic()
        memory_due = disk_due = now + TICK_S
        soonest = now  # the next look at the workspace when it changed
        changed = False
        poller = select.poll()  # not select.select: a descriptor past 1023 is fine here
        for fd in [self._wake_r] + ([self._changes.fd] if self._changes.fd >= 0 else []):
            poller.register(fd, select.POLLIN)
        while True:
            wake = min(memory_due, disk_due, soonest if changed else disk_due)
            timeout_ms = max(0.0, wake - time.monotonic()) * 1000
            ready = {fd for fd, _ in poller.poll(timeout_ms)}
            if self._wake_r in ready:
                return
            if self._changes.fd in ready:
                self._created += self._changes.drain()
                changed = True
            now = time.monotonic()
            # Entries made since the last look would pass the file cap: look now (a walk of the
            # workspace may take long enough for a command to make thousands more meanwhile).
            if self.files is not None and self._files + self._created > self.files:
                soonest = now
            reason = None
            if now >= memory_due:
                reason = self._check_memory()
                cost = time.monotonic() - now
                memory_due = now + min(MAX_TICK_S, max(TICK_S, 10 * cost))
            if reason is None and (now >= disk_due or (changed and now >= soonest)):
                began = time.monotonic()
                reason = self._check_disk()
                cost, changed = time.monotonic() - began, False
                soonest = began + max(CHANGE_S, 4 * cost)
                disk_due = began + max(TICK_S, 10 * cost)
            if reason is not None:
                self.stopped = f"killed: {reason}"
                self._kill()
                return

    def _check_memory(self) -> str | None:
        pids = self._pids()
        if self.tmp_bytes:
            self._tmp_used = self._tmp(pids)
        if self.cgroup is not None:
            return self._memory_cap() if self.cgroup.oom_kills() > 0 else None
        used = self._tmp_used + sum(map(_anon, pids))
        if used > self.memory_bytes:  # pages a fork shares count in each process: share them
            used = self._tmp_used + sum(map(_pss_anon, pids))
        self.peak_memory = max(self.peak_memory, used)
        return self._memory_cap() if used > self.memory_bytes else None

    def _check_disk(self) -> str | None:
        if self._disk() > self.disk_bytes:
            return self._disk_cap()
        if self.files is not None and self._files > self.files:
            return self._files_cap()
        return None

    def _pids(self) -> list[int]:
        return self.cgroup.pids() if self.cgroup is not None else descendants(self._root)

    def _disk(self, *, watch: bool = True) -> int:
        """Bytes the command filled (and, in ``_files``, the entries it made) now."""
        folders: dict[tuple[int, int], str] = {}
        self._created = 0
        blocks, entries = disk_and_files(self.workspace, folders)
        used = max(0, blocks - self._baseline)
        tmp = self._tmp_pid
        if tmp is not None and (now := _tmp_used(tmp, self.tmp_bytes)) is not None:
            self._tmp_used = now
            self._tmp_files = _tmp_files(tmp)
            if watch:  # its folders too, so that a write in /tmp wakes the watchdog as well
                disk_use(Path(f"/proc/{tmp}/root/tmp"), folders)
        if watch:
            self._changes.watch(folders)
        used += self._tmp_used
        self.peak_disk = max(self.peak_disk, used)
        self._files = max(0, entries - self._baseline_files) + self._tmp_files
        self.peak_files = max(self.peak_files, self._files)
        return used

    def _tmp(self, pids: list[int]) -> int:
        """What the sandbox's /tmp holds, seen through a sandboxed process's root."""
        ordered = [p for p in pids if p == self._tmp_pid] + [p for p in pids if p != self._root]
        for pid in ordered:
            used = _tmp_used(pid, self.tmp_bytes)
            if used is not None:
                self._tmp_pid = pid
                return used
        return self._tmp_used

    def _kill(self) -> None:
        pids = self._pids()  # before the first dies and its children move to another parent
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._root, signal.SIGKILL)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill()


def _tmp_used(pid: int, size: int | None) -> int | None:
    """Bytes in the /tmp of ``pid``'s root when that /tmp is the sandbox's tmpfs of ``size``
    (a process still setting up, or a pid used again, shows the host's /tmp: the size tells them
    apart), else None."""
    try:
        st = os.statvfs(f"/proc/{pid}/root/tmp")
    except OSError:
        return None
    if st.f_blocks * st.f_frsize != size:
        return None
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def _tmp_files(pid: int) -> int:
    """Inodes in use in the /tmp of ``pid``'s root (its own folder not counted); 0 when it
    cannot be read (the caller checked it is the sandbox's)."""
    try:
        st = os.statvfs(f"/proc/{pid}/root/tmp")
    except OSError:
        return 0
    return max(0, st.f_files - st.f_ffree - 1)


def descendants(root: int) -> list[int]:
    """``root`` and every process descended from it (one pass over /proc)."""
    children: defaultdict[int, list[int]] = defaultdict(list)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children[ppid].append(int(entry.name))
    found, todo = [root], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _anon(pid: int) -> int:
    """The anonymous memory ``pid`` holds (resident less shared pages, from ``statm``)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _pss_anon(pid: int) -> int:
    """Its share of the anonymous memory it holds (``Pss_Anon``: a page shared by N processes
    counts 1/N in each)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss_Anon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _anon(pid)


def disk_use(
    root: Path, folders: dict[tuple[int, int], str] | None = None, *, trim: bool = False
) -> int:
    """Bytes of disk the files and folders under ``root`` take (their blocks; a file with
    several links once; links never followed; other file systems mounted inside are left out,
    as ``du -x`` does). Puts ``root`` and every folder under it in ``folders`` (by device and
    inode)."""
    return disk_and_files(root, folders, trim=trim)[0]


def disk_and_files(
    root: Path, folders: dict[tuple[int, int], str] | None = None, *, trim: bool = False
) -> tuple[int, int]:
    """:func:`disk_use`, and the number of entries under ``root`` (files, folders, links and
    the rest; every name of a file with several hard links counts, its blocks once)."""
    try:
        top = os.stat(root)
    except OSError:
        return 0, 0
    if folders is not None:
        folders[(top.st_dev, top.st_ino)] = str(root)
    total = count = 0
    linked: set[tuple[int, int]] = set()
    todo = [str(root)]
    while todo:
        try:
            entries = os.scandir(todo.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                    folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_dev != top.st_dev:
                    continue
                count += 1  # every name, hard links included (each is an entry made)
                if st.st_nlink > 1 and not folder:
                    if (st.st_dev, st.st_ino) in linked:
                        continue
                    linked.add((st.st_dev, st.st_ino))
                if trim and not folder and st.st_blocks * 512 > st.st_size + _TRIM_SLACK:
                    st = _trim(entry.path, st)
                total += st.st_blocks * 512
                if folder:
                    todo.append(entry.path)
                    if folders is not None:
                        folders[(st.st_dev, st.st_ino)] = entry.path
    return total, count


#: Blocks a file may hold past its end before :func:`disk_use` (``trim``) gives them back.
_TRIM_SLACK = 1024 * 1024


def _trim(path: str, st: os.stat_result) -> os.stat_result:
    """Give back the blocks a file holds past its end (``fallocate -n``, which the per-file
    size limit does not stop): truncated to its own size, which drops only those blocks. The
    very file stat'ed, never through a link; anything else is left alone."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return st
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) and stat.S_ISREG(now.st_mode):
            os.ftruncate(fd, now.st_size)
            return os.fstat(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    return st
