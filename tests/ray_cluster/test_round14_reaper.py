"""The watchdog that stops a local Ray cluster after its driver is killed must start where the
driver's ``psutil`` is Ray's own copy. Ray puts ``ray/thirdparty_files`` (which holds a psutil)
on ``sys.path`` when it is imported; the driver then found psutil, but the watchdog, a new
interpreter, did not: it died at its first line (``ModuleNotFoundError``, its stderr discarded)
and ``kill -9`` of the driver left Ray's dashboard and runtime-env agents running (seen here in
an environment with Ray and no psutil of its own: the kill-9 test failed 3 times in 3, and
passed once the watchdog is given the driver's psutil). Real processes: a driver in a fresh
venv with no psutil, which finds one only through a folder added to ``sys.path``."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

REAPER = Path(__file__).resolve().parents[2] / "harness" / "bench" / "_ray_reaper.py"

DRIVER = """\
import importlib.util, sys, time
sys.path.append({extra!r})  # as `import ray` adds ray/thirdparty_files
spec = importlib.util.spec_from_file_location("reaper", {reaper!r})
reaper = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reaper)
watchdog = reaper.start_reaper()
time.sleep(3)
print("none" if watchdog is None else "alive" if watchdog.poll() is None else "gone")
"""


@pytest.mark.timeout(300)
def test_the_watchdog_starts_with_a_psutil_found_only_on_the_driver_s_path(
    tmp_path: Path,
) -> None:
    psutil = pytest.importorskip("psutil")  # `nox -s ray` installs it (the ray extra)
    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(home)  # a Python with no psutil
    python = home / "bin" / "python"
    assert subprocess.run([python, "-c", "import psutil"], capture_output=True).returncode == 1
    extra = tmp_path / "thirdparty"
    extra.mkdir()
    (extra / "psutil").symlink_to(Path(psutil.__file__).parent)
    driver = DRIVER.format(extra=str(extra), reaper=str(REAPER))
    done = subprocess.run([python, "-c", driver], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alive", done.stdout  # before: "gone" (exit status 1)


def test_the_watchdog_is_not_started_without_psutil(tmp_path: Path) -> None:
    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(home)
    driver = DRIVER.format(extra=str(tmp_path / "nothing"), reaper=str(REAPER))
    done = subprocess.run([home / "bin" / "python", "-c", driver], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "none", done.stdout
