"""Stop a local Ray cluster's processes when the driver that started it dies without stopping it
(``kill -9``, an out-of-memory kill).

``ray.init()`` starts the cluster's processes as the driver's children. When the driver is killed,
most of them follow it, but measured here Ray's dashboard and runtime-env agents (children of the
raylet) were left running for good. :func:`start_reaper` starts a small watchdog process that
notes every descendant of the driver once a second and, once the driver is gone, terminates the
ones still running (then kills those that did not stop within 3 s). psutil compares process
creation times, so a reused pid is never mistaken for a noted process. Only a cluster the run
started itself is watched: a cluster given by ``--ray-address`` is not the run's to stop.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

__all__ = ["REAPER_SOURCE", "start_reaper"]

#: The watchdog's program (argument: the driver's pid). It runs ``python -c`` with no harness
#: import, so it starts in a few tens of milliseconds.
REAPER_SOURCE = """
import os, sys, time
import psutil
driver = psutil.Process(int(sys.argv[1]))
me = os.getpid()
noted = {}
while True:
    try:
        if not driver.is_running() or driver.status() == psutil.STATUS_ZOMBIE:
            break
        for child in driver.children(recursive=True):
            if child.pid != me:
                noted.setdefault(child.pid, child)
    except psutil.Error:
        break
    time.sleep(1.0)
left = [p for p in noted.values() if p.is_running()]
for p in left:
    try:
        p.terminate()
    except psutil.Error:
        pass
_, alive = psutil.wait_procs(left, timeout=3)
for p in alive:
    try:
        p.kill()
    except psutil.Error:
        pass
"""


def start_reaper() -> subprocess.Popen[bytes] | None:
    """Start the watchdog for this process; None when psutil is missing (it comes with the
    ``ray`` extra) or the watchdog cannot start, in which case a killed driver may leave some of
    Ray's processes (docs/scale-out.md)."""
    spec = importlib.util.find_spec("psutil")
    if spec is None or not spec.submodule_search_locations:
        return None
    # Where this process found it: once `import ray` ran, that may be Ray's own copy
    # (ray/thirdparty_files), which a new interpreter does not see: the watchdog died at its
    # first line (ModuleNotFoundError, its stderr discarded) and a killed driver left Ray's
    # agents running, in an environment without psutil of its own.
    found = os.path.dirname(os.path.abspath(next(iter(spec.submodule_search_locations))))
    path = os.pathsep.join(p for p in (found, os.environ.get("PYTHONPATH", "")) if p)
    try:
        return subprocess.Popen(
            [sys.executable, "-c", REAPER_SOURCE, str(os.getpid())],
            env={**os.environ, "PYTHONPATH": path},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C in the terminal goes to the driver, not to it
        )
    except OSError:
        return None
