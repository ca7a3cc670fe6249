"""The diff of a file tool's change (adversary round 12 part A, issue 34 item 2). Before:
``write_file`` and ``edit_file`` computed :func:`difflib.unified_diff` on the event loop, and
its work can be quadratic: a 170 KB file whose new lines interleave with the old ones took 40 s
(4,000 lines: 14 s), every other cell and Ctrl-C waiting. Now the longest-match search is
charged before each step; past its budget the diff is given up (the payload's ``diff`` is
None, as for a file too big to diff), and the write itself is unchanged. The text of every
diff within budget is :func:`difflib.unified_diff`'s."""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest

from harness.tools._base import ToolContext
from harness.tools._builtins import WriteFileTool
from harness.tools._workspace import Workspace


def _interleaved(n: int) -> tuple[str, str]:
    before = "".join(f"{i}\n" for i in range(n))
    after = "".join(f"{x}\n" for i in range(n) for x in (i, i + n))[: len(before)]
    return before, after


async def test_a_write_whose_diff_is_too_dear_keeps_the_write_and_gives_up_the_diff(
    tmp_path: Path,
) -> None:
    before, after = _interleaved(8000)
    (tmp_path / "f.txt").write_text(before)
    ctx = ToolContext(Workspace(tmp_path), "s")
    out = await WriteFileTool().run({"path": "f.txt", "content": after}, ctx)
    assert out.content == f"wrote {len(after)} bytes to f.txt"
    assert (tmp_path / "f.txt").read_text() == after
    assert out.ui is not None
    assert out.ui.kind == "diff"
    assert out.ui.payload["diff"] is None  # before: the text, after 20 s of CPU on the loop


def test_every_diff_within_budget_is_difflibs() -> None:
    from harness.tools._diff import unified_diff

    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice("abcde") + "\n" for _ in range(rng.randint(0, 60))]
        b = list(a)
        for _ in range(rng.randint(0, 8)):
            i, op = rng.randint(0, len(b)), rng.random()
            if op < 0.4:
                b.insert(i, rng.choice("abcdefg") + "\n")
            elif b:
                b[min(i, len(b) - 1) :] = ["z\n"] if op < 0.7 else b[min(i, len(b) - 1) + 1 :]
        if b and rng.random() < 0.2:
            b[-1] = b[-1].rstrip("\n")
        assert unified_diff(a, b, "a/f", "b/f") == "".join(difflib.unified_diff(a, b, "a/f", "b/f"))


@pytest.mark.parametrize("edits", [1, 200])
def test_ordinary_edits_of_a_long_file_are_diffed(edits: int) -> None:
    from harness.tools._diff import unified_diff

    rng = random.Random(edits)
    a = [f"    x_{rng.randint(0, 10**6)} = compute({i})\n" for i in range(5000)]
    b = list(a)
    for _ in range(edits):
        b[rng.randrange(len(b))] = "    changed()\n"
    assert unified_diff(a, b, "a/f", "b/f") == "".join(difflib.unified_diff(a, b, "a/f", "b/f"))
