"""The full-disk scenario of `harness compact` (tests/e2e/test_disk_full.py), run as a script
inside the namespace that holds the small file system:

    python compact_disk_full_driver.py MOUNT OUT.json transient|persistent HOLD_S WAIT_S [ROOM]

A database under MOUNT gets one ended run of ROWS results in SHARDS shards, not compacted. The
disk is then made full (a file grows until ENOSPC, taking back whatever is freed) and a real
`harness compact` starts: ``transient`` frees the disk after HOLD_S seconds, while the command
runs; ``persistent`` keeps it full until the command exits, then frees it and runs
`harness compact` again. ROOM: bytes left free (the filler does not take them back), so that
opening the database works and compacting the shards fills the disk. OUT.json: exit codes,
stderr, how long the command took, the rows the database holds (with duplicates: nothing may
be read twice) and the shard files left.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.store import Store  # noqa: E402
from harness.store._shards import runs_dir, shard_files  # noqa: E402


def _filler() -> Any:
    """The filler of tests/e2e/disk_full_driver.py (a script beside this one, not a module)."""
    spec = importlib.util.spec_from_file_location(
        "disk_full_driver", Path(__file__).resolve().parent / "disk_full_driver.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Filler


ROWS = 400
SHARDS = 40


def build(db: Path) -> str:
    with Store.open(db) as store:
        run = store.begin_run(label="L")
        per = ROWS // SHARDS
        for s in range(SHARDS):
            store.write_results(
                [
                    {
                        "run_id": run,
                        "suite": "s",
                        "task_id": f"t{s * per + i}",
                        "mode": "react",
                        "provider": "mock",
                        "epoch": 0,
                        "passed": True,
                        "text": os.urandom(2000).hex(),
                    }
                    for i in range(per)
                ]
            )
        store.finish_run(run)
    return run


def harness_compact(db: Path, wait_s: float) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "COLUMNS": "300", "HARNESS_DISK_FULL_WAIT_S": str(wait_s)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return [sys.executable, "-m", "harness.cli", "compact", "--db", str(db)], env


def state(db: Path, run: str) -> dict[str, Any]:
    with Store.open(db, read_only=True) as ro:
        got = ro.con.execute(
            "SELECT count(*), count(DISTINCT result_id) FROM results WHERE run_id = ?", [run]
        ).fetchone()
        compacted = ro.con.execute("SELECT count(*) FROM results_compacted").fetchone()
    assert got is not None
    assert compacted is not None
    left = len(shard_files(runs_dir(db) / run, "results"))
    return {"rows": got[0], "distinct": got[1], "compacted": compacted[0], "shards_left": left}


def _said(proc: subprocess.Popen[str]) -> tuple[list[str], threading.Event, threading.Thread]:
    """The lines ``proc`` writes to stderr (read by the thread returned), and an event set once
    one says the disk is full."""
    lines: list[str] = []
    full = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "the disk is full" in line:
                full.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return lines, full, reader


def main() -> None:
    mount, out, kind, hold_s, wait_s = (
        Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]),
    )  # fmt: skip
    room = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    db = mount / "reports" / "harness.duckdb"
    run = build(db)
    report: dict[str, Any] = {"before": state(db, run)}
    spare = mount / "room"
    spare.write_bytes(b"\0" * room)
    filler = _filler()(mount, "real", refill=not room)
    filler.start()
    spare.unlink()
    cmd, env = harness_compact(db, wait_s)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said, full, reader = _said(proc)
    if kind == "transient":
        # Held from the moment compact says it waits (not from its start: under load its
        # imports alone may take longer than hold_s).
        report["said_full"] = full.wait(timeout=180)
        time.sleep(hold_s)
        report["running_when_freed"] = proc.poll() is None
        filler.free()
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    proc.wait(timeout=240)
    reader.join(timeout=30)  # every line of stderr read
    report.update(code=proc.returncode, stdout=stdout, stderr="".join(said))
    report["took_s"] = time.monotonic() - started
    if kind == "persistent":
        report["while_full"] = state(db, run)  # nothing lost, nothing twice, the disk still full
        filler.free()
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        report["again"] = {"code": again.returncode, "stderr": again.stderr}
    report["after"] = state(db, run)
    out.write_text(json.dumps(report))


if __name__ == "__main__":
    main()
