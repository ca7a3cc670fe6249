"""An input whose size ``stat`` does not tell (adversary round 9, issue 34). The real CLI runs
in this process (click's runner)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import harness.suites._load as load
from harness.cli import main


def test_an_input_whose_size_stat_does_not_tell_is_bounded_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the size bound on inputs (suites, profiles, baselines) was checked with
    ``stat`` only, and then the file was read whole: a file in ``/proc`` (0 bytes by
    ``stat``, however much it holds) or one growing while read passed it. Now what is read
    is bounded too: ``suites validate /proc/self/maps`` with the bound at 100 bytes is
    refused, exit 2."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(load, "MAX_INPUT_BYTES", 100)
    done = CliRunner().invoke(main, ["suites", "validate", "/proc/self/maps"])
    out = " ".join(done.output.split())
    assert done.exit_code == 2, out
    assert "/proc/self/maps is larger than 100 bytes" in out


@pytest.mark.timeout(600)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_suite_of_flow_lists_100000_deep_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Before: ``tasks: [[[[...]]]]`` 100,000 deep was refused by libyaml's own bound with a
    message the suite loader took for a plain syntax error, so it went on to PyYAML's
    recursive composer: a ``RecursionError`` traceback, exit 1. Now the nesting bound's
    message, exit 2 (block nesting was refused at 100 levels already)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("suite: s\ntasks: " + "[" * 100_000 + "]" * 100_000 + "\n")
    args = ["suites", "validate", "s.yaml"] if command == "validate" else [
        "run", "s.yaml", "--providers", "mock", "--db", "h.duckdb", "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    out = " ".join(done.output.split())
    assert done.exit_code == 2, (out, done.exception)
    assert "s.yaml:2" in out
    assert "nested more than 100 levels deep; refused" in out
