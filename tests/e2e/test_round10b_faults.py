"""Faults found by adversary round 10, part B (issue 34), through the real CLI: click's runner
in this process, or a subprocess where a stream is the point. Each test fails on the code
before the round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.cli import main
from harness.view._app import trace_url_problem

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


def _invoke(args: list[str]) -> tuple[Result, str]:
    done = CliRunner().invoke(main, args)
    return done, " ".join(done.output.split())


def _run(db: Path, *extra: str) -> tuple[Result, str]:
    return _invoke(["run", str(SUITE), "--providers", "mock", "--modes", "react", "--db",
                    str(db), "--no-progress", "--tasks", "add-small", *extra])  # fmt: skip


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one run of one cell, and its baseline beside it."""
    folder = tmp_path_factory.mktemp("stored")
    done, out = _run(folder / "h.duckdb")
    assert done.exit_code == 0, out
    done, out = _invoke(["baseline", "save", "--db", str(folder / "h.duckdb"), "-o",
                         str(folder / "b.json")])  # fmt: skip
    assert done.exit_code == 0, out
    return folder


@pytest.mark.parametrize("planted", ["schema link", "labels file", "labels fifo"])
def test_a_link_or_a_file_at_the_harnesss_own_folders_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    """Before: a symbolic link at ``runs/_schema`` was followed (the schema shards were written
    into the folder it named, outside), and a file or a FIFO at ``runs/_labels`` gave a
    ``FileExistsError`` traceback, exit 1. Now each is refused, naming what is there, exit 2."""
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "runs").mkdir()
    if planted == "schema link":
        (tmp_path / "runs" / "_schema").symlink_to(outside)
    elif planted == "labels file":
        (tmp_path / "runs" / "_labels").write_text("x")
    else:
        os.mkfifo(tmp_path / "runs" / "_labels")
    done, out = _run(tmp_path / "h.duckdb", "--label", "L")
    assert done.exit_code == 2, (out, done.exception)
    what = {"schema link": "_schema is a symbolic link to a directory",
            "labels file": "_labels is a regular file",
            "labels fifo": "_labels is a FIFO"}  # fmt: skip
    assert f"{what[planted]}, not a folder; refused (remove it)" in out
    assert list(outside.iterdir()) == []


def test_baseline_save_into_a_fifo_with_a_reader_writes_the_stream(stored: Path) -> None:
    """Before: ``-o`` naming a FIFO (or a device, or ``/dev/stdout``) had a regular file renamed
    over it: the FIFO's reader got nothing and waited forever, and as root ``-o /dev/full``
    replaced the device itself. Now such an output is written into, as ``--trace-file`` is."""
    fifo = stored / "pipe.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there before the writer
    try:
        done, out = _invoke(["baseline", "save", "--db", str(stored / "h.duckdb"), "-o",
                             str(fifo)])  # fmt: skip
        os.set_blocking(reader, True)
        with os.fdopen(os.dup(reader), "rb") as f:  # one cell: far less than a pipe holds
            got = f.read()
    finally:
        os.close(reader)
    assert done.exit_code == 0, out
    assert fifo.is_fifo()  # before: a regular file
    assert json.loads(got)["format"] == "harness-baseline"


def test_baseline_save_to_a_link_to_standard_output_prints_the_json(stored: Path) -> None:
    link = stored / "out.json"
    link.symlink_to("/proc/self/fd/1")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "baseline", "save", "--db",
         str(stored / "h.duckdb"), "-o", str(link)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert link.is_symlink()  # before: replaced by a file, and nothing on standard output
    assert json.loads(done.stdout)["format"] == "harness-baseline"  # the note is on stderr
    assert "wrote" in done.stderr


def _baseline(stored: Path, name: str, cells: list[dict[str, object]]) -> Path:
    doc = json.loads((stored / "b.json").read_text())
    doc["cells"] = cells
    path = stored / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("command", ["gate", "report"])
