"""Text whatever its code points: a lone surrogate in a reply, a file name with a byte that is
not UTF-8, are stored (replaced), never raised; the other cells are untouched."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.store import Store
from harness.store._rows import result_row
from harness.store._text import clean_text, utf8
from harness.store._transcript import decode_transcript, encode_transcript
from harness.tools._base import ToolContext
from harness.tools._builtins import ListDirTool
from harness.tools._workspace import Workspace

RowFactory = Callable[..., dict[str, Any]]

LONE = "done \ud83d"


def test_clean_text_replaces_only_what_cannot_be_encoded() -> None:
    assert clean_text("plain é 🙂") == "plain é 🙂"
    assert clean_text(LONE) == "done \ufffd"
    assert clean_text("f\udcff") == "f\ufffd"  # os's surrogateescape of byte \377
    assert utf8("a\ud800b\udcffc") == "a\ufffdb\ufffdc".encode()


def test_a_lone_surrogate_reply_is_stored_and_read_back(store: Store) -> None:
    result = harness.run("q", provider="mock", provider_opts={"turns": [{"text": LONE}]})
    blob = encode_transcript(result.messages)
    doc = decode_transcript(blob)
    assert doc is not None
    assert doc["messages"][-1]["content"] == "done \ufffd"
    run = store.begin_run()
    store.write_result(result_row(result, run_id=run, suite="s", task_id="t", mode="react",
                                  passed=True))  # fmt: skip
    store.finish_run(run)
    ((text,),) = store.con.execute("SELECT text FROM results WHERE run_id = ?", [run]).fetchall()
    assert text == "done \ufffd"


def test_one_bad_cell_does_not_fail_the_batch(store: Store, make_row: RowFactory) -> None:
    run = store.begin_run()
    rows = [
        make_row(run, "bad", text=LONE, deliverable={"answer": "x\udcff"}),
        make_row(run, "good", text="fine"),
    ]
    assert store.write_results(rows) == 2
    store.finish_run(run)
    got = store.con.execute(
        "SELECT task_id, text, deliverable FROM results ORDER BY task_id"
    ).fetchall()
    assert got == [("bad", "done \ufffd", '{"answer":"x\ufffd"}'), ("good", "fine", None)]


@pytest.mark.skipif(os.name != "posix", reason="byte file names")
def test_list_dir_of_a_file_name_with_byte_377_is_text(tmp_path: Path) -> None:
    with open(os.path.join(os.fsencode(tmp_path), b"f\xff"), "w") as fh:
        fh.write("x")
    out = asyncio.run(ListDirTool().run({}, ToolContext(Workspace(tmp_path), "s")))
    assert out == "f\\xff"
    out.encode("utf-8")  # never a lone surrogate


SUITE = r"""
suite: odd
defaults: {tools: [list_dir, shell], max_iterations: 6}
tasks:
  - id: lone
    prompt: "Say done."
    expect: {kind: contains, value: "done"}
    mock: {turns: [{text: "done \ud83d"}]}
  - id: bytes
    prompt: "List."
    expect: {kind: contains, value: "done"}
    mock:
      turns:
        - {tool_calls: [{name: shell, arguments: {command: "touch \"$(printf 'f\\377')\""}}]}
        - {tool_calls: [{name: list_dir, arguments: {}}]}
        - {text: "done"}
  - id: plain
    prompt: "2+2"
    expect: {kind: contains, value: "4"}
    mock: {turns: [{text: "4"}]}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the shell tool needs bwrap")
def test_harness_run_with_odd_text_stores_every_cell(tmp_path: Path) -> None:
    (tmp_path / "odd.yaml").write_text(SUITE)
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "odd.yaml", "--providers", "mock",
         "--modes", "react", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with Store.open(tmp_path / "reports" / "harness.duckdb", read_only=True) as ro:
        rows = ro.con.execute(
            "SELECT task_id, status, text, transcript FROM results ORDER BY task_id"
        ).fetchall()
    assert [r[:3] for r in rows] == [
        ("bytes", "passed", "done"),
        ("lone", "passed", "done \ufffd"),
        ("plain", "passed", "4"),
    ]
    doc = decode_transcript(rows[0][3])
    assert doc is not None
    listed = [m["content"] for m in doc["messages"] if m["role"] == "tool"][-1]
    assert listed == "f\\xff"
