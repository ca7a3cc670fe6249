"""Paths a hostile user (or a careless one) hands the harness (adversary round 5, issue 34
items 10-14 and 18): links planted where the harness writes, FIFOs where it reads, hostile
baseline files, names that are not UTF-8, a full disk under a report, and a trace URL that is no
web address. Each ends in a one-line error and exit 2 (bad input) or 3 (disk full), never a
traceback, a hang, or a file written through a link."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.store._labels import label_lock_path
from tests import suite_files

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real subprocesses, on a busy machine


def _run_args(tmp_path: Path, *extra: str) -> list[str]:
    suite = suite_files.latency_suite(tmp_path, 2, 0.0)
    return ["run", str(suite), "--providers", "mock", "--modes", "react", "--no-progress",
            "--db", str(tmp_path / "h.duckdb"), "--trace-file", str(tmp_path / "t.jsonl"),
            *extra]  # fmt: skip


def test_a_symlink_at_a_label_lock_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """Round 5: a link at ``runs/_labels/<label>-<digest>.lock`` was followed and its target
    truncated to 0 bytes."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    lock = label_lock_path(tmp_path / "runs", "L")
    lock.parent.mkdir(parents=True)
    lock.symlink_to(victim)
    result = CliRunner().invoke(main, _run_args(tmp_path, "--label", "L"))
    assert result.exit_code == 2, result.output
    assert "symbolic link" in " ".join(result.stderr.split())
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert victim.read_text() == "keep me\n"


