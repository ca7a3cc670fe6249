"""Reading a streamed reply's lines: the harness's own bounded reader against httpx's
``aiter_lines`` (issue 34: a reply is read up to 64 MiB; httpx's reader held a line without end
whole, so the harness counts what it reads itself).

The reply is OpenAI SSE, N chunks of ~110 bytes each, served by an ``httpx.MockTransport`` in
pieces of 4 KiB (a line often broken across two); both readers run in the same process, in turn,
and the ratio of their medians is the figure (CPU time, rounds alternating).

    python benchmarks/reply_lines.py --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator

import httpx

from harness.providers._bodies import lines


def body(chunks: int) -> bytes:
    event = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "token"}, "finish_reason": None}],
    }
    line = b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"
    return line * chunks  # fmt: skip


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, data: bytes, size: int = 4096) -> None:
        self.data, self.size = data, size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), self.size):
            yield self.data[start : start + self.size]


async def _count(data: bytes, ours: bool) -> int:
    response = httpx.Response(200, stream=_Pieces(data))
    reader = lines(response) if ours else response.aiter_lines()
    return sum([1 async for _ in reader])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks", type=int, nargs="*", default=[10_000, 100_000])
    args = parser.parse_args()
    for chunks in args.chunks:
        data = body(chunks)
        times: dict[bool, list[float]] = {True: [], False: []}
        counts = set()
        for _ in range(args.rounds):
            for ours in (True, False):
                start = time.process_time()
                counts.add(asyncio.run(_count(data, ours)))
                times[ours].append(time.process_time() - start)
        assert counts == {2 * chunks}, counts  # the same lines from both readers
        ours, theirs = statistics.median(times[True]), statistics.median(times[False])
        print(
            f"{chunks:>8,} chunks ({len(data) / 1e6:.1f} MB): harness {ours:.3f} s, "
            f"httpx aiter_lines {theirs:.3f} s, ratio {ours / theirs:.2f}"
        )


if __name__ == "__main__":
    main()
