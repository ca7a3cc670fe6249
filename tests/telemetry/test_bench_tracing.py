"""Tracing a bench run from the CLI's code path: the root span names the task, message content
follows --capture-content and OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, and `traces
show` lists suite, task, provider and pass and selects by task."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.bench import BenchRequest, run_bench
from harness.cli import main
from harness.telemetry import _conventions as c
from harness.telemetry import configure_tracing, read_spans

ROOT = Path(__file__).resolve().parents[2]


def _bench(tmp: Path, capture: bool | None = None) -> tuple[Path, Path]:
    db = tmp / "h.duckdb"
    report = run_bench(
        BenchRequest(
            suites=[str(ROOT / "suites" / "arithmetic.yaml")],
            modes=("react", "plan_and_solve"),
            providers=("mock",),
            epochs=2,
            tasks=("mul-add", "add-*"),
            db=db,
            capture_content=capture,
            progress=False,
        ),
    )
    assert report.trace_file is not None
    return db, report.trace_file


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _bench(tmp_path_factory.mktemp("bench"))


def test_root_spans_name_the_task(bench: tuple[Path, Path]) -> None:
    spans = read_spans(bench[1])
    roots = [s for s in spans if s.parent_span_id is None]
    assert roots
    for root in roots:
        task = f"{root.attributes['harness.suite']}/{root.attributes['harness.task']}"
        assert root.name == f"invoke_agent {root.attributes['harness.mode']} {task}"
        assert c.INPUT_VALUE in root.attributes  # a local file alone: content captured


def test_traces_show_lists_suite_task_provider_and_pass(bench: tuple[Path, Path]) -> None:
    db, file = bench
    out = CliRunner().invoke(main, ["traces", "show", str(file), "--db", str(db)])
    assert out.exit_code == 0, out.output
    header = next(line for line in out.output.splitlines() if "trace id" in line)
    for column in ("suite", "task", "mode", "provider", "epoch", "finish", "pass"):
        assert column in header
    rows = [line for line in out.output.splitlines() if "arithmetic" in line]
    assert len(rows) > 10
    assert all("mock" in r and "passed" in r for r in rows if "mul-add" in r)
    assert max(len(line) for line in out.output.splitlines()) > 80  # never cut at 80 columns


@pytest.mark.parametrize("run", ["mul-add", "arithmetic/mul-add"])
def test_traces_show_selects_by_task(bench: tuple[Path, Path], run: str) -> None:
    out = CliRunner().invoke(main, ["traces", "show", str(bench[1]), "--run", run])
    assert out.exit_code == 0, out.output
    assert out.output.count("\ntrace ") + out.output.startswith("trace ") == 4  # 2 modes x 2
    assert "arithmetic/mul-add" in out.output
    assert "add-small" not in out.output


def test_no_capture_content_keeps_contents_out_of_the_spans(tmp_path: Path) -> None:
    _, file = _bench(tmp_path, capture=False)
    spans = read_spans(file)
    assert spans
    assert not any(c.INPUT_VALUE in s.attributes for s in spans)


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("false", False)])
def test_the_standard_variable_sets_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", value)
    # With an OTLP endpoint the default is off, with a file alone on: the variable wins.
    for kwargs in ({"file": tmp_path / "a.jsonl"}, {"otlp_endpoint": "http://127.0.0.1:9"}):
        handle = configure_tracing(**kwargs)
        try:
            assert handle.capture_content is expected
        finally:
            handle.shutdown()
    handle = configure_tracing(file=tmp_path / "b.jsonl", capture_content=not expected)
    try:
        assert handle.capture_content is (not expected)  # an explicit choice beats it
    finally:
        handle.shutdown()


def test_every_cell_root_span_carries_its_verdict(tmp_path: Path) -> None:
    """The runner records each cell's verdict on its root span (held until graded): status,
    passed, score, grader kind, and the gen_ai.evaluation.result event."""
    import duckdb

    suite = tmp_path / "two.yaml"
    suite.write_text(
        "suite: two\n"
        "tasks:\n"
        "  - {id: right, prompt: 'Say hi', tools: [], expect: {kind: contains, value: hi},\n"
        "     mock: {turns: [{text: 'hi there'}]}}\n"
        "  - {id: wrong, prompt: 'Say hi', tools: [], expect: {kind: contains, value: hi},\n"
        "     mock: {turns: [{text: 'bye'}]}}\n"
    )
    db = tmp_path / "h.duckdb"
    run_bench(BenchRequest(suites=[str(suite)], db=db, progress=False))
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT json_extract_string(attributes, '$.\"harness.task\"'), "
            "json_extract_string(attributes, '$.\"harness.cell.status\"'), "
            "json_extract_string(attributes, '$.\"harness.grader.kind\"'), events "
            "FROM spans WHERE parent_span_id IS NULL ORDER BY 1"
        ).fetchall()
    assert [(task, status, kind) for task, status, kind, _ in rows] == [
        ("right", "passed", "contains"),
        ("wrong", "failed", "contains"),
    ]
    assert all("gen_ai.evaluation.result" in str(events) for *_, events in rows)
