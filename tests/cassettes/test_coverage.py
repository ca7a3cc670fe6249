"""`harness cassettes coverage`: recorded requests whose reported prompt tokens cannot cover
their system text (a server that dropped it) are found, on made-up cassettes and on the
committed recordings of the retired llamacpp-gemma profile."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cassettes._coverage import system_coverage

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = "Use the tools. " * 40  # 600 characters


def _cassette(path: Path, prompt_tokens: int, system: str = SYSTEM) -> None:
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "Hi"}]}
    reply = {"choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1}}
    interaction = {
        "request": {"method": "POST", "uri": "http://h/v1/chat/completions",
                    "body": json.dumps(body), "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                     "body": {"string": json.dumps(reply)}},
    }  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}), "utf-8")


def test_short_prompt_counts_are_found(tmp_path: Path) -> None:
    _cassette(tmp_path / "s" / "dropping" / "react" / "t.e0.yaml", prompt_tokens=9)
    _cassette(tmp_path / "s" / "honest" / "react" / "t.e0.yaml", prompt_tokens=140)
    _cassette(tmp_path / "s" / "tiny-system" / "react" / "t.e0.yaml", 3, system="Be brief.")
    coverage = system_coverage(tmp_path)
    assert dict(coverage.judged) == {"dropping": 1, "honest": 1}  # a short system: not judged
    assert dict(coverage.short) == {"dropping": 1}
    assert "9 prompt tokens for 600 system chars" in coverage.lines()["dropping"]


@pytest.mark.slow
@pytest.mark.timeout(300)  # reads every cassette twice: 9 s alone, past 60 s under load once
def test_committed_recordings() -> None:
    coverage = system_coverage(ROOT / "cassettes")
    # llama-cpp-python's --chat_format gemma dropped every system message it was sent...
    assert coverage.judged["llamacpp-gemma"] > 100
    assert coverage.short["llamacpp-gemma"] == coverage.judged["llamacpp-gemma"]
    # ...llama.cpp's llama-server showed it (Gemma's template folds it into the first turn).
    assert coverage.judged["llamaserver-gemma"] > 100
    assert coverage.short["llamaserver-gemma"] == 0
    # The CLI fails only for a provider that is not retired.
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "cassettes", "coverage", "cassettes"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "llamacpp-gemma: " in done.stdout
    assert "[retired: " in done.stdout