@pytest.mark.parametrize(
    ("case", "said"),
    [("twice", "cells[1]: the same cell as cells[0] (arithmetic/add-small [react, mock, e0]); "
      "give each cell once"),
     ("task dict", "cells[0].task_id: expected a name (text)"),
     ("provider true", "cells[0].provider: expected a name (text)")],
)  # fmt: skip
def test_a_baseline_giving_a_cell_twice_or_a_name_not_text_is_bad_input(
    stored: Path, tmp_path: Path, command: str, case: str, said: str
) -> None:
    """Before: a baseline listing one cell twice (passed, then failed) was read with the last
    one, silently (the baseline's pass rate 0 %, where a reviewer reads 100 %), and a task id
    that was an object or a provider that was ``true`` was taken and shown as ``True``. Now
    both are refused, exit 2."""
    cell = json.loads((stored / "b.json").read_text())["cells"][0]
    cells = {"twice": [cell, {**cell, "passed": False}],
             "task dict": [{**cell, "task_id": {"a": 1}}],
             "provider true": [{**cell, "provider": True}]}[case]  # fmt: skip
    path = _baseline(stored, f"{case}.json".replace(" ", "_"), cells)
    args = ["gate"] if command == "gate" else ["report", "--out", str(tmp_path / "r")]
    done, out = _invoke([*args, "--db", str(stored / "h.duckdb"), "--baseline", str(path)])
    assert done.exit_code == 2, (out, done.exception)
    assert said in out


@pytest.mark.parametrize(
    ("text", "said"),
    [("tool = 5\n", "[tool] must be a table"),
     ('[tool]\nharness = "x"\n', "[tool.harness] must be a table"),
     ("[tool.harness.gate]\nmax-cost-increase = 0.5\nmax_cost_increase = 100.0\n",
      "'max_cost_increase' is 'max-cost-increase' again; give it once")],
)  # fmt: skip
def test_a_pyproject_whose_gate_section_cannot_be_read_is_bad_input(
    stored: Path, tmp_path: Path, text: str, said: str
) -> None:
    """Before: ``tool = 5`` (or ``[tool] harness = "x"``) in the pyproject.toml the gate reads
    gave an ``AttributeError`` traceback, exit 1; a threshold given twice (with ``-`` and with
    ``_``) was read with the last one, silently. Now each is refused, exit 2."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(text)
    done, out = _invoke(["gate", "--db", str(stored / "h.duckdb"), "--baseline",
                         str(stored / "b.json"), "--pyproject", str(pyproject)])  # fmt: skip
    assert done.exit_code == 2, (out, done.exception)
    assert said in out


@pytest.mark.parametrize("odd", ["fifo", "dangling", "loop"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_suite_folder_entry_that_is_no_file_is_named_not_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str, command: str
) -> None:
    """Before: in a folder of suites, a ``*.yaml`` that was a FIFO, a link to nothing or a link
    that loops was passed over without a word: ``validate`` said OK, ``run`` ran the other
    suites and the gate then listed that suite's baseline cells as not requested (not
    missing). Now it is named, exit 2."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "a.yaml").write_text(SUITE.read_text())
    odd_path = folder / "zz.yaml"
    if odd == "fifo":
        os.mkfifo(odd_path)
    else:
        odd_path.symlink_to("zz.yaml" if odd == "loop" else "gone.yaml")
    args = ["suites", "validate", "suites"] if command == "validate" else [
        "run", "suites", "--providers", "mock", "--db", "h.duckdb", "--no-progress"]  # fmt: skip
    done, out = _invoke(args)
    assert done.exit_code == 2, (out, done.exception)
    what = {"fifo": "a FIFO", "dangling": "a symbolic link to nothing",
            "loop": "a symbolic link that loops"}[odd]  # fmt: skip
    assert f"suites/zz.yaml: is {what}, not a suite file" in out


def test_a_fifo_named_as_a_suite_is_said_to_be_one(tmp_path: Path) -> None:
    """Before: ``no such file or directory`` for a FIFO (or ``/dev/zero``) that is there."""
    os.mkfifo(tmp_path / "s.yaml")
    done, out = _invoke(["suites", "validate", str(tmp_path / "s.yaml")])
    assert done.exit_code == 2
    assert "s.yaml: is a FIFO, not a suite file" in out


