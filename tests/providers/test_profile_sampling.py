"""A profile's fixed temperature and default completion cap reach the request body, on both
wire formats, through a real loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

import harness

OPENAI_REPLY = {
    "id": "x",
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
}  # fmt: skip
ANTHROPIC_REPLY = {
    "id": "x",
    "type": "message",
    "role": "assistant",
    "model": "tiny",
    "content": [{"type": "text", "text": "4"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 5, "output_tokens": 1},
}


@pytest.mark.parametrize(
    ("kind", "path", "reply", "url_suffix"),
    [
        ("openai", "/v1/chat/completions", OPENAI_REPLY, "/v1"),
        ("anthropic", "/v1/messages", ANTHROPIC_REPLY, ""),
    ],
)
def test_greedy_profile_overrides_temperature_and_caps_tokens(
    httpserver: HTTPServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    path: str,
    reply: dict[str, object],
    url_suffix: str,
) -> None:
    (tmp_path / "harness.toml").write_text(
        f'[providers.greedy]\nkind = "{kind}"\nbase_url = "{httpserver.url_for(url_suffix)}"\n'
        'model = "tiny"\nstream = false\ntemperature = 0\nmax_tokens = 77\nseeds = "honoured"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    httpserver.expect_request(path, method="POST").respond_with_json(reply)
    result = harness.run("2+2?", provider="greedy", temperature=0.7, seed=3)
    assert result.text == "4", result.halted_reason
    body = json.loads(httpserver.log[0][0].get_data())
    assert body["temperature"] == 0  # the suite's 0.7 does not reach a greedy profile
    assert "seed" not in body  # greedy: nothing to seed
    assert body["max_tokens"] == 77
    # A request's own cap wins over the profile's default.
    harness.run("2+2?", provider="greedy", max_tokens=5)
    assert json.loads(httpserver.log[1][0].get_data())["max_tokens"] == 5


@pytest.mark.slow
def test_provider_opt_moves_a_profile_from_the_command_line(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    """`harness run --provider-opt NAME.FIELD=VALUE` (a real CLI run): the profile of
    pyproject.toml answers on another port, with its other fields kept."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text(
        '[tool.harness.providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "tiny"\nstream = false\nmax_tokens = 77\n',
        encoding="utf-8",
    )
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntasks:\n  - id: t\n    prompt: '2+2?'\n"
        "    expect: {kind: contains, value: '4'}\n",
        encoding="utf-8",
    )
    expected = httpserver.expect_request("/v1/chat/completions", method="POST")
    expected.respond_with_json(OPENAI_REPLY)
    url = httpserver.url_for("/v1")
    run = [
        *(sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "local"),
        *("--modes", "react", "--record-mode", "all", "--db", "h.duckdb", "--no-progress"),
    ]
    done = subprocess.run(
        [*run, "--provider-opt", f'local.base_url="{url}"'],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout + done.stderr
    assert json.loads(httpserver.log[0][0].get_data())["max_tokens"] == 77  # the rest is kept
    bad = subprocess.run(
        [*run, "--provider-opt", "nosuch.base_url=x"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "no provider profile 'nosuch'" in bad.stderr
