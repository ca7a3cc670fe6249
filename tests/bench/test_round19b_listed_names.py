"""Fault found by adversary round 19, part B (issue 34), past round 18's escaping of the model
names a server lists: each name was shown whole, so a hostile server listing a name of a
megabyte printed two lines of a megabyte each (the pre-flight's warning and the run's
summary). Fails on f4c036f."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.bench.test_live_preflight import _serve


def test_a_huge_listed_model_name_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, _ = _serve(serves="m" * 1_000_000)
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
    assert done.exit_code == 3, done.output[:2000]
    assert "is not served at" in done.output
    assert len(done.output) < 5000, len(done.output)
