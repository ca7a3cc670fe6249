"""Sandbox overhead: what the bubblewrap sandbox of the ``shell`` tool and ``command`` graders
adds to a command, against the same command run with ``sandbox="none"`` (same limits and clean
environment, no isolation).

Each command runs ``--repeat`` times per way, alternating; medians are reported, and their
difference is the sandbox's cost (namespace and mount setup, the workspace ``chown`` as root).

    python benchmarks/sandbox_overhead.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from harness.tools._sandbox import SandboxKind, run_command, sandbox_problem

COMMANDS = {
    "true": "true",
    "python -c pass": "python -c pass",
    "pytest (1 test)": "python -m pytest -q -p no:cacheprovider",
}


async def _once(command: str, ws: Path, sandbox: SandboxKind) -> float:
    started = time.perf_counter()
    done = await run_command(command, ws, timeout_s=60, sandbox=sandbox)
    if not done.ok:
        raise SystemExit(f"{command!r} failed ({sandbox}): {done.describe()}\n{done.output}")
    return time.perf_counter() - started


async def main(repeat: int) -> None:
    problem = sandbox_problem()
    if problem is not None:
        raise SystemExit(f"no sandbox here: {problem}")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "test_one.py").write_text("def test_one():\n    assert True\n")
        print(f"{'command':<18} {'bwrap ms':>9} {'none ms':>9} {'added ms':>9}")
        for label, command in COMMANDS.items():
            times: dict[str, list[float]] = {"bwrap": [], "none": []}
            for _ in range(repeat):
                for way in ("bwrap", "none"):
                    times[way].append(await _once(command, ws, way))  # type: ignore[arg-type]
            boxed = statistics.median(times["bwrap"]) * 1000
            plain = statistics.median(times["none"]) * 1000
            print(f"{label:<18} {boxed:>9.1f} {plain:>9.1f} {boxed - plain:>9.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    asyncio.run(main(parser.parse_args().repeat))
