"""`harness run --executor ray --ray-address` against a real cluster started with
`ray start --head` on 127.0.0.1 (one per module, with its own auth token; stopped by its process
group at the end): the same rows as the local executor, Ctrl-C keeps what finished and
`--resume` runs the rest with no cell twice, and an unreachable address is bad input."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from ray_helpers import latency_suite, require_ray

from harness.tools._sandbox import sandbox_problem
from tests.load import busy_cores

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "suites"
COLUMNS = (
    "cell_key, passed, status, finish_reason, tool_calls, llm_calls, iterations, input_tokens, "
    "output_tokens, cost_usd, text, grader_explanation, error_diagnostic, deliverable"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,stat="], capture_output=True, text=True)
    return [
        int(pid)
        for pid, group, stat in (line.split() for line in out.stdout.splitlines())
        if int(group) == pgid and not stat.startswith("Z")
    ]


@pytest.fixture(scope="module")
def ray_head() -> Iterator[tuple[str, dict[str, str]]]:
    """``ray start --head --block`` on 127.0.0.1 in its own process group; its address and the
    environment a client needs (loopback addresses, the cluster's token)."""
    require_ray()
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        ray_bin = Path(shutil.which("ray") or "ray")
    env = {
        **os.environ,
        # Ray maps 127.0.0.1 to the host's address unless told this is a one-node cluster.
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    port = _free_port()
    temp = Path(tempfile.mkdtemp(prefix="rayh", dir="/tmp"))  # short: unix socket paths
    log = (temp / "head.log").open("wb")
    proc = subprocess.Popen(
        [
            str(ray_bin), "start", "--head", "--block", "--port", str(port),
            "--node-ip-address", "127.0.0.1", "--num-cpus", "2", "--include-dashboard", "false",
            "--disable-usage-stats", "--temp-dir", str(temp),
        ],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while b"block forever" not in (temp / "head.log").read_bytes():
            assert proc.poll() is None, (temp / "head.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "ray start --head did not come up in 90 s"
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", env
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # it drains for up to 30 s: then SIGKILL
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        if _group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        log.close()
        assert not _group(proc.pid), f"processes of the Ray head left: {_group(proc.pid)}"
        shutil.rmtree(temp, ignore_errors=True)


def _harness(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *args, "--no-progress"],
        env=env, cwd=cwd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for_a_batch(proc: subprocess.Popen[str], cwd: Path, timeout_s: float) -> None:
    """Until a batch came back to the driver (its spans reached the run's span file)."""
    traces = cwd / "traces"
    deadline = time.monotonic() + timeout_s
    while not any(f.stat().st_size for f in traces.glob("*.jsonl")):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"no batch finished within {timeout_s:.0f} s"
        time.sleep(0.1)


def _rows(db: Path) -> dict[str, tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(f"SELECT {COLUMNS} FROM results").fetchall()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}


pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
]  # a Ray cluster's start counts too, on 2 busy cores


def test_ray_address_run_stores_what_the_local_executor_stores(
    ray_head: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    address, env = ray_head
    common = [
        str(SUITES / "arithmetic.yaml"), str(SUITES / "files.yaml"), "--modes", "react",
        "--providers", "mock,llamacpp-gemma", "--cassettes", str(ROOT / "cassettes"),
    ]  # fmt: skip
    ray_db, local_db = tmp_path / "ray.duckdb", tmp_path / "local.duckdb"
    remote = _harness(
        [*common, "--executor", "ray", "--ray-address", address, "--workers", "2", "--db",
         str(ray_db)], env, ROOT,  # the profiles of the recorded providers are in pyproject
    )  # fmt: skip
    _, err = remote.communicate(timeout=300)
    assert remote.returncode == 0, err
    local = _harness([*common, "--db", str(local_db)], env, ROOT)
    _, err = local.communicate(timeout=300)
    assert local.returncode == 0, err
    got, want = _rows(ray_db), _rows(local_db)
    assert len(got) > 50
    assert got == want


@pytest.mark.timeout(1800)  # two replays, one of them on cores kept busy
def test_a_ray_replay_while_every_core_is_busy_stores_what_a_quiet_local_one_stores(
    ray_head: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    """Issue 33.5: grep and glob cells, code cells graded by pytest in the sandbox (when there
    is one), on the mock and on the recorded Qwen server, replayed on Ray with one busy process
    per core: the same rows as a quiet local replay, explanations included."""
    address, env = ray_head
    suites = [str(SUITES / f"{name}.yaml") for name in ("lookup", "files")]
    if sandbox_problem() is None:
        suites.append(str(SUITES / "code.yaml"))
    common = [
        *suites, "--providers", "mock,llamaserver-qwen-chat", "--cassettes",
        str(ROOT / "cassettes"), "--record-mode", "none", "--tasks",
        "order-total,find-error-log,count-rows,fix-add,fix-inclusive-range",
    ]  # fmt: skip
    quiet_db, loaded_db = tmp_path / "quiet.duckdb", tmp_path / "loaded.duckdb"
    local = _harness([*common, "--db", str(quiet_db)], env, ROOT)
    _, err = local.communicate(timeout=300)
    assert local.returncode == 0, err
    with busy_cores():
        remote = _harness(
            [*common, "--executor", "ray", "--ray-address", address, "--workers", "2", "--db",
             str(loaded_db)], env, ROOT,
        )  # fmt: skip
        _, err = remote.communicate(timeout=1500)
    assert remote.returncode == 0, err
    quiet, loaded = _rows(quiet_db), _rows(loaded_db)
    assert len(quiet) >= 3 * 2 * 3  # three tasks or more, three modes, two providers
    assert loaded == quiet


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_keeps_finished_cells_and_resume_runs_the_rest_once(
    ray_head: tuple[str, dict[str, str]], tmp_path: Path, signum: signal.Signals
) -> None:
    """SIGTERM as Ctrl-C: before round 14, ``ray.init`` had replaced its handler with
    ``sys.exit``: the executor 'ray' raised SystemExit: 15, exit 3, its cells errored."""
    address, env = ray_head
    # 200 cells in batches of 16 (8 x concurrency): many batches still queued when one is back.
    suite = latency_suite(tmp_path, 200, 0.1)
    db = tmp_path / "h.duckdb"
    args = [
        str(suite), "--providers", "mock", "--modes", "react", "--executor", "ray",
        "--ray-address", address, "--workers", "2", "--concurrency", "2", "--db", str(db),
        "--label", "ctrl-c",
    ]  # fmt: skip
    proc = _harness(args, env, tmp_path)
    _wait_for_a_batch(proc, tmp_path, 120)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    first = _rows(db)
    assert 0 < len(first) < 200

    resumed = _harness([*args, "--resume"], env, tmp_path)
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    con = duckdb.connect(str(db), read_only=True)
    try:
        total, distinct = con.execute(
            "SELECT count(*), count(DISTINCT cell_key) FROM results"
        ).fetchone() or (0, 0)
        runs = con.execute("SELECT status FROM bench_runs ORDER BY started_at").fetchall()
    finally:
        con.close()
    assert (total, distinct) == (200, 200)  # every cell once, across the two runs
    assert runs[-1] == ("finished",)  # --resume continues the interrupted run and closes it


def test_sigterm_while_a_local_cluster_starts_interrupts_the_run(tmp_path: Path) -> None:
    """Before: Ray's SIGTERM handler (``sys.exit``), set as ``ray.init`` begins, ended the run
    as an executor crash: exit 3, its cell errored, ``--retry-errors`` suggested."""
    require_ray()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    suite = latency_suite(tmp_path, 4, 0.1)
    args = [str(suite), "--providers", "mock", "--modes", "react", "--executor", "ray",
            "--db", str(tmp_path / "h.duckdb"), "--label", "L"]  # fmt: skip
    proc = _harness(args, env, tmp_path)
    deadline = time.monotonic() + 120
    while not any("raylet" in p for p in _children(proc.pid)):  # Ray is starting
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "no raylet within 120 s"
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "resume with: harness run" in err, err
    assert "raised SystemExit" not in err


def _children(pid: int) -> list[str]:
    out = subprocess.run(["ps", "-o", "cmd=", "--ppid", str(pid)], capture_output=True, text=True)
    return out.stdout.splitlines()


def test_an_unreachable_ray_address_exits_2(
    ray_head: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    _, env = ray_head
    db = tmp_path / "h.duckdb"
    proc = _harness(
        [str(SUITES / "arithmetic.yaml"), "--providers", "mock", "--executor", "ray",
         "--ray-address", f"127.0.0.1:{_free_port()}", "--db", str(db)], env, tmp_path,
    )  # fmt: skip
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert "--ray-address 127.0.0.1:" in err
    assert "cannot start or reach Ray" in err


def test_kill_9_of_a_driver_that_started_its_own_cluster_leaves_no_process(
    tmp_path: Path,
) -> None:
    """Without --ray-address the run starts a local cluster; killed with SIGKILL, it cannot stop
    it, so its watchdog does: every process the driver had started is gone soon after."""
    require_ray()
    psutil = pytest.importorskip("psutil")  # the ray extra installs it; `nox -s ray` has it
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    suite = latency_suite(tmp_path, 200, 0.1)
    args = [
        str(suite), "--providers", "mock", "--modes", "react", "--executor", "ray",
        "--workers", "2", "--concurrency", "2", "--db", str(tmp_path / "h.duckdb"),
    ]  # fmt: skip
    proc = _harness(args, env, tmp_path)
    _wait_for_a_batch(proc, tmp_path, 180)
    started = psutil.Process(proc.pid).children(recursive=True)
    assert any("raylet" in p.name() for p in started)  # a cluster of its own
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while (left := [p for p in started if p.is_running() and p.status() != "zombie"]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.5)
    for p in left:  # don't leave them to the next test
        with contextlib.suppress(psutil.Error):
            p.kill()
    assert not left, f"left running after kill -9: {[(p.pid, p.name()) for p in left]}"
