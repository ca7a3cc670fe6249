"""Start and stop a real Arize Phoenix server for the integration tests (see conftest.py).

``phoenix serve`` runs in its own process group on free ports with a throw-away working
directory (its SQLite database lives there), its phone-home and outbound fetches switched off by
environment. :func:`stop_group` terminates the whole group (SIGTERM, then SIGKILL) and
:func:`group_members` tells, from /proc, whether anything of it is left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = [
    "PHOENIX_ENV",
    "Phoenix",
    "ServerNotHealthy",
    "group_members",
    "phoenix_command",
    "start_phoenix",
    "stop_group",
]

#: Longest wait for Phoenix to answer /healthz (a first start runs its DB migrations).
STARTUP_TIMEOUT_S = 90.0
#: How long SIGTERM gets before SIGKILL.
STOP_TIMEOUT_S = 15.0

#: Phoenix settings for a private, offline, quiet test server.
PHOENIX_ENV = {
    "PHOENIX_HOST": "127.0.0.1",
    # Web analytics pixels (FullStory, Scarf.sh) off.
    "PHOENIX_TELEMETRY_ENABLED": "false",
    # No public-internet requests on its own initiative (web fonts, telemetry, the WASM sandbox
    # binary that it otherwise prefetches at startup).
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    # The built-in LLM assistant (hosted docs / MCP servers) off.
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    # Keep the log short: no SQL echo of the schema migrations.
    "PHOENIX_LOG_MIGRATIONS": "false",
}


class ServerNotHealthy(RuntimeError):
    """Phoenix exited, or did not answer /healthz in time (the message has its log tail)."""


@dataclass(frozen=True)
class Phoenix:
    """A running Phoenix: where to send OTLP and where to read spans back."""

    base_url: str  # UI, REST API (/v1/...) and OTLP/HTTP (/v1/traces)
    grpc_endpoint: str  # OTLP/gRPC
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def otlp_http_endpoint(self) -> str:
        return f"{self.base_url}/v1/traces"

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    """A TCP port free on every interface (Phoenix binds its gRPC port on ``[::]``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def phoenix_command() -> list[str] | None:
    """``$HARNESS_PHOENIX`` (a ``phoenix`` executable, e.g. in another venv), else the script
    beside this interpreter, else ``phoenix`` on PATH; None when there is none."""
    explicit = os.environ.get("HARNESS_PHOENIX")
    if explicit:
        return [explicit, "serve"]
    beside = Path(sys.executable).parent / "phoenix"
    if beside.is_file():
        return [str(beside), "serve"]
    found = shutil.which("phoenix")
    return [found, "serve"] if found else None


def group_members(pgid: int) -> list[int]:
    """Pids of the live (non-zombie) processes in process group ``pgid``, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def start_phoenix(cmd: list[str], workdir: Path) -> Phoenix:
    """Start ``cmd`` (``phoenix serve``) in a new session; wait for /healthz. On failure the
    group is stopped before :class:`ServerNotHealthy` is raised."""
    http_port = free_port()
    grpc_port = free_port()
    while grpc_port == http_port:
        grpc_port = free_port()
    # The child gets none of our OTel or Phoenix settings (it must not trace itself anywhere).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(PHOENIX_ENV)
    env["PHOENIX_PORT"] = str(http_port)
    env["PHOENIX_GRPC_PORT"] = str(grpc_port)
    env["PHOENIX_WORKING_DIR"] = str(workdir / "data")
    log = workdir / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop_group reaches all of it
        )
    server = Phoenix(f"http://127.0.0.1:{http_port}", f"http://127.0.0.1:{grpc_port}", proc, log)
    try:
        _wait_healthy(server)
    except BaseException:
        stop_group(proc)
        raise
    return server


def _wait_healthy(server: Phoenix) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    last = "no answer"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            code = server.proc.poll()
            if code is not None:
                raise ServerNotHealthy(
                    f"phoenix exited with code {code} before it was healthy:\n{server.log_tail()}"
                )
            try:
                resp = client.get(f"{server.base_url}/healthz")
            except httpx.TransportError as exc:
                last = type(exc).__name__
            else:
                if resp.status_code == 200:
                    return
                last = f"HTTP {resp.status_code}"
            time.sleep(0.25)
    raise ServerNotHealthy(
        f"phoenix not healthy within {STARTUP_TIMEOUT_S:.0f}s ({last}):\n{server.log_tail()}"
    )


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, SIGKILL whatever is left after STOP_TIMEOUT_S, reap the
    leader."""
    pgid = proc.pid  # start_new_session=True: the leader's pid is the group id
    deadline = time.monotonic() + STOP_TIMEOUT_S
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_TIMEOUT_S)
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if proc.poll() is None or group_members(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=10)
