"""Paths that mislead (adversary round 8, issue 34). Before: ``--db`` or ``--trace-file`` under
a symbolic link that loops, or one that leads nowhere, said ``cannot write there (File exists:
loop1)``; ``report.md`` in ``--out`` being a folder said ``Is a directory
(.../.report.md.el6kz155.tmp)``, naming a temporary file that never was a folder. Now each
names the path in the way and what it is, exit 2. The real CLI runs in this process (click's
runner) on the in-process mock provider."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}\n"  # noqa: E501


def _invoke(args: list[str]) -> tuple[int, str]:
    done = CliRunner().invoke(main, args)
    return done.exit_code, " ".join(done.output.split())


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("flag", ["--db", "--trace-file"])
@pytest.mark.parametrize("link", ["loop", "dangling"])
def test_an_output_under_a_broken_link_names_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, link: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)
    if link == "loop":
        os.symlink("l2", "l1")
        os.symlink("l1", "l2")
        said = "l1 is a symbolic link that loops, not a folder"
    else:
        os.symlink("/nonexistent/folder", "l1")
        said = "l1 is a symbolic link to nothing, not a folder"
    args = ["run", "s.yaml", "--providers", "mock", "--modes", "react", "--no-progress",
            "--db", "h.duckdb"]  # fmt: skip
    args += [flag, "l1/x/out"]
    code, out = _invoke(args)
    assert code == 2, out
    assert said in out


@pytest.mark.timeout(600)
def test_a_folder_at_report_md_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)
    code, out = _invoke(["run", "s.yaml", "--providers", "mock", "--modes", "react",
                         "--no-progress", "--db", "h.duckdb"])  # fmt: skip
    assert code == 0, out
    (tmp_path / "rep" / "report.md").mkdir(parents=True)
    code, out = _invoke(["report", "--db", "h.duckdb", "--out", "rep"])
    assert code == 2, out
    assert "rep/report.md is a directory; cannot write the file there (remove it)" in out
    assert ".tmp" not in out
