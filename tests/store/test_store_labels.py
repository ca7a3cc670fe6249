"""One writer per run label (harness/store/_labels.py): a second store beginning a run of a label
another holds is refused at once, naming the holder; the label is free again when the run is
finished, discarded or its store closed; a forked child outliving its parent never keeps it.
The processes of `harness run` are in tests/e2e/test_run_label_lock.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.errors import LabelBusy, StoreLocked
from harness.store import Store
from harness.store._labels import holder_of, label_lock_path

RowFactory = Callable[..., dict[str, Any]]


def test_a_second_store_is_refused_a_running_label_naming_the_holder(
    db_path: Path, make_row: RowFactory
) -> None:
    with Store.open(db_path) as first, Store.open(db_path) as second:
        run = first.begin_run(label="nightly")
        with pytest.raises(LabelBusy) as info:
            second.begin_run(label="nightly", resume=True)
        message = str(info.value)
        assert f"label 'nightly' is being run by pid {os.getpid()}" in message
        assert f"run {run}" in message
        assert "wait for it to end, or use another --label" in message
        assert info.value.pid == os.getpid()
        assert isinstance(info.value, StoreLocked)  # the viewer's and CLI's handling applies
        with pytest.raises(LabelBusy):
            second.begin_run(label="nightly")  # a fresh run of it too
        other = second.begin_run(label="weekly")  # another label is free
        second.finish_run(other)
        first.write_result(make_row(run, "t1"))
        first.finish_run(run)
        again = second.begin_run(label="nightly", resume=True)  # free once finished
        assert again == run
        second.finish_run(again)
    with Store.open(db_path, read_only=True) as ro:
        rows = ro.con.execute("SELECT label, status, resumed FROM bench_runs ORDER BY 1").fetchall()
    assert rows == [("nightly", "finished", 1), ("weekly", "finished", 0)]


def test_the_label_is_free_after_close_or_discard(db_path: Path) -> None:
    first = Store.open(db_path)
    first.begin_run(label="x")
    first.close("interrupted")  # closed without finish_run
    with Store.open(db_path) as store:
        run = store.begin_run(label="x", resume=True)
        assert store.discard_run(run)  # stored nothing: deleted, label free
        with Store.open(db_path) as other:
            other.finish_run(other.begin_run(label="x"))


def test_the_holder_may_begin_runs_of_its_label_again(db_path: Path) -> None:
    with Store.open(db_path) as store:
        a = store.begin_run(label="x")
        b = store.begin_run(label="x")  # nested: the same store holds it
        store.finish_run(a)
        with Store.open(db_path) as other, pytest.raises(LabelBusy):
            other.begin_run(label="x")  # b still holds it
        store.finish_run(b)
        with Store.open(db_path) as other:
            other.finish_run(other.begin_run(label="x"))


def test_lock_files_are_safe_and_distinct_names(tmp_path: Path) -> None:
    labels = ["../../etc/passwd", "a/b", "a_b", "", "nightly \u00e9t\u00e9", "x" * 500, "."]
    paths = [label_lock_path(tmp_path, label) for label in labels]
    assert len(set(paths)) == len(labels)
    for path in paths:
        assert path.parent == tmp_path / "_labels"
        assert len(path.name) < 100
    assert paths[1] != paths[2]  # "a/b" and "a_b" differ by their digest


def test_a_refused_store_changes_nothing(db_path: Path) -> None:
    with Store.open(db_path) as first, Store.open(db_path) as second:
        run = first.begin_run(label="L")
        lock = label_lock_path(db_path.parent / "runs", "L")
        info = holder_of(lock) or {}
        assert (info.get("pid"), info.get("run_id"), info.get("label")) == (os.getpid(), run, "L")
        with pytest.raises(LabelBusy):
            second.begin_run(label="L", resume=True)
        with Store.open(db_path, read_only=True) as ro:
            rows = ro.con.execute("SELECT run_id, status, resumed, pid FROM bench_runs").fetchall()
        assert rows == [(run, "running", 0, os.getpid())]  # not reopened by the refused one
        first.finish_run(run)
    assert holder_of(lock) is None  # emptied on release


CHILD = """
import os, sys, time
from harness.store import Store
store = Store.open(sys.argv[1])
store.begin_run(label="L")
if os.fork() == 0:  # a worker outliving its parent (until the test is done)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # the test reads the parent's output to its end
    os.dup2(null, 2)
    deadline = time.monotonic() + 60
    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.1)
    os._exit(0)
print("forked", flush=True)
os._exit(0)  # the parent dies without closing anything
"""


@pytest.mark.slow
def test_a_forked_child_outliving_its_parent_does_not_keep_the_label(db_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    done = db_path.parent / "child-may-end"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(db_path), str(done)], cwd=root,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    try:
        assert proc.stdout.strip() == "forked", proc.stderr
        with Store.open(db_path) as store:  # the child still lives, the label is free
            run = store.begin_run(label="L", resume=True)
            store.finish_run(run)
    finally:
        done.touch()
    with Store.open(db_path, read_only=True) as ro:
        rows = ro.con.execute("SELECT status, resumed FROM bench_runs").fetchall()
    assert rows == [("finished", 1)]
