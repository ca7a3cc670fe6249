"""A fault found by adversary round 17, part B (issue 34), past round 16's refusal of a baseline
of a live run: ``harness baseline save`` read the run's cells first and its state after, so a
run that ended between the two reads was saved with only the cells stored before its end, as a
finished run, without a word. Here the run ends exactly there (the state's read waits for it).
Fails on 9919cbe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.e2e.test_round16b_baseline import slow_run

_TASKS = 60

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_run_ending_while_its_baseline_is_saved_is_saved_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.report._loader as loader

    db = tmp_path / "h.duckdb"
    with slow_run(tmp_path, "--concurrency", "8") as proc:
        real = loader.unfinished

        def after_the_end(*args: Any) -> Any:
            assert proc.wait(timeout=120) == 0
            return real(*args)

        monkeypatch.setattr(loader, "unfinished", after_the_end)
        out = tmp_path / "b.json"
        done = CliRunner().invoke(main, ["baseline", "save", "--db", str(db), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert len(json.loads(out.read_text(encoding="utf-8"))["cells"]) == _TASKS, done.output
