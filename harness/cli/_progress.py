"""The terminal side of ``harness run``: the progress bar and the Ctrl-C / SIGTERM handling.

:func:`drive` is what the CLI passes to :func:`harness.bench._session.run_bench` as ``drive=``: it
runs the matrix on a fresh event loop, asks the runner to stop gracefully on SIGINT, SIGTERM or
SIGHUP (unless ignored, as under ``nohup``; finished cells are kept; the run is closed as
interrupted, exit 130), and shows a bar of cells done, passed, failed and cost so far.
:func:`show_log` prints the bench's warnings and notes (the ``harness.bench`` logger) on the
same console. The bench itself knows nothing of terminals or
signals.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import signal
import time
from collections.abc import Iterator, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness._sync import close_loop
from harness.bench._matrix import Cell
from harness.bench._runner import CellOutcome, Executor, MatrixSummary, OnOutcome

__all__ = [
    "CANCEL_GRACE_S",
    "HARD_STOP_SIGNALS",
    "HELD_S",
    "closing_run",
    "drive",
    "progress_bar",
    "show_log",
]


class _ConsoleHandler(logging.Handler):
    """Log records as console lines: ``warning: ...`` in yellow, notes plain."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.INFO)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = escape(record.getMessage())
            if record.levelno >= logging.ERROR:
                text = f"[red]error:[/] {text}"
            elif record.levelno >= logging.WARNING:
                text = f"[yellow]warning:[/] {text}"
            self.console.print(text)
        except Exception:  # a log line must never end a run
            self.handleError(record)


