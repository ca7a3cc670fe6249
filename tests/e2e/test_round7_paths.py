"""FIFOs, links and devices as paths, the attacks of adversary round 7 (issue 34) that were
written but not finished then: a link and a FIFO at ``report.html``, ``--out /dev/null``,
``traces show`` of a FIFO and of ``/dev/zero``, a FIFO as a suite's ``tools_module``, as a
``module:function`` tool's module and as a python grader's module, ``--baseline /dev/zero``, and
``--trace-file`` as a link.

Each goes through the real CLI in a subprocess with a timeout, so a hang fails the test instead
of stalling it. The rule: a name the harness owns is replaced, never followed (report files are
written under a temporary name and renamed); a FIFO or a device where a file is read is refused
at once, exit 2, one line naming the file and what it is; a path the user names for output
(``--trace-file``) may be a link, and is followed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.e2e.test_round5_paths import _harness, _run_args

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real subprocesses, on a busy machine

_WAIT = 300  # seconds before a hang fails the test (a refusal takes about one)


def _flat(text: str) -> str:
    return " ".join(text.split())  # rich and click wrap long lines


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with one run of two mock cells."""
    folder = tmp_path_factory.mktemp("stored")
    result = CliRunner().invoke(main, _run_args(folder))
    assert result.exit_code == 0, result.output
    return folder / "h.duckdb"


@pytest.mark.parametrize("what", ["link", "fifo", "folder"])
def test_a_report_file_at_a_link_or_fifo_is_replaced_not_followed(
    tmp_path: Path, stored: Path, what: str
) -> None:
    """Round 7 (held): ``report.html`` in ``--out`` as a link to a file outside, or as a FIFO,
    is replaced by the report (renamed over it); the link's target is untouched, nothing blocks.
    A folder there cannot be replaced: one line, exit 2."""
    out = tmp_path / "rep"
    out.mkdir()
    victim = tmp_path / "outside.html"
    victim.write_text("keep me\n")
    at = out / "report.html"
    if what == "link":
        at.symlink_to(victim)
    elif what == "fifo":
        os.mkfifo(at)
    else:
        at.mkdir()
    done = _harness(tmp_path, "report", "--db", str(stored), "--out", str(out), timeout=_WAIT)
    assert "Traceback" not in done.stderr
    assert victim.read_text() == "keep me\n"
    if what == "folder":
        assert done.returncode == 2, done.stderr
        assert "report.html" in _flat(done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
        return
    assert done.returncode == 0, done.stderr
    assert not at.is_symlink()
    assert at.is_file()
    assert "<html" in at.read_text(encoding="utf-8").lower()


def test_out_that_is_a_device_is_no_folder(tmp_path: Path, stored: Path) -> None:
    """Round 7: ``--out /dev/null`` said ``cannot write there (File exists)``."""
    done = _harness(tmp_path, "report", "--db", str(stored), "--out", os.devnull, timeout=_WAIT)
    assert done.returncode == 2, done.stderr
    assert "--out /dev/null: is a character device, not a folder" in _flat(done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("what", ["fifo", "dev-zero"])
def test_traces_show_refuses_a_fifo_or_a_device_at_once(
    tmp_path: Path, stored: Path, what: str
) -> None:
    """Round 7: ``harness traces show`` of a FIFO and of ``/dev/zero`` hung until killed."""
    if what == "fifo":
        path = tmp_path / "spans.jsonl"
        os.mkfifo(path)
        said = f"{path} is a FIFO, not a regular file"
    else:
        path = Path("/dev/zero")
        said = "/dev/zero is a character device, not a regular file"
    done = _harness(tmp_path, "traces", "show", str(path), "--db", str(stored), timeout=_WAIT)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert said in _flat(done.stdout)


_TASK = "tasks:\n  - id: a\n    prompt: hi\n    expect: {kind: contains, value: x}\n"
_SUITES = {
    "tools_module": ("mytools.py", "suite: s\ntools_module: mytools.py\n" + _TASK),
    "tool-ref": ("mytools.py", "suite: s\ndefaults: {tools: ['mytools:probe']}\n" + _TASK),
    "grader": (
        "gmod.py",
        "suite: s\ntasks:\n  - id: a\n    prompt: hi\n"
        "    expect: {kind: python, function: 'gmod:grade'}\n",
    ),
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("what", sorted(_SUITES))
def test_a_fifo_as_a_suites_python_module_is_refused_at_once(
    tmp_path: Path, what: str, command: str
) -> None:
    """Round 7: a FIFO as a suite's ``tools_module`` was ``not found beside the suite``, as a
    ``module:function`` tool's or a python grader's module ``No module named ...`` (Python's
    import passes over a FIFO): now each names the file and what it is, exit 2."""
    module, text = _SUITES[what]
    os.mkfifo(tmp_path / module)
    (tmp_path / "s.yaml").write_text(text + "    mock: {turns: [{text: x}]}\n", encoding="utf-8")
    if command == "validate":
        args = ["suites", "validate", "s.yaml"]
    else:
        args = ["run", "s.yaml", "--providers", "mock", "--modes", "react", "--no-progress",
                "--db", "h.duckdb", "--trace-file", "t.jsonl"]  # fmt: skip
    done = _harness(tmp_path, *args, timeout=_WAIT)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{tmp_path / module} is a FIFO, not a regular file" in _flat(done.stderr)
    assert not (tmp_path / "h.duckdb").exists()


@pytest.mark.parametrize("command", ["gate", "report"])
def test_dev_zero_as_baseline_is_refused(tmp_path: Path, stored: Path, command: str) -> None:
    """Round 7: ``gate --baseline /dev/zero`` held; ``report --baseline /dev/zero`` took it for a
    run id (``no run '/dev/zero' in the database``)."""
    args = [command, "--db", str(stored), "--baseline", "/dev/zero"]
    if command == "report":
        args += ["--out", str(tmp_path / "rep")]
    done = _harness(tmp_path, *args, timeout=_WAIT)
    assert done.returncode == 2, done.stderr
    assert "/dev/zero is a character device, not a regular file" in _flat(done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("target", ["file", "devnull"])
def test_a_trace_file_that_is_a_link_is_followed(tmp_path: Path, target: str) -> None:
    """Round 7 (held, by design): ``--trace-file`` is a path the user names, so a link there is
    followed: the spans go to its target (a file elsewhere, or ``/dev/null``: then none are
    ingested), and the link stays."""
    link = tmp_path / "link.jsonl"
    elsewhere = tmp_path / "elsewhere" / "spans.jsonl"
    if target == "file":
        elsewhere.parent.mkdir()
        elsewhere.write_text("")
        link.symlink_to(elsewhere)
    else:
        link.symlink_to(os.devnull)
    args = [a if a != str(tmp_path / "t.jsonl") else str(link) for a in _run_args(tmp_path)]
    done = _harness(tmp_path, *args, timeout=_WAIT)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink()
    spans = re.search(r"(\d+) spans ->", _flat(done.stderr))
    assert spans is not None, done.stderr
    if target == "file":
        assert elsewhere.stat().st_size > 0
        assert int(spans[1]) > 0
    else:
        assert int(spans[1]) == 0
