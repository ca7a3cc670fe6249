"""The Ray driver appends its workers' span lines with ``append_whole_lines``: all of a batch or
none of it, so a disk that fills mid-write leaves no torn line (issue 27, item 8)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.store._diskfull import DiskPatience, append_whole_lines


def _line(i: int) -> str:
    return json.dumps({"spanId": f"{i:016x}", "name": f"span {i}", "pad": "x" * 200}) + "\n"


@pytest.mark.slow
def test_a_write_cut_short_by_the_file_system_is_cut_back_off(tmp_path: Path) -> None:
    """A real short write: the kernel stops the write at RLIMIT_FSIZE (EFBIG) part-way through
    the second batch; the file keeps the first batch, whole."""
    path = tmp_path / "spans.jsonl"
    first, second = _line(0), _line(1) + _line(2)
    limit = len(first) + len(second) // 2
    script = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        from harness.store._diskfull import append_whole_lines
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        path = Path({str(path)!r})
        append_whole_lines(path, {first!r})
        try:
            append_whole_lines(path, {second!r})
        except OSError as exc:
            print("failed", exc.errno)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("failed"), done.stdout
    assert path.read_text(encoding="utf-8") == first  # nothing of the cut batch is left
    append_whole_lines(path, second)  # room again (no limit here)
    names = [json.loads(raw)["name"] for raw in path.read_text(encoding="utf-8").splitlines()]
    assert names == ["span 0", "span 1", "span 2"]


def test_a_full_disk_is_waited_out_then_the_lines_go_in(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    calls = {"n": 0}

    def flaky() -> None:
        calls["n"] += 1
        if calls["n"] < 3:
            raise OSError(28, "No space left on device")
        append_whole_lines(path, _line(0))

    DiskPatience(wait_s=5).call(flaky, "appending spans")
    assert calls["n"] == 3
    assert json.loads(path.read_text(encoding="utf-8"))["name"] == "span 0"
