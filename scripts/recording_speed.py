"""The recording server's own speed, read from the cassettes it answered (docs/recording.md).

llama-server puts a ``timings`` object in every OpenAI-format reply: prompt tokens evaluated
(``prompt_n``) and read from its prefix cache (``cache_n``), generated tokens
(``predicted_n``), and the milliseconds each took. Summed over a provider's cassettes, they
give prompt and generation tokens/s, the share of prompt tokens the cache served, and the
server time the cache saved (cached tokens at the measured prompt speed).

    python scripts/recording_speed.py [--cassettes cassettes] [--providers llamaserver-qwen-chat]
        [--suites arithmetic,lookup]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import yaml


def timings(folder: Path) -> tuple[Counter[str], int]:
    """Summed timings of every reply in the cassettes under ``folder``, and the cell count."""
    total: Counter[str] = Counter()
    cells = 0
    for path in sorted(folder.rglob("*.yaml")):
        cells += 1
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for item in data.get("interactions") or []:
            try:
                reply = json.loads(item["response"]["body"]["string"])
            except (KeyError, TypeError, ValueError):
                continue
            t = reply.get("timings") if isinstance(reply, dict) else None
            if not isinstance(t, dict):
                continue
            total["calls"] += 1
            for key in ("prompt_n", "cache_n", "predicted_n", "prompt_ms", "predicted_ms"):
                value = t.get(key)
                if isinstance(value, int | float):
                    total[key] += value  # type: ignore[assignment]
    return total, cells


def line(name: str, t: Counter[str], cells: int) -> str:
    if not t["calls"]:
        return f"| {name} | {cells} | 0 | no timings recorded | | | | |"
    prompt_tps = t["prompt_n"] / (t["prompt_ms"] / 1000) if t["prompt_ms"] else 0.0
    gen_tps = t["predicted_n"] / (t["predicted_ms"] / 1000) if t["predicted_ms"] else 0.0
    seen = t["prompt_n"] + t["cache_n"]
    cached = t["cache_n"] / seen if seen else 0.0
    server_s = (t["prompt_ms"] + t["predicted_ms"]) / 1000
    saved_s = t["cache_n"] / prompt_tps if prompt_tps else 0.0
    return (
        f"| {name} | {cells} | {t['calls']} | {prompt_tps:.0f} | {gen_tps:.1f} | "
        f"{cached:.0%} | {server_s / 60:.1f} min | {saved_s / 60:.1f} min |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cassettes", type=Path, default=Path("cassettes"))
    parser.add_argument("--providers", default="llamaserver-qwen-chat")
    parser.add_argument("--suites", default="", help="comma-separated (default: every suite)")
    args = parser.parse_args()
    suites = [s for s in args.suites.split(",") if s] or sorted(
        p.name for p in args.cassettes.iterdir() if p.is_dir()
    )
    print(
        "| suite / provider | cells | calls | prompt tok/s | generated tok/s | prompt tokens "
        "from cache | server time | saved by the cache |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    grand: Counter[str] = Counter()
    grand_cells = 0
    for provider in args.providers.split(","):
        for suite in suites:
            folder = args.cassettes / suite / provider
            if not folder.is_dir():
                continue
            t, cells = timings(folder)
            grand.update(t)
            grand_cells += cells
            print(line(f"{suite} / {provider}", t, cells))
    print(line("all", grand, grand_cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