@pytest.mark.parametrize("command", ["report", "gate", "baseline"])
def test_a_run_id_that_is_not_utf8_names_no_run(stored: Path, command: str) -> None:
    """Before: ``--run`` from bytes that are not UTF-8 (a surrogate in Python's view) reached
    DuckDB: ``InvalidInputException`` traceback, exit 1. Now: no such run, exit 2."""
    args = {"report": ["report", "--out", str(stored / "r")],
            "gate": ["gate", "--baseline", str(stored / "b.json")],
            "baseline": ["baseline", "save", "-o", str(stored / "x.json")]}[command]  # fmt: skip
    done, out = _invoke([*args, "--db", str(stored / "h.duckdb"), "--run", "x\udcff"])
    assert done.exit_code == 2, (out, done.exception)
    assert "no run 'x\\udcff' in the database" in out


def test_a_trace_url_that_is_not_utf8_is_refused() -> None:
    """Before: accepted, and each cell's link rendered as ``https://t.example/\\udcff...`` (a
    backslash, which browsers read as a slash: another path)."""
    problem = trace_url_problem("https://t.example/\udcff{trace_id}")
    assert problem is not None
    assert "not valid UTF-8" in problem


def test_a_profile_name_holding_a_colon_is_refused_as_it_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: ``[providers."m:1"]`` was listed among the known providers but ``--providers
    m:1`` reads NAME:MODEL, so it could never be named: "unknown provider 'm' in 'm:1'.
    Known: ..., m:1, ..."."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "harness.toml").write_text('[providers."m:1"]\nkind = "mock"\n')
    done, out = _invoke(["run", str(SUITE), "--providers", "m:1", "--db", "h.duckdb",
                         "--no-progress", "--tasks", "add-small"])  # fmt: skip
    assert done.exit_code == 2, out
    assert "[providers.m:1]: a profile name cannot hold ':' or ','" in out


def _span(span_id: str, parent: str, **fields: object) -> str:
    span = {"traceId": "a" * 32, "spanId": span_id, "parentSpanId": parent, "name": "s",
            "kind": 1, "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [],
            "status": {"code": 0}, **fields}  # fmt: skip
    return json.dumps(span) + "\n"


@pytest.mark.parametrize("case", ["chain", "deep line", "types", "cycle"])
def test_traces_show_of_a_hostile_span_file_ends_in_a_line_not_a_traceback(
    tmp_path: Path, case: str
) -> None:
    """Before: ``traces show`` of spans nested 100,000 deep (each the child of the one before)
    or of a JSON line 100,000 deep gave a ``RecursionError`` traceback, and a span whose start
    time was ``"x"`` a ``ValueError`` one (exit 1); spans whose parents made a cycle were left
    out of the tree without a word. Now the tree stops at MAX_DEPTH levels and counts the rest,
    a line that is no span is skipped with a warning, and every span is shown."""
    path = tmp_path / "spans.jsonl"
    if case == "chain":
        path.write_text(_span("0" * 16, "") + "".join(
            _span(f"{i:016x}", f"{i - 1:016x}") for i in range(1, 100_000)))  # fmt: skip
    elif case == "deep line":
        path.write_text(
            '{"traceId": ' + "[" * 100_000 + "]" * 100_000 + "}\n" + _span("1" * 16, "")
        )
    elif case == "types":
        path.write_text(_span("1" * 16, "", startTimeUnixNano="x") + _span("2" * 16, ""))
    else:
        path.write_text(
            _span("1" * 16, "2" * 16, name="one") + _span("2" * 16, "1" * 16, name="two")
        )
    done, out = _invoke(["traces", "show", str(path)])
    assert done.exit_code == 0, (out, done.exception)
    said = {"chain": "[... 99936 spans nested deeper not shown]", "deep line": "1 spans",
            "types": "1 spans", "cycle": "two"}[case]  # fmt: skip
    assert said in out
    if case == "cycle":
        assert "one" in out


def test_cassettes_coverage_that_judged_nothing_says_so(tmp_path: Path) -> None:
    """Before: a folder whose cassettes were all corrupt (or held no system message) printed
    nothing and exited 0, as if every recorded server had passed."""
    folder = tmp_path / "cassettes" / "s" / "lb" / "react"
    folder.mkdir(parents=True)
    (folder / "t1.e0.yaml").write_text("interactions: " + "[" * 1000 + "]" * 1000 + "\n")
    done, out = _invoke(["cassettes", "coverage", str(tmp_path / "cassettes")])
    assert done.exit_code == 0
    assert "has a system message long enough to judge: nothing checked" in out
