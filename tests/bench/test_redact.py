"""The run's one redactor (harness.bench.run_redactor): the secrets of the providers named and of
the environment; with ``auto``, of every provider that has cassettes."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from harness.bench import _redact, run_redactor

KEY = "sk-test-0123456789abcdef0123"


def test_the_environment_secrets_are_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    redact = run_redactor(["mock"])
    assert KEY in redact.secrets
    assert KEY not in redact.text(f"Authorization: Bearer {KEY}")


def test_auto_asks_for_the_secrets_of_every_provider_with_cassettes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def secret_values(providers: Iterable[str]) -> list[str]:
        asked.extend(providers)
        return []

    monkeypatch.setattr(_redact, "secret_values", secret_values)
    (tmp_path / "arithmetic" / "openai").mkdir(parents=True)
    (tmp_path / "traps" / "llamaserver-qwen-chat").mkdir(parents=True)
    run_redactor(["auto"], tmp_path)
    assert sorted(asked) == ["auto", "llamaserver-qwen-chat", "openai"]
    asked.clear()
    run_redactor(["mock", "openai"], tmp_path)  # named providers: no folder is read
    assert asked == ["mock", "openai"]
