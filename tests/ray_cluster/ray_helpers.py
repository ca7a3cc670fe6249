"""Helpers of the Ray cluster tests (imported as ``ray_helpers``; the folder is not called
``ray``, which would shadow the real package on ``sys.path``)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from types import ModuleType

import pytest


def require_ray() -> ModuleType:
    """The ``ray`` module; skip without it, or fail when ``HARNESS_RAY_REQUIRED=1``."""
    try:
        import ray
    except ImportError:
        message = "ray is not installed (nox -s ray installs the athena-harness[ray] extra)"
        if os.environ.get("HARNESS_RAY_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return ray


def latency_suite(tmp_path: Path, n: int, latency_s: float) -> Path:
    """``n`` tasks, each one tool call and one answer, every mock call taking ``latency_s``."""
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
    path = tmp_path / "latency.yaml"
    path.write_text(
        "suite: latency\ndefaults: {tools: [calculator], max_iterations: 4}\ntasks:" + body,
        encoding="utf-8",
    )
    return path
