"""Faults found by adversary round 17, part B (issue 34), past round 16's ``usable_url``: an
address in ``$OPENAI_BASE_URL`` was never checked, and when httpx refused it the error named
the profile's own ``https://api.openai.com/v1``; an address without http(s)://, without a host,
or with a host IDNA refuses (``xn--zz.com``) passed ``suites validate`` and ``--provider-opt``
and failed each call ("unexpected stream shape (IDNAError: Invalid A-label)", or a pre-flight
"not reachable ... run the same command again"). Each test fails on 9919cbe."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from test_round18b_urls import _run

from harness.cli import main
from harness.providers._profiles import usable_url

_SUITE = "suite: s\ntasks:\n  - id: a\n    prompt: p\n    expect: {kind: contains, value: '4'}\n"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://[::1/v1", "Invalid port"),
        ("http://xn--zz.com/v1", "Invalid A-label"),
        ("127.0.0.1:18999/v1", "must begin with http:// or https://"),
        ("http:///v1", "names no host"),
        ("ftp://127.0.0.1/v1", "must begin with http:// or https://"),
    ],
)
def test_an_unusable_base_url_from_the_environment_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, why: str
) -> None:
    code, output = _run(tmp_path, monkeypatch, url, via="env")
    assert code == 2, output
    assert f"$OPENAI_BASE_URL {url!a} is no usable address" in output
    assert why in output
    assert "api.openai.com" not in output


@pytest.mark.parametrize("url", ["http://xn--zz.com/v1", "ftp://h/v1", "http:///v1"])
def test_an_unusable_base_url_is_refused_where_it_is_read(url: str) -> None:
    with pytest.raises(ValueError, match="no usable address"):
        usable_url(url)


def test_usable_addresses_are_kept() -> None:
    for url in ("http://[::1]:18001/v1", "https://üñí.example/v1", "127.0.0.1:11434", None):
        assert usable_url(url) == url


def test_a_password_in_the_address_is_not_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the pre-flight's "not reachable at http://u:s3cret@127.0.0.1:18997/v1", and a
    cell's error (printed, and stored in results.error) held the password."""
    (tmp_path / "s.yaml").write_text(_SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    done = CliRunner().invoke(
        main,
        ["run", "s.yaml", "--providers", "openai:m", "--modes", "react", "--db", "h.duckdb",
         "--record-mode", "all", "--no-progress", "--provider-opt",
         'openai.base_url="http://u:s3cret@127.0.0.1:18997/v1"'],
    )  # fmt: skip
    assert "http://u:***@127.0.0.1:18997/v1" in done.output, done.output
    assert "s3cret" not in done.output
    if (tmp_path / "h.duckdb").exists():  # the cell's error, when the cell ran
        with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
            errors = con.execute("SELECT string_agg(error, ' ') FROM results").fetchone()
        assert "s3cret" not in str(errors)
