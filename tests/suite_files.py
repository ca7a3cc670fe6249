"""Suite files the tests write: runs of known length whatever the machine."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.cli import main

__all__ = ["invoke_in", "latency_suite"]


def invoke_in(
    folder: Path, monkeypatch: pytest.MonkeyPatch, files: Mapping[str, str], args: Sequence[str]
) -> Result:
    """The CLI run in this process with ``args`` from ``folder``, which holds ``files`` (suites,
    plug-in modules: importable from it)."""
    for name, text in files.items():
        (folder / name).write_text(text)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(folder)
    return CliRunner().invoke(main, list(args))


def latency_suite(folder: Path, n: int, latency_s: float) -> Path:
    """``folder/latency.yaml``: ``n`` mock tasks of one calculator call and one answer, every
    mock call taking ``latency_s`` (a run lasts about n x 2 x latency / concurrency)."""
    body = "".join(
        textwrap.dedent(
            f"""
              - id: t{i}
                prompt: "What is {i}+1?"
                expect: {{kind: contains, value: "{i + 1}"}}
                mock:
                  latency_s: {latency_s}
                  turns:
                    - tool_calls: [{{name: calculator, arguments: {{expression: "{i}+1"}}}}]
                    - text: "{i + 1}"
            """
        )
        for i in range(n)
    )
    path = folder / "latency.yaml"
    path.write_text(
        "suite: latency\ndefaults: {tools: [calculator], max_iterations: 4}\ntasks:" + body,
        encoding="utf-8",
    )
    return path
