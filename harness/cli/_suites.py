"""``harness suites``: check suite files (``suites validate``) and list tasks a model passes
without doing the work (``suites audit``).
"""

from __future__ import annotations

import click

from harness.cli._common import cut_lines, echo, echo_line

__all__ = ["COMMANDS", "suites", "suites_audit", "suites_schema", "suites_validate"]


@click.group()
def suites() -> None:
    """Check suite files."""


@suites.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def suites_validate(paths: tuple[str, ...]) -> None:
    """Validate suite files (a folder means every *.yaml / *.yml in it).

    Prints one OK line per valid suite; exits 2 with every error (file:line, task, field) if any
    file is invalid or a python grader cannot be imported (from the suite file's folder)."""
    from harness.bench._preflight import check_graders
    from harness.errors import ConfigError
    from harness.suites._load import collect_suites

    found, issues = collect_suites(paths)
    try:
        check_graders(found)  # python graders must import (relative to their suite file)
    except ConfigError as exc:
        issues.extend(str(exc).splitlines())
    for suite in found:
        if any(issue.startswith(f"{suite.source}:") for issue in issues):
            continue
        n = len(suite.tasks)
        echo(f"OK {suite.name}: {n} task{'s' * (n != 1)} ({suite.source})")
    for issue in issues:  # one line each, cut (a value of 1 MB is named in its issue)
        echo_line(cut_lines(issue.replace("\n", "\\n")), err=True)
    if issues:
        raise SystemExit(2)


@suites.command("audit")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def suites_audit(paths: tuple[str, ...]) -> None:
    """List tasks a model passes without doing the work: each task is run against a do-nothing
    model ("I don't know."), one that calls each tool once with empty arguments, then stops, and
    one that answers with the prompt (with and without the empty calls), and the trick models:
    empty calls then failure phrases, reading the files the prompt names then echoing them, the
    prompt in pieces under 12 characters, "It is not X; the answer is X+1" (X from the mock
    script) and the answer's number in another unit; the task's scripted reviewer (approvals:)
    answers their paused calls.

    Exits 1 when any task passes either (unless the task says `audit: {allow: true, reason:
    ...}`), 2 on bad input, 0 otherwise."""
    from rich.table import Table

    from harness.cli._console import SafeConsole
    from harness.errors import HarnessError
    from harness.suites._audit import ADVERSARIES, audit_suites
    from harness.suites._load import load_suites

    console = SafeConsole()
    try:
        found = load_suites(paths)
    except HarnessError as exc:
        echo(cut_lines(f"error: {exc}"), err=True)
        raise SystemExit(2) from None
    report = audit_suites(found)
    if report.findings:
        table = Table(title="Tasks passed")
        for header, cells in (
            ("suite", [f.suite for f in report.findings]),
            ("task", [f.task_id for f in report.findings]),
            ("adversary", [f.adversary for f in report.findings]),
        ):  # names whole, never cut: they are what a reader searches for
            table.add_column(header, no_wrap=True, min_width=max(len(c) for c in cells))
        table.add_column("allowed")
        table.add_column("grader said")
        for f in report.findings:
            allowed = f"yes: {f.reason}" if f.allowed else "NO"
            table.add_row(f.suite, f.task_id, f.adversary, allowed, f.explanation)
        console.print(table)
    for adversary in ADVERSARIES:
        n = report.passed[adversary]
        skipped = report.skipped[adversary]
        tried = report.tasks - skipped
        share = n / tried if tried else 0.0
        rest = f"; not applicable to {skipped}" if skipped else ""
        console.print(f"{adversary}: passes {n} of {tried} tasks ({share:.1%}){rest}")
    if report.failing:
        console.print(f"[red]{len(report.failing)} task(s) pass without the model's work[/]")
    raise SystemExit(report.exit_code)


#: The commands this module adds to the root group.
@suites.command("schema")
def suites_schema() -> None:
    """Print the suite file's JSON Schema (every registered grader kind included), for editors
    that validate YAML: e.g. `harness suites schema > suite.schema.json`."""
    import json

    from harness.suites._schema import suite_json_schema

    echo(json.dumps(suite_json_schema(), indent=2, sort_keys=True))


COMMANDS: tuple[click.Command, ...] = (suites,)
