"""The redactor against hostile shapes (issue 34, faults round 5): overlapping secrets leave no
part of either (item 15), deep nesting never raises ``RecursionError`` (item 1; the run through
``harness run`` is in tests/bench/test_secret_run_faults.py), and a streamed reply with a key
split over every pair of chunks is scrubbed in linear work (item 6; the time is measured by
``benchmarks/secret_scrub.py``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import pytest

from harness.cassettes._secrets import Redactor

KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in KEY)
A, B = "abcdefgh12", "gh12345678"  # B starts where A ends: "abcdefgh12345678"


def _no_part(text: str | bytes, *secrets: str) -> bool:
    """No run of 6 or more characters of any secret is in ``text``."""
    flat = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return not any(s[i : i + 6] in flat for s in secrets for i in range(len(s) - 5))


# --- item 15: overlapping secrets ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"x {A}345678 y",  # the pair: A then the rest of B
        f"x abcdef{B} y",  # B with the start of A before it
        f"{A}{B}",  # touching, no overlap
        "x " + "ab" + "cdefgh12" * 3 + "345678",  # repeats
    ],
)
def test_overlapping_secrets_leave_no_part_of_either(text: str) -> None:
    redactor = Redactor([A, B])
    for clean in (
        redactor.text(text),
        redactor.data(text.encode()).decode(),
        redactor.value({"k": [text]})["k"][0],
    ):
        assert "REDACTED" in clean
        assert "345678" not in clean, clean
        assert "abcdef" not in clean, clean
    assert Redactor([A, B]).text(f"x {A}345678 y") == "x REDACTED y"


def test_overlapping_secrets_split_over_chunks_leave_no_part() -> None:
    body = b"".join(
        b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": part}}]}).encode()
        for part in ("the keys abcde", "fgh12345", "678 ok")
    )
    body = body.replace(b"}}]}data", b"}}]}\n\ndata") + b"\n\n"
    clean = Redactor([A, B]).body(body)
    text = "".join(
        json.loads(line[5:])["choices"][0]["delta"]["content"]
        for line in clean.split(b"\n\n")
        if line.startswith(b"data:")
    )
    assert text == "the keys REDACTED ok"


def test_a_secret_repeating_itself_is_covered_whole() -> None:
    assert Redactor(["aaaaaaaa"]).text("x aaaaaaaaaaa y") == "x REDACTED y"


# --- item 1: any depth ------------------------------------------------------------------------


@dataclass
class Node:
    child: Any


#: 5,000 is past Python's recursion limit already; 100,000 takes most of a minute at load.
@pytest.mark.parametrize("depth", [500, 5_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_deeply_nested_values_and_documents_are_scrubbed_without_recursion_error(
    depth: int,
) -> None:
    redactor = Redactor([KEY])
    nested: Any = KEY
    for n in range(depth):
        nested = [nested] if n % 3 == 0 else {"k": nested} if n % 3 == 1 else Node(nested)
    assert "REDACTED" in repr_tail(redactor.value(nested))
    text = "[" * depth + '"' + ESCAPED + '"' + "]" * depth  # the key in escapes, deep down
    clean = redactor.value(text)
    assert clean.count("REDACTED") == 1
    assert "\\u0073\\u006b" not in clean
    body = redactor.body(json.dumps({"choices": [{"message": {"content": text}}]}).encode())
    assert b"REDACTED" in body
    assert b"\\u0073\\u006b" not in body
    sse = b"data: " + b'{"a":' * depth + b'"' + ESCAPED.encode() + b'"' + b"}" * depth + b"\n\n"
    assert redactor.body(sse).count(b"REDACTED") == 1
    kept = "[" * depth + "]" * depth
    assert redactor.value(kept) is kept  # nothing to scrub: the same object


def repr_tail(value: Any) -> str:
    """The innermost value of a nest made by the test above, as text (no recursion)."""
    while not isinstance(value, str):
        if isinstance(value, list):
            value = value[0]
        else:
            value = value["k"] if isinstance(value, dict) else value.child
    return value


def test_a_cycle_is_left_as_it_is() -> None:
    loop: list[Any] = [KEY]
    loop.append(loop)
    clean = Redactor([KEY]).value(loop)
    assert clean[0] == "REDACTED"
    assert clean[1] is loop


# --- item 6: linear work for a key split over every pair of chunks ------------------------------


def _split_stream(chunks: int) -> bytes:
    half = len(KEY) // 2
    lines = []
    for n in range(chunks):
        content = KEY[:half] if n % 2 == 0 else KEY[half:] + " "
        event = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {"content": content},
                              "finish_reason": None}]}  # fmt: skip
        lines.append(b"data: " + json.dumps(event).encode() + b"\n\n")
    return b"".join(lines)


def _lines_run(fn: Callable[[], Any], budget: int) -> int:
    """How many lines of the redactor's modules ``fn`` runs (stops past ``budget``)."""
    count = 0

    class Over(Exception):
        pass

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
            if count > budget:
                raise Over
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if "harness/cassettes/_s" in frame.f_code.co_filename else None

    sys.settrace(tracer)
    try:
        fn()
    except Over:
        pass
    finally:
        sys.settrace(None)
    return count


def test_a_key_split_over_every_pair_of_chunks_is_scrubbed_in_linear_work() -> None:
    redactor = Redactor([KEY])
    small, large = _split_stream(500), _split_stream(2_000)
    clean = redactor.body(large)
    assert KEY[:8].encode() not in clean
    assert KEY[-8:].encode() not in clean
    assert clean.count(b"REDACTED") == 1_000
    per_small = _lines_run(lambda: redactor.body(small), 10**7)
    per_large = _lines_run(lambda: redactor.body(large), 6 * per_small)
    # Four times the chunks: four times the work (quadratic work was sixteen times).
    assert per_large <= 5 * per_small, (per_small, per_large)
