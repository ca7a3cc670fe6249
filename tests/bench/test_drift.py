"""Replays repeat exactly, and a replayed request unlike its recording is drift: counted per cell
(``results.drift``) and in the summary, an error cell under ``--drift error``. Offline, epochs
that were never recorded are bad input before any cell runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from harness.bench._session import BenchRequest, run_bench
from harness.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SUITE = str(ROOT / "suites" / "arithmetic.yaml")
CASSETTES = ROOT / "cassettes"
COLUMNS = (
    "task_id, mode, provider, epoch, status, passed, finish_reason, iterations, tool_calls, "
    "input_tokens, output_tokens, cost_usd, drift"
)


def _rows(db: Path) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"SELECT {COLUMNS} FROM results ORDER BY 1, 2, 3, 4").fetchall()


def _replay(db: Path, cassettes: Path = CASSETTES, **extra: object) -> int:
    request = BenchRequest(
        suites=[SUITE],
        modes=["react", "reflexion"],
        providers=["llamacpp-gemma"],
        epochs=2,
        tasks=["add-*", "mul-*", "mixed-ops"],
        cassettes=cassettes,
        db=db,
        progress=False,
        **extra,  # type: ignore[arg-type]
    )
    return run_bench(request).exit_code


@pytest.mark.slow  # whole replays of a 32-cell matrix
def test_three_replays_store_identical_rows_with_no_drift(tmp_path: Path) -> None:
    runs = []
    for i in range(3):
        assert _replay(tmp_path / f"r{i}.duckdb") == 0
        runs.append(_rows(tmp_path / f"r{i}.duckdb"))
    assert len(runs[0]) == 8 * 2 * 2  # add-* (4), mul-* (3), mixed-ops x 2 modes x 2 epochs
    assert runs[0] == runs[1] == runs[2]
    assert {row[-1] for row in runs[0]} == {0}  # a faithful replay has no drift


def _drifted(tmp_path: Path) -> Path:
    """A copy of the cassettes where one cell's recorded requests ask for another temperature."""
    root = tmp_path / "cassettes"
    shutil.copytree(
        CASSETTES / "arithmetic" / "llamacpp-gemma", root / "arithmetic" / "llamacpp-gemma"
    )
    file = root / "arithmetic" / "llamacpp-gemma" / "react" / "add-small.e0.yaml"
    text = file.read_text(encoding="utf-8")
    assert '"temperature":0.7' in text
    file.write_text(text.replace('"temperature":0.7', '"temperature":0.5'), encoding="utf-8")
    return root


@pytest.mark.slow  # whole replays of a 32-cell matrix
def test_drift_is_counted_per_cell_and_warned_by_default(tmp_path: Path) -> None:
    cassettes = _drifted(tmp_path)
    db = tmp_path / "h.duckdb"
    assert _replay(db, cassettes) == 0
    rows = {(r[0], r[1], r[3]): r for r in _rows(db)}
    hit = rows[("add-small", "react", 0)]
    assert hit[-1] >= 1
    assert hit[4] != "error"
    assert sum(r[-1] for key, r in rows.items() if key != ("add-small", "react", 0)) == 0
    assert _replay(tmp_path / "clean.duckdb") == 0
    clean = _rows(tmp_path / "clean.duckdb")
    assert [r[:-1] for r in clean] == [r[:-1] for r in _rows(db)]  # same outcome, drift aside


def test_drift_error_makes_the_drifted_cell_an_error(tmp_path: Path) -> None:
    cassettes = _drifted(tmp_path)
    db = tmp_path / "h.duckdb"
    assert _replay(db, cassettes, drift="error") == 3  # some cells errored
    with duckdb.connect(str(db), read_only=True) as con:
        errored = con.execute(
            "SELECT task_id, mode, epoch, drift, error FROM results WHERE status = 'error'"
        ).fetchall()
    ((task, mode, epoch, drift, error),) = errored
    assert (task, mode, epoch) == ("add-small", "react", 0)
    assert drift >= 1
    assert "drift:" in error
    assert "$.temperature" in error


def test_asking_offline_for_epochs_never_recorded_is_bad_input(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    request = BenchRequest(
        suites=[SUITE], modes=["react"], providers=["llamacpp-gemma"], epochs=3, db=db,
        progress=False,
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"llamacpp-gemma has cassettes of epochs e0, e1 only"):
        run_bench(request)
    assert not db.exists()  # before any cell (and any run row)
