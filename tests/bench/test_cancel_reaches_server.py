"""Cancellation reaches the model (issue 35, item 2): when a live run is stopped (Ctrl-C asks
the runner to stop) or a request times out, the harness closes the connection, and a server
that watches its client (llama-server does; measured in docs/faults.md) stops generating
instead of running on to ``max_tokens`` with its one slot.

The server is a real loopback HTTP server that makes one token per tick and checks its socket
before each one (tests/bench/generating_server.py); the run records into a temporary cassette
folder, as a live run does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.bench._matrix import Cell
from harness.bench._outcome import Executor, MatrixSummary
from harness.bench._session import BenchRequest, run_bench
from tests.bench.generating_server import GeneratingServer

#: The server would generate this many tokens (20 s at 50 ms each) if nobody stopped it.
LIMIT = 400


def _project(tmp_path: Path, url: str, *, stream: bool, timeout_s: float) -> Path:
    (tmp_path / "harness.toml").write_text(
        "[providers.gen]\n"
        'kind = "openai"\n'
        f'base_url = "{url}"\n'
        'model = "tiny"\n'
        f"stream = {'true' if stream else 'false'}\n"
        f"timeout_s = {timeout_s}\n"
        "max_retries = 0\n"
        f"max_tokens = {LIMIT}\n",
        encoding="utf-8",
    )
    suite = tmp_path / "count.yaml"
    suite.write_text(
        "suite: count\ntasks:\n  - id: count\n    prompt: 'Count to a thousand.'\n"
        "    expect: {kind: contains, value: '1000'}\n",
        encoding="utf-8",
    )
    return suite


def _request(tmp_path: Path, suite: Path) -> BenchRequest:
    return BenchRequest(
        suites=[str(suite)],
        modes=["react"],
        providers=["gen"],
        record_mode="all",
        cassettes=tmp_path / "cassettes",
        db=tmp_path / "h.duckdb",
        label="live",
        progress=False,
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole-reply"])
def test_stopping_a_run_closes_the_connection_and_the_server_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    with GeneratingServer(tick_s=0.05, max_tokens=LIMIT) as server:
        suite = _project(tmp_path, server.url, stream=stream, timeout_s=120)
        monkeypatch.chdir(tmp_path)
        at_stop: list[int] = []

        def drive(runner: Executor, cells: Sequence[Cell], progress: bool) -> MatrixSummary:
            async def main() -> MatrixSummary:
                run = asyncio.create_task(runner.run(cells))
                assert await asyncio.to_thread(server.started.wait, 60), "no token generated"
                at_stop.append(server.requests[0].tokens)
                runner.request_stop()  # what Ctrl-C (SIGINT) does in `harness run`
                return await run

            return asyncio.run(main())

        report = run_bench(_request(tmp_path, suite), drive=drive)
        assert report.summary.interrupted
        assert report.exit_code == 130
        gen = server.requests[0]
        assert gen.done.wait(30), "the server never stopped generating"
    assert gen.streamed is stream, "the request was not sent the way the profile says"
    assert gen.body["max_tokens"] == LIMIT
    assert gen.disconnected_at is not None, "the server never saw the client go"
    # It stopped long before the end: the slot is free for the next request (--resume).
    assert gen.tokens < LIMIT // 2, (at_stop, gen.tokens)


def test_a_request_timing_out_closes_the_connection_and_the_server_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The profile's timeout_s ends a whole-reply request that takes too long; the cell is an
    error cell (retry: none) and the server, seeing the client go, stops generating."""
    with GeneratingServer(tick_s=0.05, max_tokens=LIMIT) as server:
        suite = _project(tmp_path, server.url, stream=False, timeout_s=1.0)
        monkeypatch.chdir(tmp_path)
        report = run_bench(_request(tmp_path, suite))
        gen = server.requests[0]
        assert gen.done.wait(30), "the server never stopped generating"
    assert report.summary.errored == 1
    assert "timeout" in report.summary.errors[0]
    assert gen.disconnected_at is not None, "the server never saw the client go"
    assert gen.tokens < LIMIT // 2
