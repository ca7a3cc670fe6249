"""A plug-in reference whose file is a FIFO (noted in round 9, issue 34): Python's import
passes over a FIFO, so ``--modes pkg:Mode`` with ``pkg/__init__.py`` a FIFO imported the
folder as an empty namespace package and said only ``module 'pkg' has no attribute 'Mode'``,
and ``--modes mm:Mode`` with ``mm.py`` a FIFO said ``No module named 'mm'``. Both now name the
file and what it is, exit 2, before any cell; nothing blocks on the FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("fifo", "reference", "said"),
    [("fifopkg/__init__.py", "fifopkg:Mode", "has no attribute 'Mode' (from 'fifopkg:Mode'): "),
     ("fifomod.py", "fifomod:Mode", "cannot import 'fifomod' for 'fifomod:Mode': ")],
)  # fmt: skip
def test_a_plug_in_whose_file_is_a_fifo_is_named_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fifo: str, reference: str, said: str
) -> None:
    (tmp_path / fifo).parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / fifo)
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", reference, "--providers", "mock", "--db", "h.duckdb"]
    done = CliRunner().invoke(main, [*args, "--no-progress"])
    flat = " ".join(done.output.split())
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output
    assert said in flat, flat
    assert f"{fifo} is a FIFO, not a regular file; refused" in flat, flat
    assert not (tmp_path / "h.duckdb").exists()  # before any cell
