"""Developer and CI sessions. `nox -s tests` is what CI runs (plus lint and typecheck)."""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_venv = "yes"
# Never download an interpreter: this project runs on the machine's own Python.
os.environ.setdefault("NOX_DOWNLOAD_PYTHON", "never")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite: nox -s tests [-- pytest args]."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + ruff format --check."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", "harness", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "harness", "tests", "benchmarks", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the harness package."""
    session.install("-e", ".[typecheck]")
    session.run("mypy", "harness")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The main job, offline: nox -s bench [-- --modes react,reflexion --epochs 2]."""
    session.install("-e", ".")
    session.run("harness", "demo", *session.posargs)


@nox.session(default=False)
def perf(session: nox.Session) -> None:
    """Kernel and telemetry overhead benchmarks (figures go in docs/performance.md)."""
    session.install("-e", ".")
    session.run("python", "benchmarks/kernel_overhead.py", *session.posargs)
    session.run("python", "benchmarks/telemetry_overhead.py", *session.posargs)
