"""A base_url httpx cannot use (adversary round 11 part A, issue 34 item 9): a control
character in ``provider_opts`` or a profile's ``base_url`` left ``harness.run`` with httpx's own
``InvalidURL`` (no HarnessError) and made every cell of ``harness run`` an error cell (exit 3)
instead of bad input. It is now a ConfigError naming the field, before any call."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import harness
from harness.cli import main
from harness.errors import ConfigError


def test_a_base_url_with_a_control_character_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    opts = {"base_url": "http://127.0.0.1:9/\x1b[31mv1"}
    with pytest.raises(ConfigError, match=r"base_url .* is no usable address"):
        harness.run("hi", provider="openai:gpt-x", provider_opts=opts)


@pytest.mark.timeout(600)
def test_a_profile_base_url_with_a_control_character_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "harness.toml").write_text(
        '[providers.lp]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/\\u001b[31m"\n'
        'model = "m"\n'
    )
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}}\n"
    )
    args = ["run", "s.yaml", "--modes", "react", "--providers", "lp", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert "Traceback" not in done.output
    assert "\x1b" not in done.output
    assert done.exit_code == 2, done.output  # before: an error cell, exit 3
    assert "is no usable address" in done.output  # at load, before any cell
