"""The span file on a full disk (JsonLinesSpanExporter.write_text): a write cut short is cut back
to its last whole line, the lines not written wait in memory and go out in order once there is
room, and a disk that stays full past the budget loses whole lines only: every line of the file
always parses."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from harness.telemetry._exporters import JsonLinesSpanExporter


class Disk:
    """A raw file with ``room`` bytes left: a write past it is cut short, the next fails."""

    def __init__(self, f: Any, room: int) -> None:
        self.f = f
        self.room = room
        self.failures = 0

    def write(self, data: Any) -> int:
        if self.room <= 0:
            self.failures += 1
            raise OSError(errno.ENOSPC, "No space left on device")
        part = bytes(data[: self.room])
        self.room -= len(part)
        return int(self.f.write(part))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.f, name)


def line(i: int) -> str:
    return json.dumps({"traceId": f"{i:032x}", "spanId": f"{i:016x}", "name": f"span {i}"}) + "\n"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_bytes().splitlines()]  # each one parses


def test_a_full_disk_tears_no_line_and_loses_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_DISK_FULL_WAIT_S", "5")
    path = tmp_path / "spans.jsonl"
    exporter = JsonLinesSpanExporter(path)
    disk = Disk(exporter._file, room=len(line(0)) + 10)  # one line and a bit fit
    exporter._file = disk  # type: ignore[assignment]
    assert exporter.write_text(line(0) + line(1))  # accepted: line 1 waits in memory
    assert exporter.write_text(line(2))  # waits too (the disk is still full)
    assert [d["name"] for d in lines_of(path)] == ["span 0"]  # no torn half of line 1
    disk.room = 10**6  # room again
    exporter.force_flush()
    assert exporter.write_text(line(3))
    exporter.shutdown()
    assert [d["name"] for d in lines_of(path)] == [f"span {i}" for i in range(4)]
    assert disk.failures >= 1


def test_a_disk_that_stays_full_loses_whole_lines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("HARNESS_DISK_FULL_WAIT_S", "0.3")
    path = tmp_path / "spans.jsonl"
    exporter = JsonLinesSpanExporter(path)
    exporter._file = Disk(exporter._file, room=len(line(0)) + len(line(1)) // 2)  # type: ignore[assignment]
    for i in range(5):
        assert exporter.write_text(line(i))
    exporter.shutdown()  # waits 0.3 s for room, then gives the held lines up
    assert [d["name"] for d in lines_of(path)] == ["span 0"]
    assert "bytes of spans not written" in caplog.text


def test_other_write_errors_still_leave_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    exporter = JsonLinesSpanExporter(path)

    class Broken(Disk):
        def write(self, data: Any) -> int:
            if self.room <= 0:
                raise OSError(errno.EIO, "Input/output error")
            return super().write(data)

    exporter._file = Broken(exporter._file, room=len(line(0)) + 5)  # type: ignore[assignment]
    assert not exporter.write_text(line(0) + line(1))  # failed, and said so
    exporter.shutdown()
    assert [d["name"] for d in lines_of(path)] == ["span 0"]
