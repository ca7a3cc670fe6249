"""``harness baseline save``: write the baseline file the gate compares runs with.

Exit codes: 0 success, 2 bad input (the message names the file, run or field).
"""

from __future__ import annotations

import os

import click

from harness._files import written_as_stream
from harness.cli._common import db_options, echo_line, fail, guarded, load, warn

__all__ = ["COMMANDS", "baseline", "baseline_save_command"]


@click.group("baseline")
def baseline() -> None:
    """Manage the committed baseline the gate compares runs with."""


@baseline.command("save")
@db_options
@click.option(
    "-o",
    "--output",
    default="reports/baseline.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where to write the baseline JSON.",
)
@click.option("--label", default=None, help="A note stored in the file (e.g. the branch).")
def baseline_save_command(db: str, run: str, output: str, label: str | None) -> None:
    """Write the baseline file of a run (one line per cell; commit it)."""

    for guarded_file in (db, f"{db}.wal"):  # -o the database (a slip): it was replaced by the
        if _same_file(output, guarded_file):  # JSON, every run lost (adversary round 20, B)
            fail(f"-o {output} is the results database ({guarded_file}); writing the baseline "
                 "there would replace it: give another file")  # fmt: skip

    def action() -> int:
        from harness.report._baseline import baseline_save
        from harness.report._loader import resolved_run, unfinished

        # The run's state first, its cells after: a run that ended between the two reads was
        # saved with the cells stored before its end, as a finished one (adversary round 17 B)
        run_id = resolved_run(db, run)
        state = unfinished(db, run_id)
        if state is not None and state[0]:  # a baseline of a run still going: partial, silently
            fail(f"run {run_id}: {state[1]}; its baseline would hold only the cells stored so "
                 "far: save it once the run has ended")  # fmt: skip
        run_id, frame = load(db, run_id)
        cells = f"the {len(frame)} cells stored so far"
        if state is not None:
            warn(f"run {run_id}: {state[1]}; the baseline holds {cells} (a resumed run gives "
                 "a whole one)")  # fmt: skip
        streamed = written_as_stream(output)  # (before: a file made by the write is none)
        doc = baseline_save(frame, output, run_id=run_id, label=label)
        totals = doc["totals"]
        said = f"wrote {output}: run {run_id}, {totals['cells']} cells, {totals['passed']} passed"
        echo_line(said, err=streamed)  # (-o /dev/stdout | jq: the JSON alone on stdout)
        return 0

    raise SystemExit(guarded(action))


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except (OSError, ValueError):
        return False


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (baseline,)
