"""Faults found by adversary round 19, part B (issue 34), past round 18's address masking: a
password holding an unencoded ``?`` or ``#`` (httpx ends the host there: ``Invalid port:
'SEC'``) was shown whole in the message refusing the address, a password with a non-ASCII
character was shown in ``ascii`` form (``p\\xe4ss...``: the masking looked for the address as
given), and a token given as the user with an empty password (``http://TOKEN:@host``) was
printed by the pre-flight, stored in each cassette's ``uri`` and passed ``cassettes lint``.
Each test fails on f4c036f."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_round18b_urls import _CLOSED, _run
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

from harness.cassettes._lint import lint_file
from harness.cassettes._store import Scrubber


@pytest.mark.parametrize(
    "url",
    [
        "http://u:SEC?RETPW@127.0.0.1:18998/v1",
        "http://u:SEC#RETPW@127.0.0.1:18998/v1",
        "http://u:p\u00e4ssSECRETPW@127.0.0.1:99999/v1",
    ],
    ids=["question-mark", "hash", "non-ascii"],
)
def test_a_refused_address_is_named_without_any_piece_of_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    code, output = _run(tmp_path, monkeypatch, url)
    assert code == 2, output
    assert "is no usable address" in output
    assert "SEC" not in output  # neither piece, in no form
    assert "RETPW" not in output
    assert "127.0.0.1" in output  # the address is still named


def test_a_token_given_as_the_user_with_an_empty_password_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = _run(tmp_path, monkeypatch, f"http://SECRETPW:@{_CLOSED}/v1")
    assert code == 3, output  # the pre-flight: not reachable
    assert f"http://***@{_CLOSED}/v1" in output, output
    assert "SECRETPW" not in output


def test_a_cassette_keeps_no_token_given_as_the_user(tmp_path: Path) -> None:
    request = VcrRequest("POST", f"http://SECRETPW:@{_CLOSED}/v1/chat/completions", b"{}", {})
    clean = Scrubber([]).request(request)
    assert "SECRETPW" not in clean.uri
    recorded = tmp_path / "c.yaml"
    recorded.write_text(
        "interactions:\n- request:\n    body: '{}'\n    headers: {}\n    method: POST\n"
        f"    uri: http://SECRETPW:@{_CLOSED}/v1/chat/completions\n"
        "  response:\n    body: {string: '{}'}\n    headers: {}\n"
        "    status: {code: 200, message: OK}\nversion: 1\n",
        encoding="utf-8",
    )
    assert "url-password" in {f.rule for f in lint_file(recorded)}
