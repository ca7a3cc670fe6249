"""Faults found by adversary round 18, part B (issue 34), past round 17's password masking
and ``url_problem``: a password holding ``@`` (httpx splits at the last one) showed its end
(``http://u:***@SECRETPW@...``); a token given as the user, a key in the query, and the
address in the message refusing it (``port 99999``, an unencoded ``/``) showed all of it; every
recorded cassette stored the password in its ``uri``; and a ``base_url`` with a query
(``?api-version=1``) passed, then each request went to ``/v1`` with its path in the query
(``no such path /v1?api-version=1/chat/completions``). Each test fails on d9e0c2e."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

from harness.cassettes._lint import lint_file
from harness.cassettes._store import Scrubber
from harness.cli import main
from harness.providers._profiles import usable_url

_SUITE = "suite: s\ntasks:\n  - id: a\n    prompt: p\n    expect: {kind: contains, value: '4'}\n"
_CLOSED = "127.0.0.1:18998"  # nothing listens there: the pre-flight's "not reachable"


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, *, via: str = "--provider-opt"
) -> tuple[int, str]:
    """``harness run`` of one openai cell at ``url``, given by ``--provider-opt`` or, with
    ``via="env"``, by ``$OPENAI_BASE_URL``: its exit code and output."""
    (tmp_path / "s.yaml").write_text(_SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("HARNESS_PROVIDER_OPTS", "{}")  # --provider-opt sets it in the process
    args = ["run", "s.yaml", "--providers", "openai:m", "--modes", "react", "--db", "h.duckdb",
            "--record-mode", "all", "--no-progress"]  # fmt: skip
    if via == "env":
        monkeypatch.setenv("OPENAI_BASE_URL", url)
    else:
        args += ["--provider-opt", f'openai.base_url="{url}"']
    done = CliRunner().invoke(main, args)
    return done.exit_code, done.output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://u:p@SECRETPW@{_CLOSED}/v1", f"http://u:***@{_CLOSED}/v1"),
        (f"http://SECRETPW@{_CLOSED}/v1", f"http://***@{_CLOSED}/v1"),
        (f"HTTP://u:a:SECRETPW@{_CLOSED}/v1", f"HTTP://u:***@{_CLOSED}/v1"),
    ],
    ids=["at-sign", "token-as-user", "colon"],
)
def test_the_secret_of_an_address_is_never_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, shown: str
) -> None:
    code, output = _run(tmp_path, monkeypatch, url)
    assert code == 3, output  # the pre-flight: not reachable
    assert shown in output, output
    assert "SECRETPW" not in output


@pytest.mark.parametrize(
    "url",
    [
        "http://u:SECRETPW@127.0.0.1:99999/v1",
        "http://u:SECRETPW/x@127.0.0.1:18998/v1",  # httpx: "Invalid port: 'SECRETPW'"
        "http://127.0.0.1:18998/v1?key=SECRETPW",
    ],
)
def test_a_refused_address_is_named_without_its_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    code, output = _run(tmp_path, monkeypatch, url)
    assert code == 2, output
    assert "is no usable address" in output
    assert "SECRETPW" not in output


def test_a_secret_in_the_environment_s_address_is_not_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = _run(tmp_path, monkeypatch, "http://u:SECRETPW@127.0.0.1:0/v1", via="env")
    assert code == 2, output
    assert "$OPENAI_BASE_URL 'http://u:***@127.0.0.1:0/v1' is no usable address" in output
    assert "SECRETPW" not in output


@pytest.mark.parametrize("url", ["http://h/v1?api-version=2024-02-01", "http://h/v1?"])
def test_an_address_with_a_query_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="it has a query"):
        usable_url(url)


def test_a_cassette_never_stores_the_password() -> None:
    clean = Scrubber([]).request(
        VcrRequest("POST", "http://u:SECRETPW@127.0.0.1:8080/v1/chat/completions", b"{}", {})
    )
    assert clean.uri == "http://u:REDACTED@127.0.0.1:8080/v1/chat/completions"


def test_lint_finds_a_password_recorded_before(tmp_path: Path) -> None:
    cassette = tmp_path / "a.yaml"
    cassette.write_text(
        "interactions:\n- request:\n    body: '{}'\n    headers: {}\n    method: POST\n"
        "    uri: http://u:SECRETPW@127.0.0.1:8080/v1/chat/completions\n"
        "  response:\n    body: {string: '{}'}\n    headers: {}\n"
        "    status: {code: 200, message: OK}\nversion: 1\n",
        encoding="utf-8",
    )
    assert [f.rule for f in lint_file(cassette)] == ["url-password"]


def test_addresses_without_secrets_are_shown_whole() -> None:
    """The guard."""
    from harness.providers._urls import masked_url  # (new in round 18)

    for url in ("http://127.0.0.1:8080/v1", "https://api.openai.com/v1", "127.0.0.1:11434",
                "http://[::1]:18001/v1", "http://h/v1/@me"):  # fmt: skip
        assert masked_url(url) == url
    assert usable_url("http://u:pw@h:8080/v1") == "http://u:pw@h:8080/v1"  # still usable
