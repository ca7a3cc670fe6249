"""Faults found by adversary rounds 18 and 19, part B (issue 34), in the pre-flight's "model
'zz' is not served at ... (it lists: ...)": round 18 saw the names a server lists printed as
they were, a name with a line break (``"m\\nharness: FAKE all good"``) a line of its own, in
the run's log and in its summary (ESC was escaped, the line break was not; fails on d9e0c2e);
round 19 saw each name shown whole, so a server listing a name of a megabyte printed two lines
of a megabyte each (fails on f4c036f)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.cli import main
from tests.bench.test_live_preflight import _serve

FORGED = "harness: FAKE all good"


def _listing(serves: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    """``harness run`` asking for model ``zz`` of a loopback server listing ``serves``."""
    server, _ = _serve(serves=serves)
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
        return CliRunner().invoke(
            main,
            ["run", "s.yaml", "--providers", "srv:zz", "--modes", "react", "--db", "h.duckdb",
             "--record-mode", "all", "--no-progress"],
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()


def test_a_listed_model_name_with_a_line_break_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = _listing(f"m\n{FORGED}", tmp_path, monkeypatch)
    assert done.exit_code == 3, done.output
    assert "is not served at" in done.output
    assert not any(line.startswith(FORGED) for line in done.output.splitlines()), done.output
    assert f"m\\x0a{FORGED}" in done.output


def test_a_huge_listed_model_name_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _listing("m" * 1_000_000, tmp_path, monkeypatch)
    assert done.exit_code == 3, done.output[:2000]
    assert "is not served at" in done.output
    assert len(done.output) < 5000, len(done.output)
