"""A fault found by adversary round 21, part B (issue 34): a suite's ``tools_module`` was
imported whatever its size (a file a person writes, as the suite and ``harness.toml`` are,
which are refused past ``MAX_INPUT_BYTES`` before they are read): a sparse 3 GB module held 3.2
GB of memory to fail. Refused before the import now. Fails on 84cec7a."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_a_tools_module_larger_than_an_input_file_may_be_is_refused(tmp_path: Path) -> None:
    with (tmp_path / "big_tools.py").open("wb") as f:
        f.truncate(3 << 30)
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntools_module: big_tools.py\ntasks:\n  - id: a\n    prompt: p\n"
        "    expect: {kind: contains, value: x}\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "suites", "validate", str(tmp_path / "s.yaml")],
        capture_output=True, text=True, timeout=300, env=env, preexec_fn=_limited,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "is larger than 67,108,864 bytes; refused" in done.stdout + done.stderr
