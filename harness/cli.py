"""The ``harness`` command (thin: parses arguments, calls the packages)."""

from __future__ import annotations

import click

from harness._version import __version__

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
def main() -> None:
    """Evaluate and benchmark LLM agent loops."""


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


@main.command("run")
@click.argument("suite_paths", metavar="SUITE...", nargs=-1, required=True)
@click.option("--modes", default="react,plan_and_solve,reflexion", show_default=True)
@click.option(
    "--providers",
    default="auto",
    show_default=True,
    help="Comma-separated provider specs; 'auto' = mock plus every provider with cassettes.",
)
@click.option("--epochs", default=1, show_default=True, type=click.IntRange(1, 1000))
@click.option("--tasks", default="", help="Comma-separated task ids or globs to run.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 256))
@click.option(
    "--provider-concurrency",
    default=None,
    type=click.IntRange(1, 256),
    help="Cells at once per provider (default: --concurrency; 1 per HTTP provider when recording).",
)
@click.option(
    "--record-mode",
    default="none",
    show_default=True,
    type=click.Choice(["none", "once", "new_episodes", "all"]),
)
@click.option("--cassettes", "cassettes_dir", default="cassettes", show_default=True)
@click.option("--db", default="reports/harness.duckdb", show_default=True)
@click.option("--label", default=None, help="Name for this series of runs (for --resume).")
@click.option("--trace-file", default=None, help="Span file (default reports/traces/RUN.jsonl).")
@click.option("--otlp-endpoint", default=None, help="Also export spans over OTLP to this URL.")
@click.option("--resume", is_flag=True, help="Skip cells already stored under --label.")
@click.option(
    "--retry-errors",
    is_flag=True,
    help="Re-run only the cells of --label's latest runs that errored (status error).",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def run_cmd(
    suite_paths: tuple[str, ...],
    modes: str,
    providers: str,
    epochs: int,
    tasks: str,
    concurrency: int,
    provider_concurrency: int | None,
    record_mode: str,
    cassettes_dir: str,
    db: str,
    label: str | None,
    trace_file: str | None,
    otlp_endpoint: str | None,
    resume: bool,
    retry_errors: bool,
    no_progress: bool,
) -> None:
    """Run SUITE files or folders across modes x providers x epochs; store every cell.

    Exit codes: 0 every cell was scored (failing tasks are data), 2 bad input (checked before
    any cell runs: suites, names, output paths, API keys when recording, python graders),
    3 some cells errored (not scored: listed, stored with their cause; re-run them with
    --retry-errors --label L), 130 interrupted (finished cells are kept)."""
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape

    from harness.bench.session import BenchRequest, run_bench
    from harness.errors import HarnessError

    console = Console(stderr=True)
    if resume and not label:
        raise click.BadParameter("--resume needs --label", param_hint="--resume")
    if retry_errors and not label:
        raise click.BadParameter("--retry-errors needs --label", param_hint="--retry-errors")
    try:
        report = run_bench(
            BenchRequest(
                suites=suite_paths,
                modes=_csv(modes),
                providers=_csv(providers),
                epochs=epochs,
                tasks=_csv(tasks),
                concurrency=concurrency,
                provider_concurrency=provider_concurrency,
                record_mode=record_mode,
                cassettes=Path(cassettes_dir),
                db=Path(db),
                label=label,
                trace_file=Path(trace_file) if trace_file else None,
                otlp_endpoint=otlp_endpoint,
                resume=resume,
                retry_errors=retry_errors,
                progress=not no_progress,
            ),
            console,
        )
    except HarnessError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise SystemExit(2) from None
    s = report.summary
    console.print(
        f"run {report.run_id}: {s.done}/{s.total} cells, {s.passed} passed, {s.failed} failed, "
        f"{s.errored} errored (not scored), cost ${s.cost_usd:.4f}, {s.elapsed_s:.1f}s "
        f"({s.cells_per_s:.1f} cells/s), {report.spans} spans -> {db}"
    )
    if s.errored:
        console.print(
            f"[red]{s.errored} cell(s) could not be scored[/] (left out of pass rates; "
            "re-run them with --retry-errors --label ...):"
        )
    for line in s.errors[:20]:
        console.print(f"  [red]{escape(line)}[/]")
    if len(s.errors) > 20:
        console.print(f"  ... and {len(s.errors) - 20} more (results.status = 'error' in {db})")
    if s.interrupted:
        console.print(f"[yellow]interrupted:[/] {s.skipped} cells not run; kept what finished")
    # A failing task is data, not an error: 0, or 3 when cells errored, 130 when interrupted.
    raise SystemExit(report.exit_code)


@main.group()
def traces() -> None:
    """Inspect span files written by the tracing setup."""


@traces.command("show")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--run", "run_id", default=None, help="Trace id (or prefix) or session id of a run.")
def traces_show(file: str, run_id: str | None) -> None:
    """Print the span tree of the runs in a JSON-lines span FILE."""
    from harness.telemetry.show import show_traces

    code = show_traces(file, run_id)
    if code:
        raise SystemExit(code)


@main.group()
def cassettes() -> None:
    """Check the VCR cassettes the bench replays."""


@cassettes.command("lint")
@click.argument("directory", default="cassettes", type=click.Path())
@click.option(
    "--traces",
    "traces",
    multiple=True,
    type=click.Path(),
    help="Trace files or folders of *.jsonl to check too (default: reports/traces if present).",
)
def cassettes_lint(directory: str, traces: tuple[str, ...]) -> None:
    """Fail on secret-looking values in the cassettes under DIRECTORY (default ./cassettes)
    and in trace files.

    Exit 0 when clean, 1 on a secret, 2 on a corrupt cassette or a missing DIRECTORY."""
    from pathlib import Path

    from harness.bench.cassette_lint import lint_main

    if not traces and Path("reports/traces").is_dir():
        traces = ("reports/traces",)
    code = lint_main(directory, click.echo, traces)
    if code:
        raise SystemExit(code)


@main.group()
def suites() -> None:
    """Check suite files."""


@suites.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def suites_validate(paths: tuple[str, ...]) -> None:
    """Validate suite files (a folder means every *.yaml / *.yml in it).

    Prints one OK line per valid suite; exits 2 with every error (file:line, task, field) if any
    file is invalid or a python grader cannot be imported (from the suite file's folder)."""
    from harness.bench.preflight import check_graders
    from harness.bench.suite import collect_suites
    from harness.errors import ConfigError

    found, issues = collect_suites(paths)
    try:
        check_graders(found)  # python graders must import (relative to their suite file)
    except ConfigError as exc:
        issues.extend(str(exc).splitlines())
    for suite in found:
        if any(issue.startswith(f"{suite.source}:") for issue in issues):
            continue
        n = len(suite.tasks)
        click.echo(f"OK {suite.name}: {n} task{'s' * (n != 1)} ({suite.source})")
    for issue in issues:
        click.echo(issue, err=True)
    if issues:
        raise SystemExit(2)


@suites.command("audit")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def suites_audit(paths: tuple[str, ...]) -> None:
    """List tasks a model passes without doing the work: each task is run against a do-nothing
    model ("I don't know.") and one that calls each tool once with empty arguments, then stops.

    Exits 1 when any task passes either (unless the task says `audit: {allow: true, reason:
    ...}`), 2 on bad input, 0 otherwise."""
    from rich.console import Console
    from rich.table import Table

    from harness.bench.audit import ADVERSARIES, audit_suites
    from harness.bench.suite import load_suites
    from harness.errors import HarnessError

    console = Console()
    try:
        found = load_suites(paths)
    except HarnessError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None
    report = audit_suites(found)
    if report.findings:
        table = Table("suite", "task", "adversary", "allowed", "grader said", title="Tasks passed")
        for f in report.findings:
            allowed = f"yes: {f.reason}" if f.allowed else "NO"
            table.add_row(f.suite, f.task_id, f.adversary, allowed, f.explanation)
        console.print(table)
    for adversary in ADVERSARIES:
        n = report.passed[adversary]
        share = n / report.tasks if report.tasks else 0.0
        console.print(f"{adversary}: passes {n} of {report.tasks} tasks ({share:.1%})")
    if report.failing:
        console.print(f"[red]{len(report.failing)} task(s) pass without the model's work[/]")
    raise SystemExit(report.exit_code)


def _register_report_commands() -> None:
    from harness.report.cli_commands import baseline, gate, report

    main.add_command(report)
    main.add_command(gate)
    main.add_command(baseline)


_register_report_commands()

if __name__ == "__main__":
    main()
