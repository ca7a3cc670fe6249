"""A fault found by adversary round 21, part B (issue 34): every reader and writer checks each
shard's Parquet footer when it opens the store, and pyarrow reads a footer whole: a sparse shard
(5 GB, nothing on disk) whose footer said 4 GB made ``harness report`` hold 4.4 GB and take 34 s,
at every report, ``gate`` and viewer start (a reader leaves it in place). A footer past
``MAX_FOOTER_BYTES`` is damage now, never read. Fails on 84cec7a (the child's peak is 4 GB)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

_SCAN = """
import resource, sys
from pathlib import Path
from harness.store._damage import scan
found = scan(Path(sys.argv[1]), move=False)
print(len(found), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.timeout(600)
def test_a_shard_whose_footer_says_gigabytes_is_never_read(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "r1"
    folder.mkdir(parents=True)
    with (folder / "results-20260101000000-1-abcdef-000001.parquet").open("wb") as f:
        f.write(b"PAR1")
        f.truncate(5 << 30)
        f.seek((5 << 30) - 8)
        f.write(struct.pack("<I", (4 << 30) - 100) + b"PAR1")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _SCAN, str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=500, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    damaged, peak_mb = (int(v) for v in done.stdout.split())
    assert damaged == 1
    assert peak_mb < 1024, done.stderr[-2000:]
    assert "the footer says" in done.stderr


_SCHEMA = """
import resource, sys
from pathlib import Path
from harness.store._shards import write_schema_files
write_schema_files(Path(sys.argv[1]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.timeout(600)
def test_a_schema_shard_whose_footer_says_gigabytes_is_replaced_unread(tmp_path: Path) -> None:
    """The same for the empty schema shards a reader checks (made again when they do not read
    as the schema): 4.4 GB held once."""
    folder = tmp_path / "runs" / "_schema"
    folder.mkdir(parents=True)
    shard = folder / "results-schema.parquet"
    with shard.open("wb") as f:
        f.write(b"PAR1")
        f.truncate(5 << 30)
        f.seek((5 << 30) - 8)
        f.write(struct.pack("<I", (4 << 30) - 100) + b"PAR1")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _SCHEMA, str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=500, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) < 1024
    assert shard.stat().st_size < 1 << 20
