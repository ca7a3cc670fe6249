"""Fixtures of the viewer tests: a real bench run (the mock provider over two built-in suites,
three modes, two epochs) in a real DuckDB file, and the viewer served by a real uvicorn server
on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the view extra is not installed")

from harness.bench import BenchRequest, run_bench

ROOT = Path(__file__).resolve().parents[2]


def bench(db: Path, label: str, modes: tuple[str, ...]) -> str:
    report = run_bench(
        BenchRequest(
            suites=[str(ROOT / "suites" / "arithmetic.yaml"), str(ROOT / "suites" / "traps.yaml")],
            modes=modes,
            providers=("mock",),
            epochs=2,
            db=db,
            label=label,
            cassettes=ROOT / "cassettes",
            progress=False,
        )
    )
    return report.run_id


@pytest.fixture(scope="package")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(database, first run id, second run id): two runs of the same tasks, the second
    without Reflexion, so the comparison has cells on one side only."""
    db = tmp_path_factory.mktemp("view") / "harness.duckdb"
    first = bench(db, "first", ("react", "plan_and_solve", "reflexion"))
    second = bench(db, "second", ("react", "plan_and_solve"))
    return db, first, second


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="package")
def server(bench_db: tuple[Path, str, str]) -> Iterator[str]:
    """The viewer over ``bench_db`` on a real uvicorn server; yields its base URL."""
    import uvicorn

    from harness.view import ViewConfig, create_app

    port = free_port()
    app = create_app(ViewConfig(bench_db[0], "http://localhost:16686/trace/{trace_id}", 20))
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
