"""Inputs a hostile user hands the CLI (adversary round 8, issue 34).

Before: a suite holding a NUL byte (or any character YAML refuses, an ESC in a comment) gave a
``yaml.reader.ReaderError`` traceback and exit 1 from ``suites validate`` and ``run``; and no
input had a size bound, so a 1 GB sparse file given as a suite, a baseline, ``harness.toml`` or
an ``examples_file`` was read whole (2.1-2.3 GB held, 6-13 s) only to fail on its first byte.
Now each is one line naming the file, exit 2, and the size is checked before anything is read.
The real CLI runs in this process (click's runner); the big files are sparse (no disk used).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness._files import MAX_INPUT_BYTES
from harness.cli import main
from harness.report._baseline import MAX_BASELINE_BYTES

SUITE = "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}}\n"


def _invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, args)
    return done.exit_code, " ".join(done.output.split())


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("character", ["\x00", "\x1b"])
def test_a_suite_with_a_character_yaml_refuses_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, character: str
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE + f"# a comment {character} here\n")
    args = ["suites", "validate", "s.yaml"] if command == "validate" else [
        "run", "s.yaml", "--providers", "mock", "--db", "h.duckdb", "--no-progress"]  # fmt: skip
    code, out = _invoke(tmp_path, monkeypatch, args)
    assert code == 2, out
    assert "Traceback" not in out
    assert f"s.yaml:4:13: invalid YAML: character #x{ord(character):04x} is not allowed" in out


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as f:
        f.truncate(size)


BIG = {
    "suite": ("s.yaml", MAX_INPUT_BYTES, ["suites", "validate", "s.yaml"]),
    "harness.toml": ("harness.toml", MAX_INPUT_BYTES,
                     ["run", "s.yaml", "--providers", "x", "--db", "h.duckdb", "--no-progress"]),
    "examples_file": ("shots.yaml", MAX_INPUT_BYTES,
                      ["run", "s.yaml", "--providers", "x", "--db", "h.duckdb", "--no-progress"]),
    "baseline": ("base.json", MAX_BASELINE_BYTES, ["gate", "--db", "h.duckdb", "--baseline",
                                                   "base.json"]),
}  # fmt: skip


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", sorted(BIG))
def test_an_input_past_its_size_bound_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    name, bound, args = BIG[case]
    (tmp_path / "s.yaml").write_text(SUITE)
    if case == "examples_file":
        (tmp_path / "harness.toml").write_text(
            '[providers.x]\nkind = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'examples_file = "shots.yaml"\n'
        )
    _sparse(tmp_path / name, bound + 1)
    code, out = _invoke(tmp_path, monkeypatch, args)
    assert code == 2, out
    assert "Traceback" not in out
    assert f"is larger than {bound:,} bytes" in out
