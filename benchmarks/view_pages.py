"""Viewer benchmark: how long each page of ``harness view`` takes for a run of 10,000 cells,
on its first visit and on later ones.

Three synthetic runs (default: 1 suite x 834 tasks x 3 modes x 2 providers x 2 epochs = 10,008
cells each; the third one also stores 10% of its cells a second time, as ``--retry-errors``
does, so that readers must pick each cell's latest result) are written to a real DuckDB file
through the ``Store`` API, every cell with a compressed transcript (12 messages) and its trace
(12 spans). ``harness view`` is then started as a fresh process ``--processes`` times (the
first request of a fresh process is what a user's first click pays: imports, templates,
caches); in each, every page is fetched once as soon as the URL is printed ("first visit":
the viewer prepares the newest three runs' pages before it gives its URL), or after
``--settle`` seconds in a second series ("first visit, settled"), then ``--rounds`` more
times ("later visits"). Figures are medians over the processes (first visits) and over every
later visit.

Target (issue 25): every page under 300 ms on its first visit too, at 10,000 cells.

    nox -s perf        # or: python benchmarks/view_pages.py --processes 3 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from report_render import synthetic_results

from harness.core import Message, ToolCall, ToolResult
from harness.store import Store, encode_transcript

SPAN_NAMES = ["invoke_agent react", "iteration 0", "chat m", "execute_tool calculator"]


def _transcript(i: int) -> bytes | None:
    messages = [Message.user(f"Task {i}: what is {i} * 7 + 3? Use the calculator.")]
    for step in range(5):
        call = ToolCall(f"c{step}", "calculator", {"expression": f"{i}*7+{step}"})
        messages += [Message.assistant("", [call]), Message.tool(ToolResult(f"c{step}", str(i)))]
    messages.append(Message.assistant(str(i * 7 + 3)))
    return encode_transcript(messages)


def _spans(run_id: str, trace_ids: list[str]) -> pd.DataFrame:
    n, per = len(trace_ids), 12
    base = np.datetime64("2026-01-01T00:00:00", "ns")
    trace = np.repeat(np.array(trace_ids, dtype=object), per)
    k = np.tile(np.arange(per), n)
    root = np.array([f"{t[:12]}0000" for t in trace], dtype=object)
    span_id = np.array([f"{t[:12]}{j:04x}" for t, j in zip(trace, k, strict=True)], dtype=object)
    parent = np.where(k == 0, None, np.where(k % 3 == 1, root, np.roll(span_id, 1)))
    start = base + (np.repeat(np.arange(n), per) * 10_000_000 + k * 100_000).astype("m8[ns]")
    dur = np.where(k == 0, 1_500_000, 80_000)
    return pd.DataFrame({
        "run_id": run_id, "trace_id": trace, "span_id": span_id, "parent_span_id": parent,
        "name": [SPAN_NAMES[min(j, 3)] for j in k], "kind": "internal",
        "start_time": start, "end_time": start + dur.astype("m8[ns]"),
        "duration_ms": dur / 1e6, "status_code": "UNSET", "status_message": None,
        "attributes": json.dumps({"harness.iteration": 0}), "events": None,
    })  # fmt: skip


def build_store(db: Path, suites: int, tasks: int, epochs: int) -> tuple[str, str, str]:
    with Store.open(db) as store:
        ids = []
        for seed, label in ((2, "base"), (1, "run"), (3, "rerun")):
            run_id = store.begin_run(label=label, run_id=label)
            frame = synthetic_results(suites, tasks, epochs, seed=seed, run_id=run_id)
            frame["trace_id"] = [f"{seed:04x}{i:028x}" for i in range(len(frame))]
            frame["status"] = np.where(frame["passed"], "passed", "failed")
            frame["grader_explanation"] = "expected 42, got 41"
            frame["transcript"] = [_transcript(i) for i in range(len(frame))]
            store.write_results(frame)
            if label == "rerun":  # 10% of the cells stored again (--retry-errors, --resume)
                store.write_results(frame.iloc[::10].assign(passed=True, status="passed"))
            spans = _spans(run_id, frame["trace_id"].tolist())
            store.con.register("bench_spans", spans)
            store.con.execute("INSERT INTO spans_compacted SELECT * FROM bench_spans")
            store.con.unregister("bench_spans")
            store.finish_run(run_id)
            ids.append(run_id)
        ids.pop()
        store.compact()  # as `harness run` does at its end: the rows go from shards to tables
        row = store.con.execute(
            "SELECT cell_key FROM results WHERE run_id = 'run' AND NOT passed LIMIT 1"
        ).fetchone()
        assert row is not None
    return ids[0], ids[1], str(row[0])


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(db: Path) -> tuple[subprocess.Popen[str], str, float]:
    """``harness view`` in a fresh process: (process, base URL, seconds until it gave its URL)."""
    port = _port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "view", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # "preparing the newest runs' pages", then the URL
        seen.append(line)
        if "http://" in line:
            break
    assert seen, "harness view printed nothing"
    assert "http://" in seen[-1], "".join(seen)
    took = time.perf_counter() - t0
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:  # the URL is printed just before uvicorn accepts: wait for the socket only
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            assert time.monotonic() < deadline, "harness view did not listen"
            time.sleep(0.01)
    return proc, url, took


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def _fetch(client: httpx.Client, path: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    response = client.get(path)
    took = 1000 * (time.perf_counter() - t0)
    assert response.status_code in (200, 202), (path, response.status_code)  # 202: pending
    return took, len(response.content)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=834, help="tasks per suite")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--processes", type=int, default=3, help="fresh viewer processes")
    parser.add_argument("--rounds", type=int, default=5, help="later visits per process")
    parser.add_argument("--settle", type=float, default=8.0,
                        help="seconds to wait before the settled first visits")  # fmt: skip
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "harness.duckdb"
        started = time.perf_counter()
        base, run, key = build_store(db, args.suites, args.tasks, args.epochs)
        with Store.open(db, read_only=True) as store:
            cells, spans = (
                store.con.execute(f"SELECT count(*) FROM {t} WHERE run_id = 'run'").fetchone()
                for t in ("results", "spans")
            )
        size_mib, took = db.stat().st_size / 2**20, time.perf_counter() - started
        print(f"store: 3 runs of {cells[0]:,} cells and {spans[0]:,} spans each "  # type: ignore[index]
              f"({size_mib:.0f} MiB, built in {took:.1f} s)")  # fmt: skip
        targets = {
            "runs": "/",
            "run": f"/runs/{run}",
            "run, filtered": f"/runs/{run}?status=failed&provider=openai&mode=react&sort=task",
            "run, searched": f"/runs/{run}?q=task%20123&answers=1",
            "run, page 10": f"/runs/{run}?page=10",
            "run verdict": f"/runs/{run}/verdict",
            "run report": f"/runs/{run}/report",
            "cell": f"/runs/{run}/cell?key={quote(key)}",
            "compare": f"/compare?a={base}&b={run}",
            "compare, all": f"/compare?a={base}&b={run}&show=all",
            "rerun run": "/runs/rerun",
            "rerun compare": f"/compare?a={run}&b=rerun",
        }
        first: dict[str, list[float]] = {n: [] for n in targets}
        warmed: dict[str, list[float]] = {n: [] for n in targets}
        later: dict[str, list[float]] = {n: [] for n in targets}
        sizes: dict[str, int] = {}
        startup: list[float] = []
        for settle, into in ((0.0, first), (args.settle, warmed)):
            for _ in range(args.processes):
                proc, url, took = _start(db)
                startup.append(took)
                try:
                    time.sleep(settle)
                    with httpx.Client(base_url=url, timeout=120) as client:
                        for name, path in targets.items():
                            into[name].append(_fetch(client, path)[0])
                        if settle:
                            for _ in range(args.rounds):
                                for name, path in targets.items():
                                    ms, size = _fetch(client, path)
                                    later[name].append(ms)
                                    sizes[name] = size
                finally:
                    _stop(proc)
    med = statistics.median
    print(f"harness view gave its URL after {med(startup):.2f} s (median of {len(startup)}; "
          "the statistics stack imported and the newest 3 runs prepared before)")  # fmt: skip
    print(f"{'page':>16} | first visit | first visit, settled | later visits | KiB")
    for name in targets:
        print(f"{name:>16} | {med(first[name]):8.1f} ms | {med(warmed[name]):15.1f} ms | "
              f"{med(later[name]):9.1f} ms | {sizes[name] / 1024:.0f}")  # fmt: skip
    print(f"({args.processes} fresh processes per first-visit column, {args.rounds} later "
          f"visits in each settled one; settled: {args.settle:g} s after the URL)")  # fmt: skip
    print("target: every page < 300 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
