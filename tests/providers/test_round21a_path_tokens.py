"""A token in a gateway's path, percent-encoded only where a path must encode it (issue 34,
adversary round 21, part A).

Round 20 searched each secret also as an address spells it in full (``ab%2Fcd%2Bef%3D%3D``:
``quote(secret, safe="")`` and its kin). A path needs only ``/`` encoded inside a segment: a
user writing ``base_url: http://host/ab%2Fcd+ef==TOKEN/v1`` (the token in ``$GATEWAY_TOKEN``)
had it stored whole in every cassette's ``uri`` (reproduced with the real CLI recording
against a loopback server; ``cassettes lint`` said clean), and so for ``%2b`` beside ``%3D``,
``%61`` for ``a``, or a token after ``;t=``. The recorder now also reads the path as
``quote(..., safe="/")`` spells it (``canonical_path``, ``harness/_urls.py``). Real loopback
servers, the real recorder."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_server import CHAT_REPLY, http_response
from test_round20a_recorded_secrets import _record

TOKEN = "ab/cd+ef==round21TOKEN"


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "path",
    [
        "/ab%2Fcd+ef==round21TOKEN",
        "/ab%2fcd%2bef%3D%3dround21TOKEN",
        "/%61b%2Fcd%2Bef%3D%3Dround21TOKEN",
        "/ab%2Fcd%2Bef==round21TOKEN",
        "/x;t=ab%2Fcd+ef==round21TOKEN",
    ],
)
def test_a_path_token_encoded_only_where_it_must_be_is_scrubbed(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-round21-recorded-ABCDEFGHIJ")
    result, stored = _record(tmp_path, http_response(200, CHAT_REPLY), path, TOKEN)
    assert result.finish_reason == "stop", result.halted_reason
    assert b"round21TOKEN" not in stored  # uri: http://127.0.0.1:port/ab%2Fcd+ef==... on 84cec7a
    assert b"REDACTED/chat/completions" in stored


def test_the_canonical_path_keeps_an_encoded_slash_and_the_rest_of_the_address() -> None:
    from harness._urls import canonical_path

    assert canonical_path("http://h:1/ab%2fcd+e/v1?q=a+b#f") == "http://h:1/ab%2Fcd%2Be/v1?q=a+b#f"
    assert canonical_path("http://h/a%25%41b") == "http://h/a%25Ab"  # %41 is A; %25 kept
    assert canonical_path("http://h") == "http://h"


def test_a_server_echoing_the_path_token_as_the_path_spells_it_is_scrubbed() -> None:
    """The real CLI: a 400 body ``no such route http://gw/ab%2Fcd+ef==TOKEN/v1`` reached the
    terminal, the cassette, the trace file and the row whole (the request's ``uri`` is
    scrubbed above; a body, a row or a span goes through the redactor's spellings only)."""
    from harness.cassettes._secrets import Redactor

    text = "no such route http://gw/ab%2Fcd+ef==round21TOKEN/v1"
    assert "round21TOKEN" not in Redactor([TOKEN]).text(text)
