"""The matrix runner and `harness run`: real suites, the mock provider, a real DuckDB file."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.bench._matrix import Cell, expand
from harness.bench._runner import CellOutcome, Runner, RunnerOptions, rerecord_command
from harness.bench._session import BenchRequest, discover_providers, run_bench
from harness.cli import main
from harness.errors import ConfigError
from harness.suites._load import load_suites

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "suites"

SLOW_SUITE = textwrap.dedent(
    """
    suite: slow
    defaults:
      tools: [calculator]
      max_iterations: 4
    tasks:
    """
) + "".join(
    textwrap.dedent(
        f"""
      - id: t{i}
        prompt: "What is {i}+1?"
        expect: {{kind: contains, value: "{i + 1}"}}
        mock:
          turns:
            - tool_calls: [{{name: calculator, arguments: {{expression: "{i}+1"}}}}]
            - text: "{i + 1}"
        """
    )
    for i in range(40)
)


def test_expand_orders_and_filters_cells() -> None:
    suites = load_suites([SUITES / "arithmetic.yaml"])
    cells = expand(suites, ["react", "reflexion"], ["mock"], 2, tasks=["add-*"])
    assert cells, "the arithmetic suite has add-* tasks"
    assert all(c.task.id.startswith("add-") for c in cells)
    assert len(cells) == len({c.task.id for c in cells}) * 2 * 2
    assert cells[0].key.endswith("/react/mock/e0")
    assert cells[1].key.endswith("/react/mock/e1")
    with pytest.raises(ConfigError, match="no task matches"):
        expand(suites, ["react"], ["mock"], 1, tasks=["nope-*"])


def test_cassette_path_only_for_http_providers(tmp_path: Path) -> None:
    suites = load_suites([SUITES / "arithmetic.yaml"])
    task = suites[0].tasks[0]
    assert Cell(suites[0], task, "react", "mock", 0).cassette(tmp_path) is None
    path = Cell(suites[0], task, "react", "llamacpp-gemma", 1).cassette(tmp_path)
    assert path == tmp_path / "arithmetic" / "llamacpp-gemma" / "react" / f"{task.id}.e1.yaml"
    hint = rerecord_command(Cell(suites[0], task, "react", "llamacpp-gemma", 1))
    assert "--record-mode all" in hint
    assert f"--tasks {task.id}" in hint
    assert "--epochs 2" in hint


def test_runner_runs_every_cell_and_a_broken_cell_does_not_stop_the_matrix(
    tmp_path: Path,
) -> None:
    # Three suites (not every one: test_builtin_suites runs them all, marked slow).
    suites = load_suites([SUITES / f"{name}.yaml" for name in ("arithmetic", "files", "lookup")])
    cells = expand(suites, ["react", "plan_and_solve"], ["mock"], 1)
    # One cell for an HTTP provider whose cassette is corrupt: it must fail alone.
    broken = Cell(suites[0], suites[0].tasks[0], "react", "openai:gpt-4o-mini", 0)
    corrupt = broken.cassette(tmp_path)
    assert corrupt is not None
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text("interactions: [this is: not: valid\n", encoding="utf-8")
    seen: list[CellOutcome] = []
    # list.append is a valid Sink, but Sink.__call__'s parameter is not positional-only
    runner = Runner(RunnerOptions(cassettes=tmp_path, concurrency=8), seen.append)
    summary = asyncio.run(runner.run([*cells, broken]))
    assert summary.done == summary.total == len(cells) + 1
    assert summary.crashed == 1
    bad = [o for o in seen if o.error is not None]
    assert [o.cell.key for o in bad] == [broken.key]
    assert str(corrupt) in (bad[0].error or "")
    good = [o for o in seen if o.error is None]
    assert all(o.result is not None and o.grade is not None for o in good)
    assert summary.passed == sum(o.passed for o in seen) > len(cells) // 2


def test_a_cancellation_leaking_from_a_cell_is_an_error_cell_not_a_lost_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CancelledError that the runner did not ask for (a tool's worker killed for another
    cell, say) used to end its worker silently and drop the cell."""
    import harness.bench._runner as runner_module

    real = runner_module.arun  # type: ignore[attr-defined]  # the name the runner calls (patched below)
    cells = expand(load_suites([SUITES / "arithmetic.yaml"]), ["react"], ["mock"], 1)
    victim = cells[1].task.prompt

    async def leaky(prompt: str, **kwargs: object) -> object:
        if prompt == victim:
            raise asyncio.CancelledError
        return await real(prompt, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner_module, "arun", leaky)
    seen: list[CellOutcome] = []
    summary = asyncio.run(Runner(RunnerOptions(concurrency=2), seen.append).run(cells))
    assert summary.done == summary.total == len(cells)
    assert not summary.interrupted
    errors = [o for o in seen if o.status == "error"]
    assert [o.cell.key for o in errors] == [cells[1].key]
    assert "CancelledError" in (errors[0].error or "")


