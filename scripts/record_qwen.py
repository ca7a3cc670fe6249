"""Record cassettes from Qwen2.5-Coder-0.5B-Instruct on llama.cpp's llama-server, resumably
(``nox -s record_qwen``; docs/recording.md).

1. fetch the checked GGUF (scripts/fetch_model.py) and find or build ``llama-server``
   (scripts/record_llamacpp.py builds it portably for AVX2);
2. start one server on 127.0.0.1:8082 with the model's own chat template (``--jinja``; the
   command of scripts/serve_model.py, ``nox -s serve -- qwen``): it
   answers both profiles, ``llamaserver-qwen-chat`` (OpenAI chat) and
   ``llamaserver-qwen-messages`` (Anthropic messages), with native tool calls;
3. run the pre-flight check on each profile (harness.providers._preflight): a server that does
   not show the model its system message, or whose model ignores it, is refused, and nothing is
   recorded;
4. record with ``harness run --record-mode once --epochs 1``: a cell whose cassette exists is
   replayed, a missing one is recorded. A cassette is written only when its cell finished, so a
   stopped recording loses at most the cells in flight, and the same command later records only
   what is missing. Cells run in the matrix's order (suite, task, provider, mode), so all modes
   of one task follow each other and the server's prefix cache serves their shared prompt;
5. print progress (cassettes done of the plan, cells per hour, time left) every
   ``--every`` seconds, and stop the server whatever happened.

    python scripts/record_qwen.py --providers llamaserver-qwen-chat --suites suites/arithmetic.yaml
           [--modes react,plan_and_solve,reflexion] [--parallel 1] [harness run options]
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fetch_model
from record_llamacpp import find_or_build_llama_server, started
from serve_model import MODELS, server_command

PORT = MODELS["qwen"].port
PROFILES = tuple(profile for profile, _ in MODELS["qwen"].profiles)


def planned_cassettes(
    suites: list[str], modes: list[str], providers: list[str], cassettes: Path, tasks: list[str]
) -> list[Path]:
    """The cassette of every cell the recording asks for (one epoch)."""
    from harness.bench._matrix import expand
    from harness.suites import load_suites

    cells = expand(load_suites(suites), modes, providers, 1, tasks=tasks)
    paths = [c.cassette(cassettes) for c in cells]
    return [p for p in paths if p is not None]


class Progress:
    """Counts the planned cassettes that exist; prints done, cells/hour and time left."""

    def __init__(self, planned: list[Path], every_s: float) -> None:
        self.planned = planned
        self.every_s = every_s
        self.start_done = self.done()
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def done(self) -> int:
        return sum(p.is_file() for p in self.planned)

    def line(self) -> str:
        done = self.done()
        new = done - self.start_done
        hours = (time.monotonic() - self.started) / 3600
        rate = new / hours if hours > 0 else 0.0
        left = len(self.planned) - done
        eta = f"{left / rate:.1f} h left" if rate > 0 else "time left unknown"
        return (
            f"[record] {done}/{len(self.planned)} cassettes ({new} new this run), "
            f"{rate:.0f} cells/hour, {eta}"
        )

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            print(self.line(), flush=True)

    def __enter__(self) -> Progress:
        print(self.line(), flush=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        print(self.line(), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", default=PROFILES[0])
    parser.add_argument("--suites", default="suites", help="comma-separated paths or sources")
    parser.add_argument("--modes", default="react,plan_and_solve,reflexion")
    parser.add_argument("--parallel", type=int, default=1, help="server slots (and cells at once)")
    parser.add_argument("--ctx-per-slot", type=int, default=16384)
    parser.add_argument("--llama-server", default=None, help="path of a llama-server binary")
    parser.add_argument("--logs", default="reports", help="folder for the server's log")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between progress lines")
    parser.add_argument("--db", default="reports/record-qwen.duckdb")
    parser.add_argument("--cassettes", type=Path, default=Path("cassettes"))
    parser.add_argument("--tasks", default="", help="comma-separated task ids or globs")
    args, passthrough = parser.parse_known_args()
    providers = [p for p in args.providers.split(",") if p]
    if unknown := sorted(set(providers) - set(PROFILES)):
        raise SystemExit(f"--providers: unknown {unknown}; known: {list(PROFILES)}")
    suites = [s for s in args.suites.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    tasks = [t for t in args.tasks.split(",") if t]
    planned = planned_cassettes(suites, modes, providers, args.cassettes, tasks)
    missing = sum(not p.is_file() for p in planned)
    print(f"[record] plan: {len(planned)} cells, {missing} to record", flush=True)
    if not missing:
        return 0

    from harness.providers._preflight import check_system_message_sync

    model = fetch_model.fetch(MODELS["qwen"].gguf)
    binary = find_or_build_llama_server(args.llama_server)
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    cmd = server_command(
        binary, model, port=PORT, parallel=args.parallel, ctx_per_slot=args.ctx_per_slot
    )
    with contextlib.ExitStack() as stack:
        stack.enter_context(
            started(cmd, f"http://127.0.0.1:{PORT}/health", logs / "llamaserver-qwen.log")
        )
        for provider in providers:
            result = check_system_message_sync(provider)
            print(f"[record] {result.line()}", flush=True)
            if not result.ok:
                return 2
        run = [
            sys.executable, "-m", "harness.cli", "run", *suites,
            "--providers", ",".join(providers), "--modes", ",".join(modes),
            "--epochs", "1", "--record-mode", "once",
            "--concurrency", str(args.parallel), "--provider-concurrency", str(args.parallel),
            "--db", args.db, "--label", "record-qwen", "--cassettes", str(args.cassettes),
            *(["--tasks", args.tasks] if args.tasks else []), *passthrough,
        ]  # fmt: skip
        with Progress(planned, args.every):
            code = subprocess.run(run, check=False).returncode
        drop_errored(Path(args.db))
        return code


def drop_errored(db: Path) -> None:
    """Cassettes of the last run's cells that ended in error (a server stopped mid-request,
    say) hold a conversation cut short: removed, so that the next run records them again."""
    import duckdb

    if not db.is_file():
        return
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "select distinct cassette from results where status = 'error' and cassette is not "
            "null and run_id = (select run_id from bench_runs order by started_at desc limit 1)"
        ).fetchall()
    for (cassette,) in rows:
        path = Path(cassette)
        if path.is_file():
            print(f"[record] {path}: its cell errored; removed, to be recorded again", flush=True)
            path.unlink()


if __name__ == "__main__":
    raise SystemExit(main())
