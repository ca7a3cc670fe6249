"""`harness report`, `harness gate` and `harness baseline save` on a real DuckDB results file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli._baseline import baseline
from harness.cli._gate import gate
from harness.cli._report import report

pytest.importorskip("duckdb")
store = pytest.importorskip("harness.store")

Rows = Callable[..., pd.DataFrame]


@click.group()
def cli() -> None:
    """The three commands as harness/cli/__init__.py registers them."""


cli.add_command(report)
cli.add_command(gate)
cli.add_command(baseline)


def _run(frame: pd.DataFrame, db: Path, run_id: str) -> None:
    frame = frame.assign(run_id=run_id)
    with store.Store.open(db) as s:
        s.begin_run(run_id=run_id, label="ci")
        s.write_results(frame)
        s.finish_run(run_id)


@pytest.fixture
def cells(rows: Rows) -> pd.DataFrame:
    return rows(
        *[
            {
                "suite": suite,
                "task_id": f"t{i}",
                "mode": mode,
                "cost_usd": 0.01,
                "passed": not (mode == "react" and i == 3),
            }
            for suite in ("arith", "files")
            for i in range(4)
            for mode in ("react", "reflexion")
        ]
    ).drop(columns=["grader_explanation"])


@pytest.fixture
def db(cells: pd.DataFrame, tmp_path: Path) -> Path:
    path = tmp_path / "reports" / "harness.duckdb"
    _run(cells, path, "run-base")
    return path


def _invoke(*args: str, env: dict[str, str] | None = None) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_baseline_report_and_gate(db: Path, cells: pd.DataFrame, tmp_path: Path) -> None:
    base = tmp_path / "reports" / "baseline.json"
    out = _invoke("baseline", "save", "--db", str(db), "-o", str(base))
    assert out.exit_code == 0, out.output
    assert out.output == f"wrote {base}: run run-base, 16 cells, 14 passed\n"

    passing = _invoke("gate", "--db", str(db), "--baseline", str(base))
    assert passing.exit_code == 0, passing.output
    assert "harness gate: PASSED (12 checks)" in passing.output

    regressed = cells.copy()
    regressed["cost_usd"] = 0.012
    flip = (
        (regressed["suite"] == "files")
        & (regressed["task_id"] == "t1")
        & (regressed["mode"] == "reflexion")
    )
    regressed.loc[flip, "passed"] = False
    _run(regressed, db, "run-new")
    summary = tmp_path / "step-summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    failing = _invoke("gate", "--db", str(db), "--baseline", str(base), env=env)
    assert failing.exit_code == 1, failing.output
    assert failing.output.startswith("run run-new\nharness gate: FAILED")
    assert "files/t1 [reflexion, live, e0]" in failing.output
    assert "::error title=harness gate::cost (total) rose by 20.0%25" in failing.output
    assert "| newly failing | files/t1 [reflexion, live, e0] |" in summary.read_text()

    lenient = _invoke(
        "gate",
        "--db",
        str(db),
        "--baseline",
        str(base),
        "--allow-flips",
        "1",
        "--max-cost-increase",
        "0.25",
        "--max-pass-rate-drop",
        "0.125",
    )
    assert lenient.exit_code == 0, lenient.output

    report_dir = tmp_path / "out"
    rep = _invoke(
        "report",
        "--db",
        str(db),
        "--baseline",
        str(base),
        "--out",
        str(report_dir),
        "--resamples",
        "200",
    )
    assert rep.exit_code == 0, rep.output
    assert "reflexion vs react (live): " in rep.output
    md = (report_dir / "report.md").read_text()
    assert md.startswith("# harness report -- run-new")  # plain characters: "—" reads "--"
    assert "Against " + str(base) + ": 1 newly failing" in md
    assert (report_dir / "report.html").read_text().count('<figure class="chart"') == 4

    by_run = _invoke(
        "report",
        "--db",
        str(db),
        "--run",
        "run-new",
        "--baseline",
        "run-base",
        "--out",
        str(report_dir),
        "--resamples",
        "200",
    )
    assert by_run.exit_code == 0, by_run.output
    assert "Against run run-base: 1 newly failing" in (report_dir / "report.md").read_text()


def test_thresholds_from_pyproject(db: Path, cells: pd.DataFrame, tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    assert _invoke("baseline", "save", "--db", str(db), "-o", str(base)).exit_code == 0
    more = cells.assign(cost_usd=0.0115)  # +15%
    _run(more, db, "run-2")
    assert _invoke("gate", "--db", str(db), "--baseline", str(base)).exit_code == 1
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.harness.gate]\nmax-cost-increase = 0.2\n")
    args = ["gate", "--db", str(db), "--baseline", str(base), "--pyproject", str(pyproject)]
    assert _invoke(*args).exit_code == 0
    assert _invoke(*args, "--max-cost-increase", "0.1").exit_code == 1  # the flag wins


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gate", "--baseline", "{tmp}/missing.json"], "baseline file not found"),
        (["gate", "--baseline", "{tmp}/bad.json"], "field format"),
        (["report", "--run", "nope"], "no run 'nope'"),
        (["baseline", "save", "--db", "{tmp}/none.duckdb"], "no results database"),
        (
            ["gate", "--baseline", "{tmp}/good.json", "--pyproject", "{tmp}/pyproject.toml"],
            "unknown key 'oops'",
        ),
    ],
)
def test_bad_input_exits_2(db: Path, tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "bad.json").write_text('{"format": "nope"}')
    (tmp_path / "pyproject.toml").write_text("[tool.harness.gate]\noops = 1\n")
    _invoke("baseline", "save", "--db", str(db), "-o", str(tmp_path / "good.json"))
    argv = [a.format(tmp=tmp_path) for a in args]
    if "--db" not in argv:
        argv += ["--db", str(db)]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_an_unwritable_report_out_is_bad_input(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = CliRunner().invoke(report, ["--out", str(blocker / "sub")])
    assert result.exit_code == 2
    assert "--out" in result.output
    assert "Traceback" not in result.output


def test_gate_judges_a_subset_run_against_its_requested_matrix(
    db: Path, cells: pd.DataFrame, tmp_path: Path
) -> None:
    base = tmp_path / "reports" / "baseline.json"
    assert _invoke("baseline", "save", "--db", str(db), "-o", str(base)).exit_code == 0
    subset = cells[(cells["mode"] == "react") & cells["task_id"].isin(["t0", "t1"])]
    with store.Store.open(db) as s:
        s.begin_run(
            run_id="run-subset",
            suites=["arith", "files"],
            modes=["react"],
            providers=["live"],
            epochs=1,
            config={"tasks": ["t0", "t1"]},
        )
        s.write_results(subset.assign(run_id="run-subset"))
        s.finish_run("run-subset")
    out = _invoke("gate", "--db", str(db), "--run", "run-subset", "--baseline", str(base))
    assert out.exit_code == 0, out.output
    assert "12 baseline cell(s) not requested by this run (it asked for suites arith,files; " in (
        out.output
    )
    assert "missing" not in out.output.split("warning:")[0].replace("missing_cells", "")
