"""Does llama-server stop generating when the harness gives up on a request? (docs/faults.md)

Sends one long chat completion (a count to 5,000, ``max_tokens`` = ``--max-tokens``) through the
harness's own provider (``llamaserver-qwen-chat`` pointed at ``--url``) to a running llama-server
started with ``--metrics``, streamed or not, and gives up after ``--after`` seconds: by
cancelling the call (what Ctrl-C does to the cells in flight, ``--how cancel``) or by the
provider's own ``timeout_s`` (``--how timeout``). Then it watches the server's ``/metrics``:
how long the slot stays busy (``requests_processing``) after that, and how many tokens the
request generated in all (``tokens_predicted_total``, counted when the slot is released).

    python scripts/cancel_measure.py --url http://127.0.0.1:8093 --stream --how cancel
    python scripts/cancel_measure.py --url http://127.0.0.1:8093 --no-stream --how timeout

Use a server of your own on another port (one slot; the figures are per request).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import httpx

from harness.core._messages import Message
from harness.errors import ProviderError
from harness.providers._base import Request
from harness.providers._registry import resolve_provider

PROMPT = "Count from 1 to 5000, one number per line, with no other text."


def metrics(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("llamacpp:"):
            name, _, value = line.partition(" ")
            out[name.removeprefix("llamacpp:")] = float(value)
    return out


async def measure(url: str, stream: bool, how: str, after_s: float, max_tokens: int) -> str:
    opts: dict[str, Any] = {"base_url": f"{url}/v1", "max_retries": 0, "stream": stream}
    if how == "timeout":
        opts["timeout_s"] = after_s
    provider, model, owned = resolve_provider("llamaserver-qwen-chat", None, opts)
    request = Request(
        messages=[Message.user(PROMPT)], model=model, max_tokens=max_tokens, temperature=0.0
    )
    deltas: list[object] = []
    before = metrics(url)
    started = time.monotonic()
    call = provider.complete(request, (lambda *d: deltas.append(d)) if stream else None)
    try:
        if how == "timeout":
            await call
        else:
            await asyncio.wait_for(call, after_s)
    except (TimeoutError, ProviderError):
        pass
    cut = time.monotonic()
    busy_s = None
    while time.monotonic() - cut < 300:
        if metrics(url).get("requests_processing", 0) == 0:
            busy_s = time.monotonic() - cut
            break
        await asyncio.sleep(0.25)
    if owned:
        await provider.aclose()
    generated = metrics(url)["tokens_predicted_total"] - before["tokens_predicted_total"]
    busy = f"{busy_s:.1f} s" if busy_s is not None else "more than 300 s"
    return (
        f"stream={stream} how={how}: gave up after {cut - started:.1f} s ({len(deltas)} deltas "
        f"received); the slot was busy {busy} longer; {generated:.0f} tokens generated in all "
        f"(max_tokens {max_tokens})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8093")
    parser.add_argument("--stream", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--how", choices=["cancel", "timeout"], default="cancel")
    parser.add_argument("--after", type=float, default=20.0, help="seconds before giving up")
    parser.add_argument("--max-tokens", type=int, default=1500)
    args = parser.parse_args()
    line = asyncio.run(measure(args.url, args.stream, args.how, args.after, args.max_tokens))
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
