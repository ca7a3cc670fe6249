"""Serve a recorded model for live runs, the way it was recorded (``nox -s serve -- qwen``;
docs/providers.md).

1. fetch the checked GGUF (scripts/fetch_model.py; cached in .cache/models/);
2. find or build ``llama-server`` portably, once (scripts/record_llamacpp.py: AVX2, never
   ``-march=native``, which dies with SIGILL on machines whose cpuid claims more than they run;
   cached in .cache/llama-server/);
3. start it in the foreground on 127.0.0.1 with the flags the model's profiles need: the
   GGUF's own chat template (``--jinja``: system role, native tool calls), the context and
   slots, ``/metrics``; print the profile names to use once it answers, and stop it cleanly
   on Ctrl-C.

    python scripts/serve_model.py qwen [--port 8082] [--parallel 1] [--ctx-per-slot 16384]

scripts/record_qwen.py starts the same server with :func:`server_command`.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fetch_model
from record_llamacpp import find_or_build_llama_server, wait_ready


@dataclass(frozen=True)
class Served:
    """A recorded model: its GGUF (scripts/fetch_model.py) and the profiles that use it."""

    gguf: str
    port: int
    #: (profile, what it speaks), as in pyproject.toml's [tool.harness.providers.*].
    profiles: tuple[tuple[str, str], ...]


MODELS = {
    "qwen": Served(
        gguf="qwen2.5-coder-0.5b",
        port=8082,
        profiles=(
            ("llamaserver-qwen-chat", "OpenAI chat completions"),
            ("llamaserver-qwen-messages", "Anthropic messages"),
        ),
    ),
}


def server_command(
    binary: Path,
    model: Path,
    *,
    port: int,
    parallel: int = 1,
    ctx_per_slot: int = 16384,
    threads: int = 2,
) -> list[str]:
    """llama-server's command line for a recorded instruct model (BFCL's multi-turn prompts
    are ~5,800 tokens before the conversation: 16,384 per slot)."""
    return [
        str(binary), "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
        "--jinja",  # the GGUF's own chat template: system role, tools, <tool_call> tags
        "--ctx-size", str(ctx_per_slot * parallel), "--parallel", str(parallel),
        "--threads", str(threads), "--no-webui", "--metrics",
    ]  # fmt: skip


def next_steps(name: str, port: int) -> list[str]:
    """What to run against the server (printed once it answers)."""
    served = MODELS[name]
    lines = [f"{profile} ({speaks})" for profile, speaks in served.profiles]
    first = served.profiles[0][0]
    override = ""
    if port != served.port:
        override = f" --provider-opt {first}.base_url=http://127.0.0.1:{port}/v1"
    lines.append(
        f"harness run bfcl:simple_python --providers {first}{override} --modes react "
        "--tasks 'simple_python_[0-7]' --record-mode all --cassettes reports/live-cassettes "
        "--label live"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="qwen", choices=sorted(MODELS))
    parser.add_argument("--port", type=int, default=None, help="default: the profiles' port")
    parser.add_argument("--parallel", type=int, default=1, help="server slots")
    parser.add_argument("--ctx-per-slot", type=int, default=16384)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--llama-server", default=None, help="path of a llama-server binary")
    args = parser.parse_args(argv)
    served = MODELS[args.model]
    port = args.port or served.port
    gguf = fetch_model.fetch(served.gguf)
    binary = find_or_build_llama_server(args.llama_server)
    cmd = server_command(
        binary, gguf, port=port, parallel=args.parallel, ctx_per_slot=args.ctx_per_slot,
        threads=args.threads,
    )  # fmt: skip
    print(f"[serve] {shlex.join(cmd)}", flush=True)
    return serve(cmd, port, next_steps(args.model, port))


def _die_with_parent() -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (``PR_SET_PDEATHSIG``): a
    server whose supervisor was killed stops instead of holding its port and cores."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def serve(cmd: list[str], port: int, steps: list[str]) -> int:
    """Run the server ``cmd`` in the foreground until it exits or this process is stopped, then
    stop it. Ctrl-C, SIGTERM (``kill``, ``docker stop``) and SIGHUP (the terminal closed) all
    stop the server; so does this process's death by SIGKILL, or its parent's (nox's)."""
    _die_with_parent()  # nox killed: this process gets SIGTERM, which stops the server
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    proc = subprocess.Popen(cmd, preexec_fn=_die_with_parent)  # its log on this terminal
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", proc)
        print(f"[serve] ready on http://127.0.0.1:{port}; use --providers", flush=True)
        for line in steps:
            print(f"[serve]   {line}", flush=True)
        print("[serve] Ctrl-C stops it", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        # A second signal while the server stops (nox sends SIGTERM 0.3 s after SIGINT) must
        # not cut this short and leave the server running.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    raise SystemExit(main())
