"""A stored run and copies of it edited by hand: the common part of the tests of databases
changed under the harness (adversary rounds 12 and 13, part B)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
from click.testing import CliRunner

from harness.cli import main

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


def store_two_cells(folder: Path) -> Path:
    """``folder`` holding a database of one run of two cells, and its baseline."""
    done = CliRunner().invoke(main, ["run", str(SUITE), "--providers", "mock", "--modes",
                                     "react", "--db", str(folder / "h.duckdb"), "--no-progress",
                                     "--tasks", "add-small,add-doubles"])  # fmt: skip
    assert done.exit_code == 0, done.output
    saved = CliRunner().invoke(main, ["baseline", "save", "--db", str(folder / "h.duckdb"),
                                      "-o", str(folder / "baseline.json")])  # fmt: skip
    assert saved.exit_code == 0, saved.output
    return folder


def edited(stored: Path, tmp_path: Path, *statements: str) -> Path:
    """A copy of the stored database (and its runs folder) with ``statements`` run on it."""
    shutil.copytree(stored, tmp_path, dirs_exist_ok=True)
    db = tmp_path / "h.duckdb"
    con = duckdb.connect(str(db))
    try:
        for sql in statements:
            con.execute(sql)
    finally:
        con.close()
    return db


def said(args: list[str], code: int) -> str:
    """The output of the CLI run in this process with ``args``: exit ``code``, no traceback."""
    result = CliRunner().invoke(main, args)
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output
