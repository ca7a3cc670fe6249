"""A cassette file was read whole, however large (adversary round 22, part B): a sparse 3 GB
file at a cell's cassette held 6.4 GB for 28 s to replay that one cell (a MemoryError under a
limit), and `cassettes lint` and `cassettes coverage` read it whole too. A cassette is at most
``MAX_CASSETTE_BYTES``; a larger one is refused unread, naming the bound. Each test runs its
reader under a 1 GiB address-space limit over a 2 GiB file; each fails on 0624268."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

_LIMIT = 1 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd,
        preexec_fn=_limited,
    )  # fmt: skip


def _huge(path: Path) -> Path:
    """``path``: a sparse 2 GiB file of spaces' worth (zeros), nothing on disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.truncate(2 << 30)
    return path


@pytest.mark.timeout(300)
def test_lint_refuses_a_cassette_past_its_bound_unread(tmp_path: Path) -> None:
    _huge(tmp_path / "cas" / "p" / "big.yaml")
    done = _run(["-m", "harness.cli", "cassettes", "lint", "cas"], tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "big.yaml: corrupt: not a readable cassette: " in done.stdout
    assert "is larger than 268,435,456 bytes" in done.stdout, done.stdout


@pytest.mark.timeout(300)
def test_a_replayed_cassette_past_its_bound_is_refused_unread(tmp_path: Path) -> None:
    path = _huge(tmp_path / "big.yaml")
    code = (
        "from harness.cassettes._store import Persister\n"
        "from harness.cassettes import _yaml\n"
        "from harness.errors import CassetteCorrupt\n"
        "try:\n"
        f"    Persister.load_cassette({str(path)!r}, _yaml)\n"
        "except CassetteCorrupt as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("refused: cassette "), done.stdout
    assert "is larger than 268,435,456 bytes" in done.stdout
