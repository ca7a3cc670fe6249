"""Model text with terminal control and bidi characters is shown escaped on the viewer's pages
(``\\x1b``, ``\\u202e``), as in the reports and the CLI (adversary round 4: the run page's
tooltips and the cell page held raw ESC, C1 and U+202E, which can reverse what a reader sees)."""

from __future__ import annotations

from pathlib import Path

from harness.bench import BenchRequest, run_bench

REPLY = "re\u202ed \x1b[2J\x00nul \x9b31m <b>bold</b> \u2028end"
RAW = ("\x1b", "\x00", "\x9b", "\u202e", "\u2028")


def test_pages_show_control_characters_escaped(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from harness.view import ViewConfig, create_app

    suite = tmp_path / "odd.yaml"
    suite.write_text(
        "suite: odd\ntasks:\n  - id: t1\n    prompt: say it\n"
        "    expect: {kind: contains, value: never-there}\n"
        f"    mock:\n      turns:\n        - text: {REPLY!r}\n".replace("'", '"'),
        encoding="utf-8",
    )
    db = tmp_path / "h.duckdb"
    report = run_bench(
        BenchRequest(suites=[str(suite)], modes=("react",), providers=("mock",), db=db,
                     cassettes=tmp_path / "cassettes", progress=False)
    )  # fmt: skip
    client = TestClient(create_app(ViewConfig(db)), base_url="http://127.0.0.1")
    run = client.get(f"/runs/{report.run_id}?answers=1")
    assert run.status_code == 200
    key = next(iter(report.per_cell))
    cell = client.get(f"/runs/{report.run_id}/cell", params={"key": key})
    assert cell.status_code == 200
    for page in (run.text, cell.text):
        assert not [c for c in RAW if c in page], [hex(ord(c)) for c in RAW if c in page]
    assert "\\x1b[2J" in cell.text
    assert "\\u202e" in cell.text
    assert "&lt;b&gt;bold&lt;/b&gt;" in cell.text  # still HTML-escaped too
