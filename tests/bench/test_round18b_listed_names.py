"""Fault found by adversary round 18, part B (issue 34): the pre-flight's "model 'zz' is not
served at ... (it lists: ...)" printed the names a server lists as they were: a name with a
line break (``"m\\nharness: FAKE all good"``) printed a line of its own, in the run's log and
in its summary (ESC was escaped, the line break was not). Fails on d9e0c2e."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.bench.test_live_preflight import _serve

FORGED = "harness: FAKE all good"


def test_a_listed_model_name_with_a_line_break_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = _serve(serves=f"m\n{FORGED}")
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        (tmp_path / "harness.toml").write_text(
            f'[providers.srv]\nkind = "openai"\nbase_url = "{url}"\nstream = false\n'
            "max_retries = 0\n",
            encoding="utf-8",
        )
        (tmp_path / "s.yaml").write_text(
            "suite: s\ntasks:\n  - id: a\n    prompt: p\n    expect: {kind: contains, value: x}\n",
            encoding="utf-8",
        )
        monkeypatch.chdir(tmp_path)
        monkeypatch.delenv("HARNESS_LIVE_PREFLIGHT", raising=False)  # on, as for a user
        done = CliRunner().invoke(
            main,
            ["run", "s.yaml", "--providers", "srv:zz", "--modes", "react", "--db", "h.duckdb",
             "--record-mode", "all", "--no-progress"],
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert done.exit_code == 3, done.output
    assert "is not served at" in done.output
    assert not any(line.startswith(FORGED) for line in done.output.splitlines()), done.output
    assert f"m\\x0a{FORGED}" in done.output
