"""Executor plug-ins that end oddly (adversary round 11 part A, issue 34 item 16).

Before: an executor whose ``run`` raised ``GeneratorExit`` or a ``BaseException`` subclass of
its own made ``harness run`` end in a traceback, exit 1; one that blocked the event loop
(``time.sleep``) once its cells were stored could be ended by three Ctrl-C but never by SIGTERM
(what ``timeout``, a CI cancel and ``docker stop`` send): four SIGTERMs did nothing, only
SIGKILL ended it. The real CLI runs in this process (click's runner), and in a subprocess for
the signals, on the in-process mock provider."""

from __future__ import annotations

import signal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.signalled_run import run_and_signal

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
  - {id: b, prompt: hi, expect: {kind: contains, value: zz}, mock: {turns: [{text: hi}]}}
"""

PLUGIN = """\
import time

from harness.bench import Runner
from tests.bench.executor_wrap import wrap as _wrap


class Boom(BaseException):
    pass


async def _generator_exit(options, sink, cells, on):
    await Runner(options, sink).run(cells[:1], on)
    raise GeneratorExit("mine")


async def _boom(options, sink, cells, on):
    await Runner(options, sink).run(cells[:1], on)
    raise Boom("mine")


async def _blocks(options, sink, cells, on):
    await Runner(options, sink).run(cells, on)
    print("STORED", flush=True)
    time.sleep(1000)


generator_exit = _wrap(_generator_exit)
boom = _wrap(_boom)
blocks = _wrap(_blocks)
"""


def _write(tmp_path: Path, module: str) -> None:
    (tmp_path / f"{module}.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize(("factory", "name"), [("generator_exit", "GeneratorExit"),
                                               ("boom", "Boom")])  # fmt: skip
def test_run_raising_a_base_exception_is_a_crash_of_the_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str, name: str
) -> None:
    module = f"odd11_{factory}"
    _write(tmp_path, module)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--executor", f"{module}:{factory}", "--label", "L"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    out = " ".join(done.output.split())
    assert "Traceback" not in out
    assert done.exit_code == 3, out  # before: the exception left the CLI, exit 1
    assert f"raised {name}: mine" in out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status FROM results").fetchall()
    assert rows == [("a", "passed")]


@pytest.mark.timeout(600)
def test_sigterm_ends_a_run_whose_executor_holds_the_event_loop(tmp_path: Path) -> None:
    _write(tmp_path, "odd11_block")
    # once the cells are stored and the loop is held; before: it ran on through any number
    code, rest = run_and_signal(
        tmp_path,
        "odd11_block:blocks",
        ready="STORED",
        signum=signal.SIGTERM,
        times=3,
        before_s=0.5,
        between_s=0.5,
    )
    assert "Traceback" not in rest
    assert code in (0, 130), rest  # every cell was stored before the signals
    assert "raised KeyboardInterrupt: the run stops as on Ctrl-C" in " ".join(rest.split())
