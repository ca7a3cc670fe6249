"""A plug-in that raises anything (adversary round 5, issue 34 item 9): a mode, grader, executor or
task source whose module raises RuntimeError or SyntaxError as it is imported, whose class raises
as it is made, or a source that raises when called. Before, each gave a raw traceback and exit 1,
the exception's message printed raw (ESC and BEL reached the terminal). Now: one line naming
the plug-in and the exception, control characters escaped, exit 2. Each case runs the real
``harness`` in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never reach the terminal

MODULES = {
    "rtplug.py": 'raise RuntimeError("boom \\x1b]0;PWNED\\x07 end")\n',
    "synplug.py": "def f(:\n",
    "ctorplug.py": (
        "class M:\n    def __init__(self):\n        raise RuntimeError('ctor \\x07')\n"
        "def E(options, sink, context):\n    raise ValueError('factory \\x1b[31m')\n"
    ),
    "srcplug.py": "def source(argument, options):\n    raise RuntimeError('source \\x1b[2J')\n",
    "reprplug.py": (
        "class Bad:\n    def __repr__(self):\n        raise RuntimeError('repr \\x1b[2J')\n"
        "M = Bad()\n"
    ),
}

TASK = "tasks:\n  - id: a\n    prompt: hi\n    expect: {kind: contains, value: x}\n"
SUITES = {
    "plain.yaml": "suite: plain\n" + TASK,
    "grader.yaml": "suite: grader\ntasks:\n  - {id: a, prompt: hi, expect: {kind: 'rtplug:G'}}\n",
    "extra.yaml": "suite: extra\nextra_modes: ['synplug:M']\n" + TASK,
    "source.yaml": "suite: source\nsource: {kind: 'srcplug:source'}\n",
}

CASES = {
    "mode-import": (["run", "plain.yaml", "--modes", "rtplug:M"], "RuntimeError: boom"),
    "mode-ctor": (["run", "plain.yaml", "--modes", "ctorplug:M"], "RuntimeError: ctor"),
    "mode-repr": (["run", "plain.yaml", "--modes", "reprplug:M"], "RuntimeError: repr"),
    "executor-import": (["run", "plain.yaml", "--executor", "rtplug:E"], "RuntimeError: boom"),
    "executor-factory": (["run", "plain.yaml", "--executor", "ctorplug:E"], "ValueError: factory"),
    "grader-validate": (["suites", "validate", "grader.yaml"], "RuntimeError: boom"),
    "grader-run": (["run", "grader.yaml"], "RuntimeError: boom"),
    "extra-modes-validate": (["suites", "validate", "extra.yaml"], "SyntaxError: invalid syntax"),
    "extra-modes-run": (["run", "extra.yaml"], "SyntaxError: invalid syntax"),
    "source-validate": (["suites", "validate", "source.yaml"], "RuntimeError: source"),
    "source-run": (["run", "source.yaml"], "RuntimeError: source"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_plugin_that_raises_is_one_line_exit_2(tmp_path: Path, case: str) -> None:
    for name, text in {**MODULES, **SUITES}.items():
        (tmp_path / name).write_text(text)
    args, said = CASES[case]
    if args[0] == "run":
        args = [*args, "--providers", "mock", "--db", "h.duckdb", "--trace-file", "t.jsonl"]
        if "--modes" not in args:
            args += ["--modes", "react"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "Traceback" not in out
    assert said in " ".join(out.split())
    assert not RAW.search(out.replace("\n", "").replace("\t", "")), out