def test_stop_cancels_in_flight_cells_and_schedules_nothing_new(tmp_path: Path) -> None:
    (tmp_path / "slow.yaml").write_text(SLOW_SUITE, encoding="utf-8")
    cells = expand(load_suites([tmp_path / "slow.yaml"]), ["react"], ["mock"], 1)
    seen: list[CellOutcome] = []
    runner = Runner(RunnerOptions(concurrency=2), seen.append)

    async def main() -> object:
        def stop_after_three(outcome: CellOutcome, summary: object) -> None:
            if len(seen) == 3:
                runner.request_stop()

        return await runner.run(cells, stop_after_three)

    summary = asyncio.run(main())
    assert summary.interrupted  # type: ignore[attr-defined]
    assert 3 <= len(seen) < len(cells)
    assert summary.skipped == len(cells) - len(seen)  # type: ignore[attr-defined]


def test_run_bench_stores_every_cell_and_resume_skips_them(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    request = BenchRequest(
        suites=[str(SUITES / "lookup.yaml")],
        modes=["react", "reflexion"],
        providers=["mock"],
        epochs=2,
        db=db,
        label="nightly",
        progress=False,
    )
    first = run_bench(request)
    n = first.summary.total
    assert first.exit_code == 0
    assert first.summary.done == n > 0
    assert first.spans > 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT count(*), count(DISTINCT cell_key), count(trace_id) FROM results"
        ).fetchone()
        status = con.execute("SELECT status FROM bench_runs").fetchall()
    finally:
        con.close()
    assert rows == (n, n, n)  # every cell stored once, each linked to its trace
    assert status == [("finished",)]
    request.resume = True
    second = run_bench(request)
    assert second.run_id == first.run_id
    assert second.summary.total == 0  # everything was already stored under the label


def test_discover_providers_lists_cassette_folders(tmp_path: Path) -> None:
    (tmp_path / "arithmetic" / "llamaserver-gemma" / "react").mkdir(parents=True)
    (tmp_path / "files" / "openai:gpt-4o-mini").mkdir(parents=True)
    assert discover_providers(tmp_path, ["arithmetic", "files"]) == [
        "mock",
        "llamaserver-gemma",
        "openai:gpt-4o-mini",
    ]
    assert discover_providers(tmp_path, ["lookup"]) == ["mock"]


