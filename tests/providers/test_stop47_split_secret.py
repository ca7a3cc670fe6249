"""A key split between a reply's reasoning and its answer leaves nothing of it in any sink
(issue 34: adversary round 20 part A's open fault, fixed by the lead in stop 47).

A server that sends ``reasoning_content: "...sk-SECRET2"`` and then ``content: "0abc..."``
splits its key over two fields. The cassette was clean (``Redactor.stream`` joins a reply's text
fields), but the row's ``text`` and transcript, the trace file and the spans each hold one
field: each held one half, and neither half is the key. Now the run's redactor takes a tail of
a key at the start of a text, of a JSON string or just after a cut mark as it takes a head at
the end of one (``CutHeads``): both halves are ``REDACTED`` whenever one is 8 characters or
more. A real CLI run records from a real loopback SSE server; the same split from the mock
provider; and the tails a cut that keeps a text's end leaves (a grader's stderr, ``"…" +
text[-2000:]``)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import zlib
from pathlib import Path

import duckdb
import pytest
from fault_server import Fault, FaultServer, chunked

from harness.cassettes._cutheads import CUT_HEAD_CHARS
from harness.cassettes._secrets import Redactor

KEY = "sk-SECRET20abcdefghijklmnopqrstuv"
SPLIT = 10  # "sk-SECRET2" | "0abcdef..."


@pytest.mark.parametrize(
    "text",
    [
        KEY[SPLIT:] + " is what the answer starts with",  # a text that begins in the key
        '{"content":"' + KEY[SPLIT:] + ' and then"}',  # a JSON string that does
        "…" + KEY[4:] + " the end a cut kept",  # a cut that kept the end
        "expected 'answer' in text, got '" + KEY[SPLIT:] + " is it'",  # a quotation
        "said\n" + KEY[SPLIT:],  # a line of a judge's transcript
        "head\n[... 99 characters cut ...]\n" + KEY[12:] + " tail",
        KEY[-CUT_HEAD_CHARS:] + " shortest tail",
    ],
    ids=["text-start", "json-string", "ellipsis", "quoted", "line", "cut-mark", "shortest-tail"],
)
def test_a_tail_a_split_or_cut_left_of_a_key_is_redacted(text: str) -> None:
    clean = Redactor([KEY], cut_heads=True).text(text)
    assert KEY[-CUT_HEAD_CHARS:] not in clean
    assert "REDACTED" in clean


@pytest.mark.parametrize(
    "text",
    [
        KEY[-(CUT_HEAD_CHARS - 1) :] + " too short to say anything of the key",
        "the text goes on x" + KEY[SPLIT:] + " not where a word begins",
        "the whole key " + KEY + " then more",
    ],
    ids=["short-tail", "not-at-a-cut", "whole"],
)
def test_what_is_not_a_cut_tail_is_scrubbed_as_before(text: str) -> None:
    assert Redactor([KEY], cut_heads=True).text(text) == text.replace(KEY, "REDACTED")


@pytest.mark.parametrize(
    "text",
    [
        "expected 'answer' in text, got 'I will say " + KEY[:SPLIT] + "'",  # a quotation
        "ANSWER:\nI will say " + KEY[:SPLIT] + "\n\nRUBRIC: ...",  # a judge's prompt
        '{"explanation":"got \\"' + KEY[:SPLIT] + '\\""}',  # JSON of a quotation
    ],
    ids=["quoted", "line", "json-escape"],
)
def test_a_head_a_split_left_is_redacted_where_it_is_quoted(text: str) -> None:
    clean = Redactor([KEY], cut_heads=True).text(text)
    assert KEY[:CUT_HEAD_CHARS] not in clean
    assert "REDACTED" in clean


def test_a_cassettes_redactor_leaves_tails_to_the_stream_scrub() -> None:
    """Chunks are not cut texts: without ``cut_heads`` a chunk starting with a tail is kept
    (the stream scrub cuts the whole key across the chunks)."""
    assert Redactor([KEY]).text(KEY[SPLIT:]) == KEY[SPLIT:]


def _sse(*deltas: dict[str, str]) -> bytes:
    lines = [
        "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "model": "m",
                               "choices": [{"index": 0, "delta": d, "finish_reason": None}]})
        for d in deltas
    ]  # fmt: skip
    done = {"id": "c", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}  # fmt: skip
    lines += ["data: " + json.dumps(done), "data: [DONE]"]
    return chunked("text/event-stream", *(line + "\n\n" for line in lines))


SUITE = """\
suite: split
tasks:
  - id: t
    prompt: "say it"
    expect: {kind: contains, value: answer}
"""

MOCK_SUITE = f"""\
suite: split
tasks:
  - id: t
    prompt: "say it"
    expect: {{kind: contains, value: answer}}
    mock:
      turns:
        - {{thinking: "I will say {KEY[:SPLIT]}", text: "{KEY[SPLIT:]} is the answer"}}