@contextlib.contextmanager
def show_log(
    console: Console, names: tuple[str, ...] = ("harness.bench", "harness.suites")
) -> Iterator[None]:
    """Show the records of the loggers ``names`` (INFO and up) on ``console`` in the block."""
    handler = _ConsoleHandler(console)
    loggers = [logging.getLogger(name) for name in names]
    saved = [(logger.level, logger.propagate) for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False  # shown here, not again by a root handler
    try:
        yield
    finally:
        for logger, (level, propagate) in zip(loggers, saved, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate


#: SIGINT or SIGTERM the event loop has not handled (plug-in code holds it) before the blocking
#: code is interrupted with ``KeyboardInterrupt`` (SIGTERM too: ``timeout``, CI cancels and
#: ``docker stop`` send it, and a held loop never heard it).
HARD_STOP_SIGNALS = 3
#: Seconds without a turn of the event loop after which it counts as held by plug-in code.
HELD_S = 1.0

#: After a second SIGINT, how long the runner's tasks get to end once cancelled (the Ray
#: executor's own closing waits up to 10 s for its actors) before they are left behind.
CANCEL_GRACE_S = 15.0


def drive(
    runner: Executor, cells: Sequence[Cell], console: Console, progress: bool
) -> MatrixSummary:
    """Run ``cells`` to the end, or until SIGINT/SIGTERM asks the runner to stop (the handlers
    are removed afterwards), with a progress bar on ``console`` when ``progress`` is true.

    A second signal stops waiting for the runner (an executor plug-in that ignores
    ``request_stop`` and refuses to be cancelled kept ``harness run`` alive through any number
    of Ctrl-C): the run ends interrupted with the cells stored so far, its tasks left behind."""

    # asyncio's remove_signal_handler puts Python's default back, not what was there before
    # (e.g. SIG_IGN under nohup): restore the handlers we found.
    before = {sig: signal.getsignal(sig) for sig in _stop_signals()}
    signals = 0
    unseen = 0  # signals the event loop has not handled yet
    beat = time.monotonic()  # when the event loop last ran (a heartbeat)

    def hard_stop(signum: int, frame: object) -> None:
        """Python's own SIGINT/SIGTERM handler, run between bytecodes even while plug-in code
        holds the event loop (``time.sleep`` in an executor): the loop's handler cannot run
        then, so after :data:`HARD_STOP_SIGNALS` unseen signals, or two while the loop has not
        run for :data:`HELD_S` (signals sent close together under load arrive as one), the
        blocking code gets the ``KeyboardInterrupt`` (the run ends interrupted; stored cells
        are kept)."""
        nonlocal unseen
        unseen += 1
        held = time.monotonic() - beat > HELD_S
        if unseen >= HARD_STOP_SIGNALS or (unseen >= 2 and held):
            raise KeyboardInterrupt

    async def main() -> MatrixSummary:
        loop = asyncio.get_running_loop()
        given_up = asyncio.Event()

        def heartbeat() -> None:
            nonlocal beat
            beat = time.monotonic()
            loop.call_later(HELD_S / 4, heartbeat)

        heartbeat()

        def stop() -> None:
            nonlocal signals, unseen
            signals += 1
            unseen = 0
            if signals == 1:
                runner.request_stop()
            else:
                given_up.set()

        with contextlib.suppress(NotImplementedError, RuntimeError):
            for sig in before:
                loop.add_signal_handler(sig, stop)
                # The loop still hears it through its wakeup fd; this handler runs as well.
                signal.signal(sig, hard_stop)
        try:
            with progress_bar(console, len(cells), progress) as update:
                running = asyncio.ensure_future(runner.run(cells, update))
                while not running.done() and not given_up.is_set():
                    # A wait a cell's code cancelled is waited again: the run ended
                    # interrupted, "a second signal" (adversary round 19, part A).
                    waiting = asyncio.ensure_future(given_up.wait())
                    await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
                    waiting.cancel()
                if running.done():
                    return running.result()
                running.cancel()
                console.print("stopped waiting for the executor (a second signal)")
                return MatrixSummary(total=len(cells), interrupted=True)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                for sig in before:
                    loop.remove_signal_handler(sig)  # puts the default back: not while closing
                    signal.signal(sig, _late if _CLOSING else hard_stop)

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        _close(loop)
        for sig, handler in before.items():
            late = _late if _CLOSING else handler  # the run is being closed: see closing_run
            if late is not None:
                with contextlib.suppress(ValueError, OSError):
                    signal.signal(sig, late)


#: Whether a :func:`closing_run` block is open (:func:`drive` then leaves :func:`_late` behind).
_CLOSING: list[bool] = []
_late_count = [0]


def _late(signum: int, frame: object) -> None:
    """A stop signal after the run's loop ended, while the run is closed (its folder removed,
    spans ingested, its row finished): taken as said already, up to :data:`HARD_STOP_SIGNALS`
    of them. With the default handler back, a third SIGTERM sent after the second had stopped
    the run killed the process there (exit -15), the run left ``running``."""
    _late_count[0] += 1
    if _late_count[0] >= HARD_STOP_SIGNALS:
        raise KeyboardInterrupt


def _early(signum: int, frame: object) -> None:
    """SIGTERM or SIGHUP before :func:`drive` runs (suites loading, the pre-flight of a live
    provider, up to its timeout per provider): as Ctrl-C there, ``KeyboardInterrupt`` (the run
    closed ``interrupted``, exit 130). Their default killed the process (exit -15, the run
    left ``running``, no word said; adversary round 20, part A)."""
    raise KeyboardInterrupt


@contextlib.contextmanager
def closing_run(*, hold: bool = False) -> Iterator[None]:
    """Around a whole ``run_bench``: a stop signal arriving after :func:`drive` has returned
    does not kill the run as it closes (:func:`_late`). The handlers found are put back at the
    end, or with ``hold`` (``harness run``, which exits next) :func:`_late` stays: a signal
    during the process's exit (its workers stopped) left a finished run's exit status -15."""
    before = {sig: signal.getsignal(sig) for sig in _stop_signals()}
    for sig, handler in before.items():
        if handler is signal.SIG_DFL or handler is _late:  # before drive() too: see _early
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, _early)
    _CLOSING.append(True)
    _late_count[0] = 0
    try:
        yield
    finally:
        _CLOSING.pop()
        for sig, handler in before.items():
            kept = _late if hold and signal.getsignal(sig) is _late else handler
            if kept is not None:
                with contextlib.suppress(ValueError, OSError):
                    signal.signal(sig, kept)


#: Set once ``harness run`` (the command being the process) has ended: see :func:`deaf_at_exit`.
_DEAF_AT_EXIT: list[bool] = []


def deaf_at_exit() -> None:
    """SIGINT ignored once the exit hooks have run (:func:`_deaf`, registered before any
    plug-in's): Python puts a signal's default back as it ends (not for an ignored one), and a
    Ctrl-C then killed a finished run's process, its status a death by SIGINT (-2, the shell's
    130) instead of its code (adversary round 19, part A). Till then Ctrl-C is as it was."""
    _DEAF_AT_EXIT.append(True)


@atexit.register
def _deaf() -> None:
    if _DEAF_AT_EXIT:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_signals() -> list[signal.Signals]:
    """The signals that stop a run as Ctrl-C does: SIGINT, SIGTERM and SIGHUP (a closed terminal
    or a dropped SSH session: its default killed the process at once, exit 129, the run left
    ``running`` and its workspaces on disk), unless SIGHUP is ignored (``nohup``)."""
    stops = [signal.SIGINT, signal.SIGTERM]
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is not None and signal.getsignal(hangup) is not signal.SIG_IGN:
        stops.append(hangup)
    return stops


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does at its end, but never waiting on a task that refuses to be
    cancelled for more than :data:`CANCEL_GRACE_S` (then it is left behind)."""
    close_loop(loop, CANCEL_GRACE_S)


@contextlib.contextmanager
def progress_bar(console: Console, total: int, enabled: bool) -> Iterator[OnOutcome | None]:
    """A bar of ``total`` cells on ``console``; yields the runner's per-cell callback (``None``
    when not ``enabled``, so nothing is drawn)."""
    if not enabled:
        yield None
        return
    bar = Progress(
        TextColumn("[bold]cells"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed[/]"),
        TextColumn("${task.fields[cost]:.4f}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    task = bar.add_task("cells", total=total, passed=0, failed=0, cost=0.0)

    def update(outcome: CellOutcome, summary: MatrixSummary) -> None:
        bar.update(
            task,
            completed=summary.done,
            passed=summary.passed,
            failed=summary.failed,
            cost=summary.cost_usd,
        )

    with bar:
        yield update
