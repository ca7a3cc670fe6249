"""Ctrl-C during a slow BFCL call: seconds from SIGINT to the end of ``harness run`` (issue 34,
item 2; the brief: within 2 s).

The loopback model of ``tests/e2e/test_bfcl_cli_faults.py`` plays three BFCL multi-turn
entries; in one it calls ``power(base=3, exponent=10**9)`` (hours of one core, in BFCL's
killable worker). One second after that call was sent, SIGINT goes to ``harness run``; the
figure is the time until the process has exited (exit 130 checked), and the lines it printed
after the signal are shown with their offsets. Median of the rounds.

    python benchmarks/ctrl_c_bfcl.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from test_bfcl_cli_faults import SUITE, Project, Seen, _provider


def once(show: bool) -> float:
    seen = Seen()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _provider(seen))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = Path(tempfile.mkdtemp(prefix="ctrl-c-bfcl-"))
    (root / "harness.toml").write_text(
        f'[providers.fake]\nkind = "openai"\nmodel = "m"\nmax_retries = 0\n'
        f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    (root / "slow.yaml").write_text(SUITE, encoding="utf-8")
    os.environ["HARNESS_LIVE_PREFLIGHT"] = "0"  # the loopback model answers BFCL prompts only
    proc = Project(root, seen).run()
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.monotonic(), line.rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not seen.slow_started.wait(600) or proc.poll() is not None:
            raise SystemExit("the slow call never started:\n" + "\n".join(x for _, x in lines))
        time.sleep(1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=600)
        took = time.monotonic() - sent
    finally:
        proc.kill()
        seen.slow_started.set()
        server.shutdown()
    reader.join(5)
    if proc.returncode != 130:
        raise SystemExit(f"exit {proc.returncode}, not 130:\n" + "\n".join(x for _, x in lines))
    if show:
        for at, line in lines:
            if at >= sent:
                print(f"    +{at - sent:6.3f} s  {line[:110]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="print what the run printed")
    args = parser.parse_args()
    took = []
    for n in range(args.rounds):
        load = os.getloadavg()[0]
        took.append(once(args.show))
        print(f"round {n + 1}: {took[-1]:.3f} s from SIGINT to exit (load {load:.1f})", flush=True)
    print(
        f"Ctrl-C during a slow BFCL call: median {statistics.median(took):.3f} s "
        f"(min {min(took):.3f}, max {max(took):.3f}, {len(took)} rounds)"
    )


if __name__ == "__main__":
    main()
