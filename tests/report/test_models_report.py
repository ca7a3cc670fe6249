"""The report's model comparison and HumanEval section, on cells replayed from the committed
cassettes of the real models (Qwen on llama-server's two endpoints, Gemma on its Anthropic one),
checked against figures computed here from the results table with SQL."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from harness.bench._session import BenchRequest, run_bench
from harness.report import build_report
from harness.report._loader import load_run

ROOT = Path(__file__).resolve().parents[2]
REAL = ("llamaserver-gemma", "llamaserver-qwen-chat")


@pytest.fixture(scope="module")
def arithmetic_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("models") / "h.duckdb"
    run_bench(
        BenchRequest(
            suites=[str(ROOT / "suites" / "arithmetic.yaml")],
            modes=("react", "plan_and_solve"),
            providers=("mock", *REAL),
            epochs=1,
            cassettes=ROOT / "cassettes",
            db=db,
            progress=False,
        )
    )
    return db


@pytest.mark.slow  # a whole suite replayed on three providers
def test_models_are_compared_on_shared_cells(arithmetic_db: Path) -> None:
    _, df = load_run(arithmetic_db)
    report = build_report(df)
    models = report.models
    assert set(zip(models["provider_a"], models["provider_b"], strict=True)) == {REAL}
    assert set(models["mode"]) == {"react", "plan_and_solve"}  # the mock is never compared
    con = duckdb.connect(str(arithmetic_db), read_only=True)
    for _, row in models.iterrows():
        rates = dict(
            con.execute(
                "select provider, avg(passed::int) from results where suite = 'arithmetic' "
                "and mode = ? and provider in (?, ?) and status != 'error' group by provider",
                [row["mode"], *REAL],
            ).fetchall()
        )
        assert row["tasks"] == 31
        assert row["rate_a"] == pytest.approx(rates[REAL[0]])
        assert row["rate_b"] == pytest.approx(rates[REAL[1]])
        assert row["diff"] == pytest.approx(rates[REAL[1]] - rates[REAL[0]])
        assert float(row["diff_ci_low"]) <= float(row["diff"]) <= float(row["diff_ci_high"])
        assert 0 <= row["p_holm"] <= 1


@pytest.mark.slow
def test_humaneval_direct_baseline_beside_the_published_figure(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    run_bench(
        BenchRequest(
            suites=[str(ROOT / "suites" / "humaneval_direct.yaml")],
            modes=("react",),
            providers=("llamaserver-qwen-chat",),
            epochs=1,
            tasks=("HumanEval/1?",),  # ten problems
            cassettes=ROOT / "cassettes",
            db=db,
            progress=False,
        )
    )
    _, df = load_run(db)
    he = build_report(df).humaneval
    assert he is not None
    (row,) = he.rates.itertuples()
    passed = (
        duckdb.connect(str(db), read_only=True)
        .execute("select sum(passed::int), count(*) from results")
        .fetchone()
    )
    assert passed is not None
    assert row.problems == passed[1] == 10
    assert row.pass_at_1 == pytest.approx(passed[0] / 10)
    assert row.published == pytest.approx(0.616)
    low, high = float(row.ci_low), float(row.ci_high)  # type: ignore[arg-type]
    assert row.published_inside == (low <= 0.616 <= high)