"""


def _cli(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path),
            "HOME": str(tmp_path)}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--modes", "react",
         "--no-progress", "--db", "h.duckdb", "--trace-file", "t.jsonl", *args],
        cwd=tmp_path, env={**base, **env}, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


def _every_sink(tmp_path: Path) -> str:
    """The trace file, every result column (the transcript inflated) and every span, as text."""
    seen = [(tmp_path / "t.jsonl").read_text(encoding="utf-8")]
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT * FROM results").fetchall()
        seen.append(repr(con.execute("SELECT * FROM spans").fetchall()))
    assert rows
    for row in rows:
        seen += [zlib.decompress(v).decode() if isinstance(v, bytes) else repr(v) for v in row]
    return "\n".join(seen)


def _assert_no_half(seen: str) -> None:
    assert KEY[:SPLIT] not in seen  # "I will say sk-SECRET2" before
    assert KEY[SPLIT:] not in seen  # "0abcdef... is the answer" before
    assert KEY[-CUT_HEAD_CHARS:] not in seen
    assert "REDACTED is the answer" in seen


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("reasoning_first", [True, False], ids=["reasoning-first", "answer-first"])
def test_a_key_a_server_splits_over_reasoning_and_answer_reaches_no_sink(
    tmp_path: Path, reasoning_first: bool
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE, encoding="utf-8")
    thought = {"reasoning_content": "I will say " + KEY[:SPLIT]}
    said = {"content": KEY[SPLIT:] + " is the answer"}
    if not reasoning_first:  # the answer holds the head, the reasoning after it the tail
        thought = {"reasoning_content": KEY[SPLIT:] + " is the answer"}
        said = {"content": "I will say " + KEY[:SPLIT]}
    reply = _sse(thought, said) if reasoning_first else _sse(said, thought)
    with FaultServer([Fault.raw(reply)], lifetime_s=120) as server:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.url,
               "HARNESS_LIVE_PREFLIGHT": "0"}  # fmt: skip
        run = _cli(tmp_path, env, "--providers", "openai:m", "--record-mode", "all")
    assert run.returncode in (0, 1), run.stdout + run.stderr  # passed or failed: stored
    seen = _every_sink(tmp_path)
    assert "I will say REDACTED" in seen, seen[:2000]
    assert "REDACTED is the answer" in seen, seen[:2000]
    assert KEY[:SPLIT] not in seen
    assert KEY[SPLIT:] not in seen
    cassettes = "".join(p.read_text() for p in (tmp_path / "cassettes").rglob("*.yaml"))
    assert "REDACTED" in cassettes
    assert KEY[:SPLIT] not in cassettes
    assert KEY[SPLIT:] not in cassettes


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_same_split_from_the_mock_reaches_no_sink(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(MOCK_SUITE, encoding="utf-8")
    run = _cli(tmp_path, {"MY_API_KEY": KEY}, "--providers", "mock")
    assert run.returncode == 0, run.stdout + run.stderr
    _assert_no_half(_every_sink(tmp_path))


def test_the_longest_part_ending_at_a_place_wins_whatever_secret_it_is_of() -> None:
    """Two secrets whose heads end at the same place: the longer part is cut, not the one whose
    head was looked at first (``"0123..."`` sorts first and left the ``x`` of ``"x0123..."``)."""
    secrets = ["0123456789abcdefgh", "x0123456789abcdefyz"]
    assert Redactor(secrets, cut_heads=True).text("say x0123456789abc") == "say REDACTED"


def _by_definition(text: str, secrets: list[str]) -> set[int]:
    """The characters the definition redacts: whole secrets; at each place a text, word or
    quotation ends, the longest head (8 characters or more) of a secret ending there; at each
    place one begins, the longest tail beginning there. Tried one slice at a time."""
    from harness.cassettes._cutheads import _ENDS, _STARTS

    spans = [(m.start(), m.start() + len(s)) for s in secrets
             for m in re.finditer("(?=" + re.escape(s) + ")", text)]  # fmt: skip
    for end in {m.start() for m in _ENDS.finditer(text)} | {len(text)}:
        heads = [a for a in range(end) if end - a >= CUT_HEAD_CHARS
                 and any(s.startswith(text[a:end]) for s in secrets)]  # fmt: skip
        spans += [(min(heads), end)] if heads else []
    for start in {m.end() for m in _STARTS.finditer(text)} | {0}:
        tails = [b for b in range(start, len(text) + 1) if b - start >= CUT_HEAD_CHARS
                 and any(s.endswith(text[start:b]) for s in secrets)]  # fmt: skip
        spans += [(start, max(tails))] if tails else []
    return {i for a, b in spans for i in range(a, b)}


@pytest.mark.parametrize("alphabet", ["ab-", "ab '", "a…\\", 'a"b'])
def test_what_is_cut_is_what_the_definition_says(alphabet: str) -> None:
    from harness.cassettes._cutheads import CutHeads

    rng = random.Random(alphabet)
    for _ in range(3_000):
        secrets = ["".join(rng.choice(alphabet) for _ in range(rng.randint(9, 14)))
                   for _ in range(rng.randint(1, 3))]  # fmt: skip
        pieces = [s[: rng.randint(0, len(s))] for s in secrets]
        pieces += [s[rng.randint(0, len(s)) :] for s in secrets] + [" ", '"', "'", "…", "x"]
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        whole = [(m.start(), m.start() + len(s)) for s in secrets
                 for m in re.finditer("(?=" + re.escape(s) + ")", text)]  # fmt: skip
        cut = {i for a, b in [*CutHeads(secrets).spans(text), *whole] for i in range(a, b)}
        assert cut == _by_definition(text, secrets), (text, secrets)