def _harness(tmp_path: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The real ``harness`` in a subprocess (a hang fails the test at ``timeout``)."""
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], cwd=tmp_path, capture_output=True,
        text=True, timeout=timeout, env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with one run of two mock cells."""
    folder = tmp_path_factory.mktemp("stored")
    result = CliRunner().invoke(main, _run_args(folder))
    assert result.exit_code == 0, result.output
    return folder / "h.duckdb"


def _baseline_doc(**cell: object) -> str:
    from harness.report._baseline import BASELINE_FORMAT, BASELINE_VERSION

    base = {"suite": "latency", "task_id": "t0", "mode": "react", "provider": "mock",
            "epoch": 0, "passed": True, "cost_usd": 0.0}  # fmt: skip
    doc = {"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "cells": [{**base, **cell}]}
    return json.dumps(doc)


def _with_cost(raw: str) -> str:
    return _baseline_doc(cost_usd=0).replace('"cost_usd": 0', f'"cost_usd": {raw}')


HOSTILE_BASELINES = {
    "huge-integer-cost": (_with_cost("1" + "0" * 400), "not a cost"),
    "minus-infinity": (_with_cost("-Infinity"), "-Infinity is not a number"),
    "nan": (_with_cost("NaN"), "NaN is not a number"),
    "deep": ('{"cells": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested too deeply"),
}


@pytest.mark.parametrize("command", ["gate", "report"])
@pytest.mark.parametrize("case", sorted(HOSTILE_BASELINES))
def test_a_hostile_baseline_is_bad_input(
    tmp_path: Path, stored: Path, command: str, case: str
) -> None:
    """Round 5: a 400-digit integer cost and -Infinity costs raised OverflowError, 200,000-deep
    nesting RecursionError (tracebacks, exit 1), NaN costs were taken silently."""
    text, said = HOSTILE_BASELINES[case]
    path = tmp_path / "base.json"
    path.write_text(text)
    args = [command, "--db", str(stored), "--baseline", str(path)]
    if command == "report":
        args += ["--out", str(tmp_path / "rep")]
    done = _harness(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert said in done.stderr


@pytest.mark.parametrize("command", ["gate", "report"])
def test_a_fifo_as_baseline_is_refused_at_once(tmp_path: Path, stored: Path, command: str) -> None:
    """Round 5: a FIFO as ``--baseline`` hung until killed."""
    fifo = tmp_path / "base.json"
    os.mkfifo(fifo)
    args = [command, "--db", str(stored), "--baseline", str(fifo)]
    if command == "report":
        args += ["--out", str(tmp_path / "rep")]
    done = _harness(tmp_path, *args, timeout=600)
    assert done.returncode == 2, done.stderr
    assert "is a FIFO, not a regular file" in " ".join(done.stderr.split())  # lines wrap


def test_a_fifo_as_examples_file_is_refused_at_once(tmp_path: Path) -> None:
    """Round 5: a profile's ``examples_file`` that is a FIFO hung ``harness run`` silently."""
    os.mkfifo(tmp_path / "shots.yaml")
    (tmp_path / "harness.toml").write_text(
        '[providers.tiny]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\nexamples_file = "shots.yaml"\n'
    )
    suite = suite_files.latency_suite(tmp_path, 1, 0.0)
    done = _harness(tmp_path, "run", str(suite), "--providers", "tiny", "--modes", "react",
                    "--db", "h.duckdb", "--trace-file", "t.jsonl", "--no-progress",
                    timeout=600)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "shots.yaml is a FIFO, not a regular file" in " ".join(done.stderr.split())


@pytest.mark.parametrize("what", ["label", "suite", "db"])
def test_names_that_are_not_utf8_are_bad_input(tmp_path: Path, what: str) -> None:
    """Round 5: a ``--label``, suite file name or ``--db`` path of bytes that are not UTF-8 gave
    a DuckDB traceback (exit 1)."""
    bad = b"x\xff"
    suite = suite_files.latency_suite(tmp_path, 1, 0.0)
    db = tmp_path / "h.duckdb"
    args = [os.fsencode(suite), b"--label", b"L"]
    if what == "label":
        args[2] = bad
    elif what == "suite":
        args[0] = os.fsencode(suite.rename(suite.with_name(os.fsdecode(bad + b".yaml"))))
    else:
        (tmp_path / os.fsdecode(bad)).mkdir()
        db = tmp_path / os.fsdecode(bad) / "h.duckdb"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "--providers", "mock", "--modes",
         "react", "--no-progress", "--db", os.fsencode(db), "--trace-file", "t.jsonl"],
        cwd=tmp_path, capture_output=True, timeout=120, env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err
    assert "not valid UTF-8" in err


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)//{trace_id}", "data:text/html,{trace_id}", "http:///{trace_id}"]
)
def test_a_trace_url_that_is_no_web_address_is_refused(
    tmp_path: Path, stored: Path, url: str
) -> None:
    """Round 5: ``--trace-url 'javascript:alert(1)//{trace_id}'`` was rendered as a link."""
    from harness.view._app import trace_url_problem

    done = _harness(tmp_path, "view", "--db", str(stored), "--port", "0", "--trace-url", url,
                    timeout=600)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "only http:// and https:// addresses" in done.stderr
    assert trace_url_problem(url) is not None
    assert trace_url_problem("https://jaeger.example/trace/{trace_id}") is None


def _in_small_tmpfs(folder: Path, size: int, *argv: str) -> subprocess.CompletedProcess[str]:
    """``harness ARGV`` with a real tmpfs of ``size`` bytes mounted at ``folder`` (by bwrap)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("needs bwrap for a real small tmpfs")
    folder.mkdir(exist_ok=True)
    return subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--size", str(size), "--tmpfs", str(folder), "--",
         sys.executable, "-m", "harness.cli", *argv],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "COLUMNS": "300", "HARNESS_DISK_FULL_WAIT_S": "1"},
    )  # fmt: skip


def test_a_report_onto_a_full_disk_exits_3_and_leaves_no_half_file(
    tmp_path: Path, stored: Path
) -> None:
    """Round 5: ``harness report`` onto a full disk left a 4,096-byte ``report.html`` and a
    traceback."""
    mnt = tmp_path / "mnt"
    done = _in_small_tmpfs(mnt, 8192, "report", "--db", str(stored), "--out", str(mnt / "r"),
                           "--format", "md,html,json")  # fmt: skip
    # (the tmpfs is gone with bwrap; what it held is checked through what harness said)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "the disk is full" in done.stderr


def test_a_fresh_db_on_a_nearly_full_disk_exits_3(tmp_path: Path) -> None:
    """Round 5: a fresh ``--db`` on a nearly full disk gave ``CatalogException`` (exit 1): the
    tables stayed in a write-ahead log that was removed."""
    suite = suite_files.latency_suite(tmp_path, 1, 0.0)
    mnt = tmp_path / "mnt"
    done = _in_small_tmpfs(mnt, 400_000, "run", str(suite), "--providers", "mock", "--modes",
                           "react", "--no-progress", "--db", str(mnt / "h.duckdb"),
                           "--trace-file", str(tmp_path / "t.jsonl"))  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "No space left on device" in " ".join(done.stderr.split())


def test_a_mock_profile_runs_the_tasks_mock_script(tmp_path: Path) -> None:
    """Round 5: a ``kind = "mock"`` profile in ``harness.toml`` failed every cell ("unknown keys
    for the mock provider: ['transport']")."""
    (tmp_path / "harness.toml").write_text('[providers.fake]\nkind = "mock"\n')
    suite = suite_files.latency_suite(tmp_path, 2, 0.0)
    done = _harness(tmp_path, "run", str(suite), "--providers", "fake", "--modes", "react",
                    "--db", "h.duckdb", "--trace-file", "t.jsonl", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2/2 cells, 2 passed" in done.stderr
