"""Faults found by adversary round 11, part B (issue 34), through the real CLI: click's runner
in this process, or a subprocess where a stream is the point. Each test fails on the code
before the round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one run of one cell."""
    folder = tmp_path_factory.mktemp("stored")
    done = CliRunner().invoke(main, ["run", str(SUITE), "--providers", "mock", "--modes",
                                     "react", "--db", str(folder / "h.duckdb"), "--no-progress",
                                     "--tasks", "add-small"])  # fmt: skip
    assert done.exit_code == 0, done.output
    return folder


@pytest.mark.parametrize("via", ["link to fd 1", "folder link to fds"])
def test_baseline_save_to_standard_output_sent_to_a_file_writes_the_json_there(
    stored: Path, via: str
) -> None:
    """Before: ``-o /dev/stdout > b.json`` (here a link of the test's own to ``/proc/self/fd/1``,
    and ``fds/1`` with ``fds`` a link to ``/proc/self/fd``, as ``/dev/fd`` is) took the output
    for a regular file, since the link chain ends at ``b.json``: it was renamed over the link
    (``/dev/stdout`` itself, as root) and ``b.json`` got only the "wrote" line; or, through
    the folder link, a temporary file could not be made in ``/proc``. Now the JSON is written
    into standard output, the "wrote" line goes to standard error."""
    if via == "link to fd 1":
        output = stored / "stdout-link"
        output.unlink(missing_ok=True)
        output.symlink_to("/proc/self/fd/1")
    else:
        fds = stored / "fds"
        fds.unlink(missing_ok=True)
        fds.symlink_to("/proc/self/fd")
        output = fds / "1"
    sent = stored / f"b-{via.replace(' ', '-')}.json"
    with sent.open("wb") as out:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "baseline",
                "save",
                "--db",
                str(stored / "h.duckdb"),
                "-o",
                str(output),
            ],
            stdout=out,
            stderr=subprocess.PIPE,
            timeout=120,
            text=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(sent.read_text())["totals"]["cells"] == 1
    assert f"wrote {output}" in done.stderr
    if via == "link to fd 1":
        assert os.readlink(output) == "/proc/self/fd/1"  # the link is still there


def test_a_run_whose_trace_file_is_dev_zero_ends(tmp_path: Path) -> None:
    """Before: the span file is followed into the store as it grows, and ``--trace-file
    /dev/zero`` (a device, accepted as ``/dev/null`` is) was read back: endless zeros, one
    endless line skipped 4 MB at a time, so the run never ended once its cells were stored
    (killed at 40 s). A device or a FIFO is now not read back: the run ends, its cell stored."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            str(SUITE),
            "--providers",
            "mock",
            "--modes",
            "react",
            "--no-progress",
            "--tasks",
            "add-small",
            "--db",
            str(tmp_path / "h.duckdb"),
            "--trace-file",
            "/dev/zero",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "1/1 cells, 1 passed" in " ".join((done.stdout + done.stderr).split())


@pytest.mark.parametrize("command", ["coverage", "lint"])
def test_cassettes_of_a_fifo_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    """Before: ``cassettes coverage FIFO`` ended in a ``ConfigError`` traceback, exit 1 (and both
    commands said ``cassettes lint: ... is not a directory or a file``)."""
    fifo = tmp_path / "c.fifo"
    os.mkfifo(fifo)
    done = CliRunner().invoke(main, ["cassettes", command, str(fifo)])
    assert done.exit_code == 2, (done.output, done.exception)
    assert f"{fifo} is a FIFO, not a folder of cassettes or a cassette file" in done.output


@pytest.mark.parametrize("command", ["gate", "report"])
@pytest.mark.parametrize("key", ["task_id", "suite"])
def test_a_baseline_name_holding_a_lone_surrogate_is_bad_input(
    stored: Path, tmp_path: Path, command: str, key: str
) -> None:
    """Before: a baseline cell whose ``task_id`` or ``suite`` spells a lone surrogate as a JSON
    escape (``"\\ud800"``, valid JSON) was taken, then failed as it was encoded: a
    ``UnicodeEncodeError`` traceback, exit 1, in ``gate`` and ``report --baseline``."""
    saved = tmp_path / "b.json"
    done = CliRunner().invoke(main, ["baseline", "save", "--db", str(stored / "h.duckdb"),
                                     "-o", str(saved)])  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads(saved.read_text())
    doc["cells"][0][key] = "ab\ud800"
    saved.write_text(json.dumps(doc))  # written as the escape \ud800
    out = str(tmp_path / "r")
    args = {"gate": ["gate", "--baseline", str(saved)],
            "report": ["report", "--baseline", str(saved), "--out", out]}  # fmt: skip
    done = CliRunner().invoke(main, [*args[command], "--db", str(stored / "h.duckdb")])
    assert done.exit_code == 2, (done.output, done.exception)
    assert f"field cells[0].{key}: a lone surrogate at character 2, not text" in " ".join(
        done.output.split()
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [("http://[::1/{trace_id}", "Invalid IPv6 URL"), ("http://x:99999/{trace_id}", "Port")],
)
def test_a_trace_url_that_urlsplit_cannot_read_is_refused(
    stored: Path, url: str, said: str
) -> None:
    """Before: ``--trace-url 'http://[::1/{trace_id}'`` was a ``ValueError`` traceback from
    ``urlsplit``, exit 1 (and a port out of range was taken)."""
    done = CliRunner().invoke(main, ["view", "--db", str(stored / "h.duckdb"), "--port",
                                     "18779", "--warm", "0", "--trace-url", url])  # fmt: skip
    assert done.exit_code == 2, (done.output, done.exception)
    assert f"--trace-url {url}: not an address ({said}" in " ".join(done.output.split())


@pytest.mark.parametrize("name", [".", "./.", "x" * 300])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_workspace_file_that_cannot_be_made_is_refused_by_validate(
    tmp_path: Path, name: str, command: str
) -> None:
    """Before: ``workspace.files`` naming ``.`` (the workspace itself) or holding a name over
    255 bytes passed ``suites validate`` (exit 0), and ``run`` made an error cell
    (``AssertionError``; ``File name too long``), exit 3. Now both refuse it, exit 2."""
    suite = tmp_path / "w.yaml"
    suite.write_text(
        "suite: w\ntasks:\n  - id: t\n    prompt: go\n"
        f"    workspace: {{files: {{{json.dumps(name)}: hello}}}}\n"
        "    expect: {kind: contains, value: x}\n    mock: {turns: [{text: x}]}\n"
    )
    args = {"validate": ["suites", "validate", str(suite)],
            "run": ["run", str(suite), "--providers", "mock", "--modes", "react",
                    "--no-progress", "--db", str(tmp_path / "h.duckdb")]}  # fmt: skip
    done = CliRunner().invoke(main, args[command])
    assert done.exit_code == 2, (done.output, done.exception)
    said = "names the workspace itself" if "x" not in name else "longer than 255 bytes"
    assert said in " ".join(done.output.split())


def test_view_on_a_host_that_is_not_utf8_is_one_line(stored: Path) -> None:
    """Before: ``view --host $'\\xff'`` was a ``TypeError`` traceback from the socket's bind
    ("encoding of hostname failed"), exit 1."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "view",
            "--db",
            str(stored / "h.duckdb"),
            "--port",
            "18779",
            "--warm",
            "0",
            "--host",
            os.fsdecode(b"\xff"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "not a host name or address (encoding of hostname failed)" in done.stderr
    assert "Traceback" not in done.stderr