def test_discovery_skips_retired_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "cassettes" / "arithmetic" / "old-server" / "react").mkdir(parents=True)
    (tmp_path / "cassettes" / "arithmetic" / "new-server" / "react").mkdir(parents=True)
    (tmp_path / "harness.toml").write_text(
        '[providers.old-server]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\nretired = "dropped its system messages"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    with caplog.at_level("WARNING"):
        assert discover_providers(tmp_path / "cassettes", ["arithmetic"]) == ["mock", "new-server"]
    assert "skipping retired provider old-server: dropped its system messages" in caplog.text


def test_discovered_providers_run_only_the_cells_they_have_cassettes_for(tmp_path: Path) -> None:

    from harness.bench._session import _prepare

    suites_dir = Path(__file__).resolve().parents[2] / "suites"
    cassettes = tmp_path / "cassettes"
    recorded = cassettes / "arithmetic" / "llamaserver-gemma" / "react" / "add-small.e0.yaml"
    recorded.parent.mkdir(parents=True)
    recorded.write_text("interactions: []\n", encoding="utf-8")
    request = BenchRequest(
        suites=[str(suites_dir / "arithmetic.yaml"), str(suites_dir / "delegation.yaml")],
        providers=("auto",),
        epochs=2,
        cassettes=cassettes,
        db=tmp_path / "h.duckdb",
    )
    _, _, providers, cells = _prepare(request)
    assert providers == ["mock", "llamaserver-gemma"]
    # A recording made in chunks: the provider runs the one cell it has, nothing else.
    real = [c.key for c in cells if c.provider == "llamaserver-gemma"]
    assert real == ["arithmetic/add-small/react/llamaserver-gemma/e0"]
    assert {c.suite.suite for c in cells if c.provider == "mock"} == {"arithmetic", "delegation"}
    # Named explicitly, a provider runs every cell (a missing cassette is then an error cell).
    request.providers = ("mock", "llamaserver-gemma")
    request.epochs = 1
    _, _, _, cells = _prepare(request)
    assert ("delegation", "llamaserver-gemma") in {(c.suite.suite, c.provider) for c in cells}


def test_cli_run_bad_suite_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("suite: bad\ntasks:\n  - id: x\n    prompt: hi\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["run", str(bad), "--providers", "mock", "--db", str(tmp_path / "h.duckdb")]
    )
    assert result.exit_code == 2
    assert "bad.yaml" in result.output
    assert "expect" in result.output


@pytest.mark.slow
def test_ctrl_c_mid_matrix_keeps_finished_cells_and_exits_130(tmp_path: Path) -> None:
    suite = tmp_path / "slow.yaml"
    # Each cell sleeps in a tool, so the matrix is still running when SIGINT arrives.
    suite.write_text(
        SLOW_SUITE.replace("  max_iterations: 4", "  max_iterations: 4\n  tool_timeout_s: 5"),
        encoding="utf-8",
    )
    db = tmp_path / "h.duckdb"
    marker = tmp_path / "first-tool-call"
    code = textwrap.dedent(
        f"""
        import pathlib, signal, sys, time
        signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started ignored
        import harness.tools._builtins as b
        real = b.calculate
        def slow(expr):
            pathlib.Path({str(marker)!r}).touch()
            time.sleep(0.3)
            return real(expr)
        b.calculate = slow
        from harness.cli import main
        sys.argv = ["harness", "run", {str(suite)!r}, "--providers", "mock", "--modes",
                    "react", "--db", {str(db)!r}, "--concurrency", "1", "--no-progress",
                    "--label", "slow"]
        main()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not marker.exists():
        time.sleep(0.05)
    time.sleep(1.5)  # a few cells finish, others are in flight
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    # The exact command that resumes it, with the label used (folded anywhere by the console).
    resume = (
        f"resume with: harness run {suite} --modes react --providers mock --concurrency 1 "
        f"--db {db} --label slow --no-progress --resume"
    )
    assert resume.replace(" ", "") in "".join(err.split()), err
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute("SELECT count(*) FROM results").fetchone()
        status = con.execute("SELECT status FROM bench_runs").fetchone()
    finally:
        con.close()
    assert stored is not None
    assert 0 < stored[0] < 40
    assert status == ("interrupted",)


def test_global_and_per_provider_limits_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "slow.yaml").write_text(SLOW_SUITE, encoding="utf-8")
    suites = load_suites([tmp_path / "slow.yaml"])
    cells = expand(suites, ["react"], ["mock", "mock:other"], 1)
    in_flight: dict[str, int] = {}
    peak: dict[str, int] = {}
    total_peak = 0

    async def fake_cell(self: Runner, cell: Cell, *_: object) -> CellOutcome:
        nonlocal total_peak
        in_flight[cell.provider] = in_flight.get(cell.provider, 0) + 1
        peak[cell.provider] = max(peak.get(cell.provider, 0), in_flight[cell.provider])
        total_peak = max(total_peak, sum(in_flight.values()))
        await asyncio.sleep(0.002)
        in_flight[cell.provider] -= 1
        return CellOutcome(cell, None, error="not run")

    monkeypatch.setattr(Runner, "_cell", fake_cell)
    runner = Runner(RunnerOptions(concurrency=4, provider_concurrency=1), lambda o: None)
    summary = asyncio.run(runner.run(cells))
    assert summary.done == len(cells) == 80
    assert peak == {"mock": 1, "mock:other": 1}
    assert total_peak == 2
    unlimited = Runner(RunnerOptions(concurrency=3), lambda o: None)
    peak.clear()
    total_peak = 0
    asyncio.run(unlimited.run(cells))
    assert total_peak == 3
