"""``harness cassettes lint``: secret-looking values fail (exit 1) with the file and location,
placeholders pass, a corrupt file exits 2, a clean tree exits 0 with a count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from harness.cassettes._lint import Finding, lint_cassettes
from harness.cassettes._transport import CassetteTransport
from harness.cli import main

KEY = "sk-proj-Zx81QmR2vT7pLk4NwY0aBc9dEf3GhJ6u"
ANT = "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGg"


def cassette(
    *,
    uri: str = "https://api.openai.com/v1/chat/completions",
    request_headers: dict[str, Any] | None = None,
    request_body: str = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
    response_headers: dict[str, Any] | None = None,
    response_body: str = '{"choices":[{"message":{"role":"assistant","content":"hello"}}]}',
) -> dict[str, Any]:
    headers = {"content-type": ["application/json"], **(request_headers or {})}
    return {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": uri, "body": request_body, "headers": headers},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"], **(response_headers or {})},
                    "body": {"string": response_body},
                },
            }
        ],
    }


def write(root: Path, name: str, data: dict[str, Any]) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def rules(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


@pytest.mark.parametrize(
    ("data", "rule", "location"),
    [
        (
            cassette(request_headers={"Authorization": [f"Bearer {KEY}"]}),
            "secret-header",
            "interactions[0].request.headers.Authorization",
        ),
        (
            cassette(request_headers={"x-api-key": [ANT]}),
            "secret-header",
            "interactions[0].request.headers.x-api-key",
        ),
        (
            cassette(request_headers={"authorization": ["Basic dXNlcjpwYXNz"]}),
            "secret-header",
            "interactions[0].request.headers.authorization",
        ),
        (
            cassette(request_body=json.dumps({"note": f"my key is {ANT}"})),
            "api-key",
            "interactions[0].request.body (char 20)",
        ),
        (
            cassette(response_body=json.dumps({"echo": KEY})),
            "api-key",
            "interactions[0].response.body.string (char 10)",
        ),
        (
            cassette(response_body="token: Bearer eyJhbGciOi.J9x2LmQ7vRkP3sT8wZ1nB4c"),
            "bearer-token",
            "interactions[0].response.body.string (char 14)",
        ),
        (
            cassette(uri="https://example.openai.azure.com/v1/chat?api-key=3f9a8b7c6d5e"),
            "secret-query",
            "interactions[0].request.uri?api-key",
        ),
        (
            cassette(uri="https://generativelanguage.googleapis.com/v1/models?key=AIzaSy1"),
            "secret-query",
            "interactions[0].request.uri?key",
        ),
        (
            cassette(request_headers={"Cookie": ["session=8f7e6d"]}),
            "cookie",
            "interactions[0].request.headers.Cookie",
        ),
        (
            cassette(response_headers={"set-cookie": ["__cf_bm=abc; path=/"]}),
            "cookie",
            "interactions[0].response.headers.set-cookie",
        ),
    ],
    ids=[
        "bearer-header",
        "x-api-key",
        "basic-auth",
        "anthropic-key-in-body",
        "openai-key-in-response",
        "bearer-token-in-text",
        "azure-api-key-query",
        "google-key-query",
        "cookie",
        "set-cookie",
    ],
)
def test_a_secret_looking_value_is_found_with_its_location(
    tmp_path: Path, data: dict[str, Any], rule: str, location: str
) -> None:
    path = write(tmp_path, "suite/openai/react/t.e0.yaml", data)
    findings = lint_cassettes(tmp_path)
    assert [(f.path, f.rule, f.location) for f in findings] == [(path, rule, location)]


def test_a_leaked_authorization_header_is_reported_once(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", cassette(request_headers={"authorization": [f"Bearer {KEY}"]}))
    assert rules(lint_cassettes(tmp_path)) == ["secret-header"]


@pytest.mark.parametrize(
    "value",
    [
        "REDACTED",
        "Bearer REDACTED",
        "<OPENAI_API_KEY>",
        "Bearer <KEY>",
        "***",
        "xxxx",
        "",
        "[FILTERED]",
    ],
)
def test_placeholders_pass(tmp_path: Path, value: str) -> None:
    write(
        tmp_path,
        "c.yaml",
        cassette(
            request_headers={"authorization": [value], "x-api-key": [value]},
            uri=f"https://api.example.com/v1/x?api_key={value or 'REDACTED'}",
        ),
    )
    assert lint_cassettes(tmp_path) == []


@pytest.mark.parametrize(
    "text",
    [
        "task-1234567890abcdefghijklmnop",  # "sk-" inside a word
        "desk-lamp",
        "Bearer aaaaaaaaaaaaaaaaaaaaaaaaaaaa",  # long but no entropy
        "a tokenizer splits words",
        "sk-short",
    ],
)
def test_ordinary_text_is_not_a_secret(tmp_path: Path, text: str) -> None:
    write(tmp_path, "c.yaml", cassette(response_body=json.dumps({"content": text})))
    assert lint_cassettes(tmp_path) == []


async def test_cassettes_recorded_by_the_transport_are_clean(tmp_path: Path) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"ok": True}, headers={"set-cookie": "s=1"})

    file = tmp_path / "cassettes" / "arith" / "openai" / "react" / "t.e0.yaml"
    t = CassetteTransport(
        file, record_mode="all", secrets=[KEY], real_transport=httpx.MockTransport(answer)
    )
    headers = {"authorization": f"Bearer {KEY}", "x-api-key": ANT}
    async with httpx.AsyncClient(transport=t, headers=headers) as client:
        await client.post("https://api.openai.com/v1/chat/completions?api-key=zz", json={"k": KEY})
    assert lint_cassettes(tmp_path / "cassettes") == []


def test_cli_exits_1_on_a_secret_and_never_prints_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout's reports/traces, linted when present
    write(tmp_path, "cassettes/s/p/react/t.e0.yaml", cassette())
    bad = write(
        tmp_path,
        "cassettes/s/p/react/u.e0.yaml",
        cassette(request_headers={"Authorization": [f"Bearer {KEY}"]}),
    )
    result = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path / "cassettes")])
    assert result.exit_code == 1, result.output
    assert f"{bad}: interactions[0].request.headers.Authorization: secret-header" in result.output
    assert KEY not in result.output
    assert "1 secret-looking value(s) in 1 file(s)" in result.output


def test_cli_exits_0_with_a_count_and_defaults_to_the_cassettes_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        write(tmp_path, f"cassettes/s/p/react/t{i}.e0.yaml", cassette())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["cassettes", "lint"])
    assert result.exit_code == 0, result.output
    assert "3 cassette(s) clean under cassettes" in result.output


@pytest.mark.parametrize(
    "content",
    ["interactions: [\n  - {request: ", "just text\n", "interactions: {a: 1}\n"],
    ids=["bad-yaml", "scalar", "no-list"],
)
def test_cli_exits_2_on_a_corrupt_cassette(
    tmp_path: Path, content: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout's reports/traces, linted when present
    write(tmp_path, "ok.yaml", cassette(request_headers={"Authorization": [f"Bearer {KEY}"]}))
    broken = tmp_path / "broken.yaml"
    broken.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"{broken}: corrupt:" in result.output
    assert "secret-header" in result.output  # the other file is still checked


def test_cli_exits_2_on_a_missing_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout's reports/traces, linted when present
    result = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "is not a directory" in result.output


def test_trace_files_are_linted_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cassettes._lint import lint_main

    (tmp_path / "cassettes").mkdir()
    traces = tmp_path / "traces"
    traces.mkdir()
    monkeypatch.setenv("LEAKY_SERVICE_TOKEN", "tok-9f8e7d6c5b4a")
    (traces / "run.jsonl").write_text(
        '{"name": "chat", "events": [{"text": "the token is tok-9f8e7d6c5b4a"}]}\nnot json\n',
        encoding="utf-8",
    )
    lines: list[str] = []
    assert lint_main(tmp_path / "cassettes", lines.append, [traces]) == 1
    assert any("env-secret" in line for line in lines)
    assert all("tok-9f8e7d6c5b4a" not in line for line in lines)  # masked
    (traces / "run.jsonl").write_text('{"name": "chat"}\n', encoding="utf-8")
    assert lint_main(tmp_path / "cassettes", lines.append, [traces]) == 0
