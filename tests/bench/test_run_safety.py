"""`run_bench` guards: pre-flight checks, duplicate names, run folders and --retry-errors."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from harness.bench._preflight import check_output_path, check_providers, dedupe
from harness.bench._rundir import LEGACY_CELL_PREFIX, RUN_PREFIX, RunFolder, remove_stale
from harness.bench._session import BenchRequest, run_bench
from harness.errors import ConfigError

SUITE = """
suite: guarded
defaults: {{tools: [calculator], max_iterations: 4}}
tasks:
  - id: add
    prompt: "What is 2+2?"
    expect: {{kind: python, function: "guard_checks:check", timeout_s: 20}}
    mock: {{turns: [{{text: "4"}}]}}
  - id: mul
    prompt: "What is 3*3?"
    expect: {{kind: contains, value: "9"}}
    mock: {{turns: [{{text: "9"}}]}}
"""

CHECKS = """
import pathlib

HERE = pathlib.Path(__file__).parent

def check(result, workspace):
    (HERE / "workspaces.txt").open("a").write(f"{{workspace}}\\n")
    if (HERE / "broken").exists():
        raise RuntimeError("grader bug")
    return "4" in (result.text or "")
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "guarded.yaml").write_text(textwrap.dedent(SUITE.format()))
    (folder / "guard_checks.py").write_text(textwrap.dedent(CHECKS.format()))
    return folder / "guarded.yaml"


@pytest.fixture
def plain_suite(tmp_path: Path) -> Path:
    """The suite with an in-process grader: for the tests that do not look at what the python
    grader (a process per cell) sees."""
    folder = tmp_path / "plain"
    folder.mkdir()
    text = textwrap.dedent(SUITE.format())
    python = 'expect: {kind: python, function: "guard_checks:check", timeout_s: 20}'
    assert python in text
    (folder / "guarded.yaml").write_text(
        text.replace(python, 'expect: {kind: contains, value: "4"}')
    )
    return folder / "guarded.yaml"


@pytest.fixture
def tmpdir_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def request(suite: Path, db: Path, **kw: object) -> BenchRequest:
    base: dict[str, object] = {"suites": [str(suite)], "providers": ["mock"], "db": db}
    base.update(progress=False, **kw)
    return BenchRequest(**base)  # type: ignore[arg-type]


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_duplicate_modes_removed(plain_suite: Path, tmp_path: Path, tmpdir_root: Path) -> None:
    warnings: list[str] = []
    assert dedupe(["react", "react", "reflexion"], "--modes", warnings.append) == [
        "react",
        "reflexion",
    ]
    assert warnings == ["--modes names 'react' 2 times; running it once"]
    db = tmp_path / "h.duckdb"
    req = request(plain_suite, db, modes=["react", "react"], providers=["mock", "mock"])
    report = run_bench(req)
    assert report.summary.total == 2  # 2 tasks x 1 mode x 1 provider, not 8
    assert rows(db, "SELECT count(*), count(DISTINCT cell_key) FROM results") == [(2, 2)]
    assert rows(db, "SELECT modes, providers FROM bench_runs") == [(["react"], ["mock"])]


