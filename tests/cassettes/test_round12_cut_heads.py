"""A cut through a secret leaves nothing of it (adversary round 12 part A, issue 34 item 15).

The harness and OpenTelemetry cut long texts before the sinks scrub them (a span's content at
``content_max_chars``, 2,000; an attribute at 4,096 characters; a transcript's message at
20,000 with ``[... N characters cut ...]``; a turn's reply at 2,000 with ``…``). With a
secret straddling the cut, its head survived: the trace file held ``sk-trunc-a`` twice. Now a
head of a secret of 8 characters or more that ends a text or a JSON string in it, or comes just
before a cut mark, is ``REDACTED`` too, by the run's redactor (``cut_heads=True``: rows and
spans); a cassette's redactor leaves it to the scrub across a stream's chunks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from harness.cassettes._cutheads import CUT_HEAD_CHARS
from harness.cassettes._secrets import Redactor

KEY = "sk-trunc-abcdefghijklmnop1234567890"


@pytest.mark.parametrize(
    "text",
    [
        "x" * 1990 + KEY[:10],  # cut at the end (telemetry, OpenTelemetry's limit)
        "x" * 1990 + KEY[:20] + "…",  # a turn's reply, an error's snippet
        "x" * 50 + KEY[:12] + "\n[... 99 characters cut ...]",  # a transcript's message
        "x" * 5 + KEY[:CUT_HEAD_CHARS] + "…",
    ],
    ids=["end", "ellipsis", "transcript-mark", "shortest-head"],
)
def test_a_head_a_cut_left_of_a_secret_is_redacted(text: str) -> None:
    clean = Redactor([KEY], cut_heads=True).text(text)
    assert KEY[:CUT_HEAD_CHARS] not in clean  # "sk-trunc-a" was kept before
    assert "REDACTED" in clean
    assert clean.startswith("x" * 5)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 20 + KEY[: CUT_HEAD_CHARS - 1],  # too short to say anything of the secret
        # Running on into other characters: not where a cut or a split ends a text (a head
        # that ends a word, "KEY[:12] is ...", is redacted since stop 47: a split leaves one).
        KEY[:12] + "zz is the start of another key, and the text goes on",
        "the whole key " + KEY + " then more",  # whole: replaced as ever
    ],
    ids=["short-head", "not-at-a-cut", "whole"],
)
def test_what_is_not_a_cut_head_is_scrubbed_as_before(text: str) -> None:
    clean = Redactor([KEY], cut_heads=True).text(text)
    before = text.replace(KEY, "REDACTED")
    assert clean == before


def test_many_secrets_find_the_head_too() -> None:
    """Past 32 secrets the heads are looked up by their first 8 characters, not searched."""
    secrets = [f"tok-{n:04d}-{'q' * 20}" for n in range(200)] + [KEY]
    clean = Redactor(secrets, cut_heads=True).text("y" * 100 + KEY[:15])
    assert clean == "y" * 100 + "REDACTED"


SUITE = f"""\
suite: cut
tasks:
  - id: long
    prompt: "say it"
    expect: {{kind: contains, value: x}}
    mock:
      turns:
        - {{text: "{"x" * 1990}{KEY} and some more text after the key"}}
"""


@pytest.mark.slow
def test_a_secret_straddling_the_content_cut_leaves_nothing_in_traces_or_rows(
    tmp_path: Path,
) -> None:
    (tmp_path / "cut.yaml").write_text(SUITE, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "MY_API_KEY": KEY, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "cut.yaml", "--providers", "mock",
         "--modes", "react", "--no-progress", "--db", "h.duckdb", "--trace-file", "t.jsonl"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    head = KEY[:CUT_HEAD_CHARS]
    traces = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert head not in traces  # "sk-trunc-a" twice before (output.value, content.text)
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT * FROM results").fetchall()
        spans = con.execute("SELECT * FROM spans").fetchall()
    assert head not in repr(rows)
    assert head not in repr(spans)


def test_a_streams_chunks_are_not_taken_for_cut_texts() -> None:
    """A secret split over two chunks ends the first one's string: the stream scrub cuts it out
    of both (a cut-heads redactor scrubbing each chunk first left the second half behind)."""
    first = {"choices": [{"index": 0, "delta": {"content": "key " + KEY[:14]}}]}
    second = {"choices": [{"index": 0, "delta": {"content": KEY[14:] + " done"}}]}
    clean = Redactor([KEY]).stream([first, second])
    joined = "".join(c["choices"][0]["delta"]["content"] for c in clean)
    assert joined == "key REDACTED done"
