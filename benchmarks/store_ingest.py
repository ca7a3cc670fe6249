"""Store ingest benchmark: 100,000 results and 1,000,000 spans into a fresh DuckDB file.

Generated data, shaped like a real bench: results with 1-4 per-call records, a deliverable, a
final text and now and then an error diagnostic or a no-progress snapshot (the rows are Python
dicts, as the runner passes them, so JSON encoding is part of the measured time); spans in the
JSON-lines OTLP-JSON format of ``harness.telemetry._exporters`` (10 per trace: the agent span, 3
iterations, 3 chats, 3 tool calls, with their attributes and a few events).

Measured: ``Store.write_results`` (rows -> Arrow -> one INSERT), ``Store.ingest_spans``
(``read_json`` -> one INSERT), closing (checkpoint), then the view queries the report runs.
Peak RSS is the process high-water mark, reset after the data is generated (Linux
``/proc/self/clear_refs``), so it is what ingest itself adds on top of the input rows.

    python benchmarks/store_ingest.py [--results 100000] [--spans 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.store import Store, mode_summary_df, results_df, tool_calls_df

MODES = ("react", "reflexion", "plan_execute")
PROVIDERS = ("mock", "llamacpp-gemma", "openai")
SUITES = ("arithmetic", "files", "lookup", "structured", "traps")
REASONS = ("stop", "submitted", "error_max_turns", "error_no_progress", "stop", "submitted")
TOOLS = ("calculator", "read_file", "kv_get", "write_file", "finish")
SPANS_PER_TRACE = 10


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def make_results(n: int, run_id: str, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        epoch, mode, provider = i % 3, MODES[(i // 3) % 3], PROVIDERS[(i // 9) % 3]
        task = i // 27
        reason = REASONS[rng.randrange(len(REASONS))]
        ncalls = rng.randint(1, 4)
        calls: list[dict[str, Any]] = [
            {
                "index": k,
                "purpose": "turn",
                "model": "gemma-3-270m",
                "usage": {"input_tokens": 200 + k * 50, "output_tokens": 30},
                "cost_usd": 0.0001 * (k + 1),
                "latency_ms": rng.uniform(50, 3000),
                "finish_reason": "tool_calls" if k < ncalls - 1 else "stop",
                "iteration": k,
            }
            for k in range(ncalls)
        ]
        rows.append(
            {
                "run_id": run_id,
                "suite": SUITES[task % len(SUITES)],
                "task_id": f"task-{task:05d}",
                "mode": mode,
                "provider": provider,
                "model": "gemma-3-270m",
                "epoch": epoch,
                "passed": reason in ("stop", "submitted") and rng.random() < 0.7,
                "score": rng.random(),
                "grader_explanation": "expected '395' in the final text",
                "finish_reason": reason,
                "category": "success" if reason in ("stop", "submitted") else "capacity",
                "iterations": ncalls - 1,
                "tool_calls": ncalls - 1,
                "llm_calls": ncalls,
                "input_tokens": sum(c["usage"]["input_tokens"] for c in calls),
                "output_tokens": 30 * ncalls,
                "cost_usd": None if provider == "mock" else 0.0001 * ncalls,
                "duration_ms": rng.uniform(100, 20000),
                "trace_id": f"{i:032x}",
                "cassette": f"cassettes/{provider}/{mode}/task-{task:05d}.e{epoch}.yaml",
                "deliverable": {"answer": 395, "steps": ["17*23", "+4"]} if i % 2 else None,
                "text": "The answer is 395. " * 5,
                "error_diagnostic": {"kind": "timeout", "attempts": 3} if i % 50 == 0 else None,
                "no_progress_snapshot": (
                    [{"role": "assistant", "content": "calling kv_get again"}] * 3
                    if reason == "error_no_progress"
                    else None
                ),
                "calls": calls,
            }
        )
    return rows


def _attr(key: str, value: Any) -> str:
    if isinstance(value, bool):
        inner = f'"boolValue":{"true" if value else "false"}'
    elif isinstance(value, int):
        inner = f'"intValue":"{value}"'
    elif isinstance(value, float):
        inner = f'"doubleValue":{value!r}'
    else:
        inner = f'"stringValue":{json.dumps(value)}'
    return f'{{"key":"{key}","value":{{{inner}}}}}'


def _span(trace: str, sid: int, parent: int | None, name: str, t0: int, dur: int, attrs: str,
          events: str = "", error: bool = False) -> str:  # fmt: skip
    status = '{"code":2,"message":"tool failed"}' if error else '{"code":0}'
    return (
        f'{{"traceId":"{trace}","spanId":"{sid:016x}","parentSpanId":"'
        f'{"" if parent is None else f"{parent:016x}"}","name":"{name}","kind":'
        f'{3 if name.startswith("chat") else 1},"startTimeUnixNano":"{t0}",'
        f'"endTimeUnixNano":"{t0 + dur}","attributes":[{attrs}]{events},"status":{status},'
        '"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"harness"}}]},'
        '"scope":{"name":"harness","version":"0.1.0"}}\n'
    )


def write_spans(path: Path, n: int, rng: random.Random) -> None:
    t = 1_763_000_000_000_000_000
    sid = 1
    with path.open("w", encoding="utf-8", buffering=1 << 20) as f:
        for i in range(n // SPANS_PER_TRACE):
            trace = f"{i:032x}"
            mode = MODES[i % 3]
            root = sid
            parts = [
                _span(trace, root, None, f"invoke_agent {mode}", t, 9_000_000_000,
                      ",".join([_attr("gen_ai.operation.name", "invoke_agent"),
                                _attr("gen_ai.agent.name", mode), _attr("harness.mode", mode),
                                _attr("harness.run.finish_reason", "stop"),
                                _attr("harness.run.iterations", 3),
                                _attr("harness.run.cost_usd", 0.0003),
                                _attr("openinference.span.kind", "AGENT")]))
            ]  # fmt: skip
            sid += 1
            for it in range(3):
                it_id = sid
                parts.append(
                    _span(trace, it_id, root, f"iteration {it}", t + it * 3_000_000_000,
                          2_900_000_000, _attr("harness.iteration", it))
                )  # fmt: skip
                chat = ",".join(
                    [
                        _attr("gen_ai.operation.name", "chat"),
                        _attr("gen_ai.request.model", "gemma-3-270m"),
                        _attr("gen_ai.usage.input_tokens", 200 + it * 50),
                        _attr("gen_ai.usage.output_tokens", 30),
                        _attr("harness.cost_usd", 0.0001),
                        _attr("openinference.span.kind", "LLM"),
                    ]
                )
                events = (
                    ',"events":[{"timeUnixNano":"' + str(t + 1) + '","name":"harness.content",'
                    '"attributes":[' + _attr("harness.content.length", 120) + "]}]"
                )
                parts.append(
                    _span(trace, it_id + 1, it_id, "chat gemma-3-270m", t + it * 3_000_000_000,
                          rng.randrange(50_000_000, 2_500_000_000), chat, events)
                )  # fmt: skip
                tool = TOOLS[(i + it) % len(TOOLS)]
                parts.append(
                    _span(trace, it_id + 2, it_id, f"execute_tool {tool}",
                          t + it * 3_000_000_000 + 2_600_000_000,
                          rng.randrange(100_000, 50_000_000),
                          ",".join([_attr("gen_ai.operation.name", "execute_tool"),
                                    _attr("gen_ai.tool.name", tool),
                                    _attr("gen_ai.tool.call.id", f"call_{i}_{it}"),
                                    _attr("openinference.span.kind", "TOOL")]),
                          error=rng.random() < 0.05)
                )  # fmt: skip
                sid += 3
            f.write("".join(parts))
            t += 10_000_000_000


@contextmanager
def timed(label: str, out: dict[str, float]) -> Iterator[None]:
    start, cpu = time.perf_counter(), time.process_time()
    yield
    out[label] = time.perf_counter() - start
    cpu = time.process_time() - cpu  # all threads: DuckDB runs on every core
    print(f"  {label:<28} {out[label]:7.2f} s wall {cpu:7.2f} s CPU", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="keep the database and span file in this dir")
    args = parser.parse_args(argv)
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="store-ingest-"))
    where = args.keep or tmp
    where.mkdir(parents=True, exist_ok=True)
    db, span_file = where / "bench.duckdb", where / "spans.jsonl"
    for p in (db, db.with_name(db.name + ".wal")):
        p.unlink(missing_ok=True)
    times: dict[str, float] = {}
    try:
        print(f"generating {args.results:,} results and {args.spans:,} spans ...", flush=True)
        with timed("generate (not ingest)", times):
            rows = make_results(args.results, "bench-run", rng)
            write_spans(span_file, args.spans, rng)
        size_mb = span_file.stat().st_size / 1e6
        rss_before = _rss_kib("VmRSS")
        peak_reset = _reset_peak()
        print(f"span file {size_mb:,.0f} MB; RSS before ingest {rss_before / 1024:,.0f} MiB")
        with timed("open + begin_run", times):
            store = Store.open(db)
            run_id = store.begin_run(label="bench", run_id="bench-run", suites=list(SUITES))
        with timed("write_results", times):
            n_rows = store.write_results(rows)
        with timed("ingest_spans", times):
            n_spans = store.ingest_spans(run_id, span_file)
        with timed("finish_run + close", times):
            store.finish_run(run_id)
            store.close()
        ingest = sum(times[k] for k in times if k != "generate (not ingest)")
        peak = _rss_kib("VmHWM")
        del rows
        with Store.open(db, read_only=True) as ro, timed("queries (summary/tools/df)", times):
            summary = mode_summary_df(ro, run_id)
            tools = tool_calls_df(ro, run_id)
            cells = results_df(ro, run_id)
        assert n_rows == len(cells) == args.results, (n_rows, len(cells))
        assert n_spans == args.spans, n_spans
        print(
            f"\ningested {n_rows:,} results + {n_spans:,} spans in {ingest:.2f} s "
            f"({n_rows / times['write_results']:,.0f} results/s, "
            f"{n_spans / times['ingest_spans']:,.0f} spans/s)"
        )
        label = "peak RSS during ingest" if peak_reset else "peak RSS (whole process)"
        print(f"{label}: {peak / 1024:,.0f} MiB (input rows held: {rss_before / 1024:,.0f} MiB)")
        print(f"database: {db.stat().st_size / 1e6:,.1f} MB; {len(summary)} summary rows, "
              f"{len(tools)} tools")  # fmt: skip
        verdict = "met" if ingest < 15 else "missed (is the machine busy? compare the CPU times)"
        print(f"aim (ingest < 15 s on 2 cores): {verdict}")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
