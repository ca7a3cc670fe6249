"""Secrets never reach files: profile headers and *_KEY/*_TOKEN/*_SECRET values are scrubbed
from cassettes, trace files and stored rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import httpx
import pytest
from pytest_httpserver import HTTPServer

from harness.cassettes._secrets import scrub_text, secret_values
from harness.cassettes._transport import CassetteTransport

HEADER_TOKEN = "tok-5f2a9c81d7e4"
ECHOED = "sk-test-0123456789abcdef"


def test_secret_values_cover_headers_keys_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.custom]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'headers = {{"X-Custom-Auth" = "Bearer {HEADER_TOKEN}"}}\n'
        'api_key_env = "CUSTOM_API"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    env = {"CUSTOM_API": "key-abcdefgh", "SOME_TOKEN": "zzzzzzzzzz", "SHORT_KEY": "abc",
           "HOME": "/root"}  # fmt: skip
    found = secret_values(["custom"], env)
    assert f"Bearer {HEADER_TOKEN}" in found
    assert HEADER_TOKEN in found
    assert "key-abcdefgh" in found
    assert "zzzzzzzzzz" in found
    assert "abc" not in found
    assert "/root" not in found
    assert scrub_text(f"auth {HEADER_TOKEN}!", found) == "auth REDACTED!"


async def test_profile_headers_are_scrubbed_from_cassettes(
    tmp_path: Path,
    httpserver: HTTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.custom]\nkind = "openai"\n'
        f'base_url = "{httpserver.url_for("/v1")}"\n'
        f'headers = {{"X-Custom-Auth" = "Bearer {HEADER_TOKEN}"}}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    httpserver.expect_request("/v1/chat/completions").respond_with_json({"echo": HEADER_TOKEN})
    from harness.cassettes._transport import profile_secrets

    file = tmp_path / "c.yaml"
    t = CassetteTransport(file, record_mode="all", secrets=profile_secrets("custom"))
    async with httpx.AsyncClient(transport=t) as client:
        await client.post(
            httpserver.url_for("/v1/chat/completions"),
            json={"q": HEADER_TOKEN},
            headers={"X-Custom-Auth": f"Bearer {HEADER_TOKEN}"},
        )
    await t.aclose()
    text = file.read_text(encoding="utf-8")
    assert HEADER_TOKEN not in text
    assert "REDACTED" in text


SUITE = f"""\
suite: leak
tasks:
  - id: echo
    prompt: "repeat the key"
    expect: {{kind: contains, value: x}}
    mock:
      turns:
        - {{text: "the key is {ECHOED}"}}
"""


def test_an_echoed_key_is_scrubbed_from_rows_and_traces(tmp_path: Path) -> None:
    (tmp_path / "leak.yaml").write_text(SUITE, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "MY_SERVICE_KEY": ECHOED}
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "leak.yaml", "--providers", "mock",
         "--modes", "react", "--no-progress", "--db", "h.duckdb", "--trace-file", "t.jsonl"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert ECHOED not in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    con = duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True)
    try:
        (text,) = con.execute("SELECT text FROM results").fetchone()  # type: ignore[misc]
        spans = con.execute("SELECT count(*) FROM spans WHERE events::VARCHAR LIKE ?",
                            [f"%{ECHOED}%"]).fetchone()  # fmt: skip
    finally:
        con.close()
    assert text == "the key is REDACTED"
    assert spans == (0,)
