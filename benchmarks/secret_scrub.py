"""Scrubbing a streamed reply with a key split over every pair of chunks (issue 34, item 6).

A cassette's streamed body is scrubbed chunk by chunk and across chunks
(``Redactor.body``). The reply here is OpenAI SSE: N chunks of ~86 bytes (``id``, ``object``,
``model``, one choice with ``index``, ``delta.content`` and ``finish_reason``), the content
alternating the key's first half and its second half: N/2 keys, each split over two chunks.
Before the fix the work grew with chunks times keys found (8k / 16k / 32k chunks: 2.0 / 7.1 /
26.8 s); now it grows with the body. Target: 32,000 chunks under 1 s. CPU time of the call,
median of the rounds; every half is checked to be gone.

    python benchmarks/secret_scrub.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from harness.cassettes._secrets import Redactor

KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"


def stream(chunks: int) -> bytes:
    half = len(KEY) // 2
    lines = []
    for n in range(chunks):
        content = KEY[:half] if n % 2 == 0 else KEY[half:] + " "
        event = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {"content": content},
                              "finish_reason": None}]}  # fmt: skip
        lines.append(b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n")
    return b"".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunks", type=int, nargs="*", default=[8_000, 16_000, 32_000])
    args = parser.parse_args()
    redactor = Redactor([KEY])
    for chunks in args.chunks:
        body = stream(chunks)
        times = []
        for _ in range(args.rounds):
            start = time.process_time()
            clean = redactor.body(body)
            times.append(time.process_time() - start)
        half = len(KEY) // 2
        assert KEY[:half].encode() not in clean
        assert KEY[half:].encode() not in clean
        assert clean.count(b"REDACTED") == chunks // 2
        print(
            f"{chunks:>7,} chunks ({len(body) / 1e6:.2f} MB): "
            f"{statistics.median(times):.3f} s CPU [{min(times):.3f}-{max(times):.3f}]"
        )


if __name__ == "__main__":
    main()
