"""``harness report``: write report.md, a self-contained report.html and/or report.json for a
run (``--format md,html,json``; JSON Schema in docs/report-schema.json).

Exit codes: 0 success, 2 bad input (the message names the file, run or field).
"""

from __future__ import annotations

import click

from harness.cli._common import baseline_arg, check_out_dir, db_options, echo, guarded, load, warn

__all__ = ["COMMANDS", "report"]


@click.command("report")
@db_options
@click.option(
    "--baseline",
    "baseline_ref",
    default=None,
    metavar="ID|FILE",
    help="Compare cell by cell with another run id or a baseline JSON file.",
)
@click.option(
    "--out",
    default="reports",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for report.md and report.html.",
)
@click.option(
    "--format",
    "formats",
    default="md,html",
    show_default=True,
    metavar="md,html,json",
    help="Which files to write, comma-separated: report.md, report.html, report.json.",
)
@click.option("--title", default=None, help="Report title (default: 'harness report — RUN').")
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")
@click.option(
    "--resamples",
    default=2000,
    show_default=True,
    type=click.IntRange(100, 100_000),
    help="Bootstrap resamples.",
)
def report(
    db: str,
    run: str,
    baseline_ref: str | None,
    out: str,
    formats: str,
    title: str | None,
    seed: int,
    resamples: int,
) -> None:
    """Write report.md, a self-contained report.html and/or report.json for a run."""

    def action() -> int:
        from harness.errors import ConfigError
        from harness.report._build import build_report
        from harness.report._render import FORMATS, write_report

        wanted = [f.strip().lower() for f in formats.split(",") if f.strip()]
        bad = [f for f in wanted if f not in FORMATS]
        if bad or not wanted:
            raise ConfigError(
                f"--format {formats}: expected a comma-separated list of {', '.join(FORMATS)}"
            )
        check_out_dir(out)  # before any work: a bad --out is bad input (exit 2)
        run_id, frame = load(db, run)
        base, label = baseline_arg(db, baseline_ref) if baseline_ref else (None, None)
        rep = build_report(
            frame,
            base,
            title=title or f"harness report — {run_id}",
            baseline_label=label,
            n_resamples=resamples,
            seed=seed,
        )
        paths = write_report(rep, out, wanted)
        for line in rep.headline:  # the verdict per real provider, then every comparison
            echo(line)
        for verdict in rep.comparisons["verdict"].tolist():
            echo(verdict)
        for warning in rep.warnings:
            warn(warning)
        names = [str(p) for p in paths.values()]
        written = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
        echo(f"wrote {written} ({rep.n_results} results)")
        return 0

    raise SystemExit(guarded(action))


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (report,)
