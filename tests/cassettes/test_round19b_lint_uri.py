"""Fault found by adversary round 19, part B (issue 34): ``cassettes lint`` read each recorded
``uri`` with ``urlsplit``, which raises on an unclosed IPv6 host: a hostile cassette's
``uri: http://[::1/x`` ended the command with a ``ValueError`` traceback (exit 1), and the
secrets in such a ``uri`` were never looked at. Fails on f4c036f."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harness.cli import main


def test_an_address_urlsplit_refuses_is_linted(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "interactions:\n- request:\n    body: '{}'\n    headers: {}\n    method: POST\n"
        "    uri: 'http://u:SECRETPW@[::1/x?key=SECRETKEY'\n"
        "  response:\n    body: {string: '{}'}\n    headers: {}\n"
        "    status: {code: 200, message: OK}\nversion: 1\n",
        encoding="utf-8",
    )
    done = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path)])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert "url-password" in done.output, done.output
    assert "secret-query" in done.output
    assert done.exit_code == 1  # secrets found
