"""`nox -s serve` stops the model server however it is itself stopped (scripts/serve_model.py).

Seen: `kill` (SIGTERM) of the serving script ended it at once and left llama-server running,
holding its port and both cores, with no parent. Here a stand-in server (a loopback HTTP
server answering ``/health``) is served by :func:`serve_model.serve` in a child process, which
is then stopped as nox, a terminal, ``kill`` or the OOM killer would stop it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

FAKE_SERVER = """\
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("content-length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
open(sys.argv[2], "w").write(str(os.getpid()))
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""

DRIVER = """\
import sys
sys.path.insert(0, sys.argv[1])
import serve_model
raise SystemExit(serve_model.serve(sys.argv[2:-1], int(sys.argv[-1]), ["next step"]))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for a parent to reap it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _wait(condition: object, what: str, guard_s: float = 60) -> None:
    deadline = time.monotonic() + guard_s  # a guard against a hang, not a measure
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize(
    "stop",
    ["sigterm", "sigint-then-sigterm", "sighup", "sigkill"],
)
def test_the_server_stops_however_the_serving_script_is_stopped(tmp_path: Path, stop: str) -> None:
    port = _free_port()
    fake, pid_file = tmp_path / "fake.py", tmp_path / "server.pid"
    fake.write_text(FAKE_SERVER, encoding="utf-8")
    server_cmd = [sys.executable, str(fake), str(port), str(pid_file)]
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(ROOT / "scripts"), *server_cmd, str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert driver.stdout is not None
        for line in driver.stdout:  # ready once it printed the next steps
            if "Ctrl-C stops it" in line:
                break
        else:
            pytest.fail(f"the serving script ended before the server was ready: {driver.wait()}")
        server = int(pid_file.read_text())
        assert _alive(server)
        if stop == "sigint-then-sigterm":  # what nox does on Ctrl-C: SIGINT, SIGTERM 0.3 s on
            driver.send_signal(signal.SIGINT)
            time.sleep(0.3)
            driver.send_signal(signal.SIGTERM)
        else:
            driver.send_signal(getattr(signal, stop.upper()))
        _wait(lambda: not _alive(server), f"the server outlived the serving script ({stop})")
        code = driver.wait(timeout=60)
        assert code == (-signal.SIGKILL if stop == "sigkill" else 0)
    finally:
        driver.kill()
        driver.wait()
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