def test_unwritable_trace_file_exits_2_without_run_row(plain_suite: Path, tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    run_bench(request(plain_suite, db))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for bad in (blocker / "trace.jsonl", tmp_path):
        with pytest.raises(ConfigError, match="--trace-file") as caught:
            run_bench(request(plain_suite, db, trace_file=bad))
        assert str(bad) in str(caught.value)
    assert rows(db, "SELECT count(*) FROM bench_runs") == [(1,)]
    assert not list(tmp_path.glob("**/.probe-*"))


def test_unwritable_db_exits_2_without_creating_it(suite: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match=r"--db .*a-file/sub/h\.duckdb"):
        run_bench(request(suite, blocker / "sub" / "h.duckdb"))
    with pytest.raises(ConfigError, match="is a directory"):
        check_output_path(tmp_path, "--db")


def test_output_path_check_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "out.jsonl"
    check_output_path(target, "--trace-file")
    assert not (tmp_path / "new").exists()
    existing = tmp_path / "keep.txt"
    existing.write_text("data")
    check_output_path(existing, "--trace-file")
    assert existing.read_text() == "data"


def test_missing_api_key_when_recording_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    check_providers(["openai:gpt-4o-mini", "mock"], "none")  # replay needs no key
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        check_providers(["openai:gpt-4o-mini"], "once")


@pytest.mark.slow
def test_unimportable_python_grader_exits_2_before_any_cell(suite: Path, tmp_path: Path) -> None:
    (suite.parent / "guard_checks.py").unlink()
    db = tmp_path / "h.duckdb"
    with pytest.raises(ConfigError, match=r"guard_checks:check.*ModuleNotFoundError") as caught:
        run_bench(request(suite, db))
    assert "task 'add'" in str(caught.value)
    assert not db.exists()


@pytest.mark.slow  # the python grader: a process per cell
def test_cells_run_in_one_run_folder_removed_at_the_end(
    suite: Path, tmp_path: Path, tmpdir_root: Path
) -> None:
    report = run_bench(request(suite, tmp_path / "h.duckdb"))
    seen = (suite.parent / "workspaces.txt").read_text().split()
    assert seen
    assert all(Path(w).parent == tmpdir_root / f"{RUN_PREFIX}{report.run_id}" for w in seen)
    assert not list(tmpdir_root.iterdir())  # the run folder is gone


@pytest.mark.slow
def test_stale_cell_folders_removed(suite: Path, tmp_path: Path, tmpdir_root: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = tmpdir_root / f"{RUN_PREFIX}killed"
    (stale / "cell-x").mkdir(parents=True)
    (stale / "pid").write_text(f"{dead.stdout.strip()}\n{os.uname().nodename}\n")
    live = RunFolder("live", tmpdir_root)  # this process: alive
    assert remove_stale(tmpdir_root) == [stale]
    assert live.path.exists()
    live.remove()
    # And `harness run` does it at start.
    (stale / "cell-x").mkdir(parents=True)
    (stale / "pid").write_text(f"{dead.stdout.strip()}\n{os.uname().nodename}\n")
    legacy_old = tmpdir_root / f"{LEGACY_CELL_PREFIX}old"
    legacy_new = tmpdir_root / f"{LEGACY_CELL_PREFIX}new"
    legacy_old.mkdir()
    legacy_new.mkdir()
    os.utime(legacy_old, (time.time() - 2 * 86400,) * 2)
    run_bench(request(suite, tmp_path / "h.duckdb"))
    assert not stale.exists()
    assert not legacy_old.exists()  # a day old: left by a killed run of an older version
    assert legacy_new.exists()  # may belong to a cell running now


@pytest.mark.slow
def test_retry_errors_reruns_only_errored_cells(suite: Path, tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    (suite.parent / "broken").touch()
    first = run_bench(request(suite, db, label="nightly", epochs=2))
    assert first.exit_code == 3
    assert (first.summary.errored, first.summary.passed) == (2, 2)
    (suite.parent / "broken").unlink()
    (suite.parent / "workspaces.txt").unlink()
    again = run_bench(request(suite, db, label="nightly", epochs=2, retry_errors=True))
    assert again.run_id == first.run_id  # the retried cells land in the same run
    assert again.summary.total == 2
    assert again.exit_code == 0
    assert len((suite.parent / "workspaces.txt").read_text().split()) == 2
    latest = rows(db, "SELECT task_id, status FROM v_run_cells ORDER BY cell_key")
    assert latest == [("add", "passed")] * 2 + [("mul", "passed")] * 2
    config = rows(
        db, "SELECT config->>'$.python_grader_timeout_s', config->>'$.seed' FROM bench_runs"
    )
    assert config[0][0] == "30.0"
    assert "epoch" in str(config[0][1])


STATUS_SUITE = """
suite: statuses
defaults: {tools: [calculator], max_iterations: 4}
tasks:
  - id: server-error
    prompt: "2+2?"
    expect: {kind: contains, value: "4"}
    mock: {turns: [{error: {status: 500, message: "boom"}}]}
  - id: auth
    prompt: "2+2?"
    expect: {kind: contains, value: "4"}
    mock: {turns: [{error: {status: 401, message: "bad key"}}]}
  - id: auth-expected
    prompt: "2+2?"
    expect: {kind: finish_reason, value: error_provider_auth}
    mock: {turns: [{error: {status: 401, message: "bad key"}}]}
  - id: spins
    prompt: "2+2?"
    expect: {kind: contains, value: "4"}
    mock:
      turns: [{tool_calls: [{name: calculator, arguments: {expression: "1"}}]}]
      when_exhausted: repeat_last
  - id: wrong
    prompt: "2+2?"
    expect: {kind: contains, value: "4"}
    mock: {turns: [{text: "5"}]}
"""


def test_cell_status_error_only_for_causes_outside_the_model(tmp_path: Path) -> None:
    (tmp_path / "statuses.yaml").write_text(STATUS_SUITE)
    db = tmp_path / "h.duckdb"
    report = run_bench(request(tmp_path / "statuses.yaml", db))
    assert report.exit_code == 3
    got = dict(rows(db, "SELECT task_id, status || ' ' || coalesce(error, '') FROM results"))
    assert got["server-error"].startswith("error error_during_execution")
    assert got["auth"].startswith("error error_provider_auth")
    assert got["auth-expected"] == "passed "  # the task is about the ending: it is scored
    assert got["spins"] == "failed "  # the model's behaviour: graded, not an error
    assert got["wrong"] == "failed "
    assert (report.summary.passed, report.summary.failed, report.summary.errored) == (1, 2, 2)


def test_a_run_that_fails_to_start_leaves_no_run_row(
    plain_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.telemetry._setup as setup

    def broken(**_: object) -> None:
        raise PermissionError(13, "Permission denied", "traces/x.jsonl")

    db = tmp_path / "h.duckdb"
    run_bench(request(plain_suite, db))
    monkeypatch.setattr(setup, "configure_tracing", broken)
    with pytest.raises(ConfigError, match=r"--trace-file .*Permission denied"):
        run_bench(request(plain_suite, db))
    assert rows(db, "SELECT count(*), min(status) FROM bench_runs") == [(1, "finished")]


def test_retry_errors_with_nothing_to_retry_writes_no_run(
    plain_suite: Path, tmp_path: Path
) -> None:
    db = tmp_path / "h.duckdb"
    run_bench(request(plain_suite, db, label="clean"))
    again = run_bench(request(plain_suite, db, label="clean", retry_errors=True))
    assert (again.summary.total, again.exit_code) == (0, 0)
    assert rows(db, "SELECT count(*) FROM bench_runs") == [(1,)]


def test_an_output_folder_made_by_another_run_meanwhile_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs started at once: the other made ``reports/`` between this probe's look and its
    mkdir. That was "cannot write there (File exists ...)", exit 2 (a fresh-clone CI run saw
    it in tests/e2e/test_run_label_lock.py); the folder is used, and left to its maker."""
    real_mkdir = Path.mkdir

    def racing_mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        real_mkdir(self, *args, **kwargs)  # the other run wins the race
        raise FileExistsError(17, "File exists", str(self))

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    check_output_path(tmp_path / "reports" / "harness.duckdb", "--db")
    assert (tmp_path / "reports").is_dir()  # not ours: not removed
    assert not (tmp_path / "reports" / "harness.duckdb").exists()
